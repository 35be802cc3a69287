// @ts-check
// A project's routing (SPEC §6): every catalog event type, further event type and cart-chain step with a
// template picker. Rows without a template stand out; saving replaces the whole routing at once.
import { api, describeError, enc } from '../api.js';
import { badge, checkbox, code, errorBox, fmtMinutes, h, select, table, toast } from '../dom.js';
import { hasKey, t } from '../i18n.js';
import { impactBox, impactOf, uncovered } from './contract.js';

const routedBadge = () => badge(t('routing.routed'), 'ok');
const unroutedBadge = () => badge(t('routing.none'), 'warn');

export async function routingTab(ctx, p, m) {
  const site = p.site_key;
  const [routing, templates] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/routing`),
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
  ]);
  const routes = { ...routing.routes };
  const options = [['', t('routing.noTemplate')], ...templates.items.map((x) => [x.name, x.name])];
  const byName = new Map(templates.items.map((x) => [x.name, x]));
  // SPEC §16: a routed template that needs members the catalog does not announce is marked: sites that
  // follow the catalog alone would be refused (422) until they send them.
  const needsCell = (key, name) => {
    const missing = name ? uncovered(m, key, byName.get(name)) : [];
    return missing.length
      ? h(
          'span',
          { class: 'route-needs', title: t('routing.needsHelp') },
          badge(t('routing.needs'), 'warn'),
          ' ',
          missing.map((n) => [code(n), ' ']),
        )
      : '';
  };
  // The catalog's descriptions come from the server in English; the catalogue has them in every language.
  const about = (e) => (hasKey(`catalog.${e.event_type}`) ? t(`catalog.${e.event_type}`) : e.description);
  const cartSteps = m.cart_types.flatMap((c) =>
    m.cart_steps.map((s) => [
      `${c}_abandoned_cart_${s.step}`,
      t('routing.cartStepAbout', { cart: t(`cart.${c}`), step: fmtMinutes(s.delay_minutes) }),
    ]),
  );
  const rows = [
    ...m.catalog.map((e) => ({ key: e.event_type, kind: t('routing.kind.catalog'), about: about(e) })),
    ...m.extra_event_types.map((x) => ({ key: x, kind: t('routing.kind.further'), about: t('routing.furtherAbout') })),
    ...cartSteps.map(([key, what]) => ({ key, kind: t('routing.kind.cartStep'), about: what })),
  ];
  const status = h('div', { 'aria-live': 'polite' });
  const count = h('p', { class: 'muted' });
  const onlyMissing = checkbox(t('routing.onlyMissing'), false);
  const pickers = new Map();

  const updateCount = () => {
    const routed = rows.filter((r) => pickers.get(r.key).value).length;
    count.textContent = t('routing.count', { routed, total: rows.length, missing: rows.length - routed });
  };
  for (const r of rows) {
    const sel = select(options, routes[r.key] ?? '', {
      'aria-label': t('routing.templateFor', { key: r.key }),
      'data-key': r.key,
    });
    sel.addEventListener('change', () => {
      sel.closest('tr').classList.toggle('missing', !sel.value);
      sel
        .closest('tr')
        .querySelector('.route-state')
        .replaceChildren(sel.value ? routedBadge() : unroutedBadge());
      sel.closest('tr').querySelector('.route-needs-cell').replaceChildren(needsCell(r.key, sel.value));
      updateCount();
    });
    pickers.set(r.key, sel);
  }
  const grid = table(
    [
      { label: t('routing.key'), cell: (r) => code(r.key) },
      { label: t('routing.kind'), cell: (r) => r.kind },
      { label: t('routing.when'), cell: (r) => r.about },
      { label: t('common.template'), cell: (r) => pickers.get(r.key) },
      {
        label: t('routing.state'),
        cell: (r) => h('span', { class: 'route-state' }, routes[r.key] ? routedBadge() : unroutedBadge()),
      },
      {
        label: t('routing.templateNeeds'),
        cell: (r) => h('span', { class: 'route-needs-cell' }, needsCell(r.key, routes[r.key])),
      },
    ],
    rows,
    { rowClass: (r) => (routes[r.key] ? null : 'missing') },
  );
  onlyMissing
    .querySelector('input')
    .addEventListener('change', (ev) => grid.classList.toggle('only-missing', ev.target.checked));
  updateCount();

  async function save(confirm) {
    status.replaceChildren();
    const body = {};
    for (const [key, sel] of pickers) if (sel.value) body[key] = sel.value;
    try {
      await api('PUT', `/api/admin/projects/${enc(site)}/routing`, { routes: body, ...(confirm ? { confirm } : {}) });
      toast(t('routing.saved'));
    } catch (e) {
      const impact = impactOf(e);
      status.append((impact && impactBox(impact, () => save(true))) || errorBox(describeError(e)));
    }
  }
  const form = h(
    'form',
    {
      class: 'stack',
      onsubmit: (ev) => {
        ev.preventDefault();
        void save(false);
      },
    },
    templates.items.length ? null : h('p', { class: 'notice' }, t('routing.noTemplates')),
    count,
    onlyMissing,
    grid,
    status,
    h(
      'div',
      { class: 'actions sticky-actions', 'data-write': true },
      h('button', { type: 'submit', class: 'primary' }, t('routing.save')),
    ),
  );
  return form;
}
