// A project's routing (SPEC §6): every catalog event type, further event type and cart-chain step with a
// template picker. Rows without a template stand out; saving replaces the whole routing at once.
import { api, describeError, enc } from '../api.js';
import { badge, checkbox, code, errorBox, h, select, table, toast } from '../dom.js';

export async function routingTab(ctx, p, m) {
  const site = p.site_key;
  const [routing, templates] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/routing`),
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
  ]);
  const routes = { ...routing.routes };
  const options = [['', '— no template —'], ...templates.items.map((t) => [t.name, t.name])];
  const described = new Map(m.catalog.map((e) => [e.event_type, e.description]));
  const cartSteps = m.cart_types.flatMap((c) =>
    m.cart_steps.map((s) => [`${c}_abandoned_cart_${s.step}`, `${c} cart not paid after ${s.step}`]),
  );
  const rows = [
    ...m.catalog.map((e) => ({ key: e.event_type, kind: 'catalog', about: described.get(e.event_type) })),
    ...m.extra_event_types.map((t) => ({
      key: t,
      kind: 'further',
      about: 'further event type (event_type and email only)',
    })),
    ...cartSteps.map(([key, about]) => ({ key, kind: 'cart step', about })),
  ];
  const status = h('div', { 'aria-live': 'polite' });
  const count = h('p', { class: 'muted' });
  const onlyMissing = checkbox('Show only event types without a template', false);
  const pickers = new Map();

  const updateCount = () => {
    const routed = rows.filter((r) => pickers.get(r.key).value).length;
    count.textContent = `${routed} of ${rows.length} routed; ${rows.length - routed} have no template (their events are accepted and logged, and no e-mail is sent).`;
  };
  for (const r of rows) {
    const sel = select(options, routes[r.key] ?? '', { 'aria-label': `Template for ${r.key}`, 'data-key': r.key });
    sel.addEventListener('change', () => {
      sel.closest('tr').classList.toggle('missing', !sel.value);
      sel
        .closest('tr')
        .querySelector('.route-state')
        .replaceChildren(sel.value ? badge('routed', 'ok') : badge('none'));
      updateCount();
    });
    pickers.set(r.key, sel);
  }
  const grid = table(
    [
      { label: 'Routing key', cell: (r) => code(r.key) },
      { label: 'Kind', cell: (r) => r.kind },
      { label: 'When', cell: (r) => r.about },
      { label: 'Template', cell: (r) => pickers.get(r.key) },
      {
        label: 'State',
        cell: (r) => h('span', { class: 'route-state' }, routes[r.key] ? badge('routed', 'ok') : badge('none')),
      },
    ],
    rows,
    { rowClass: (r) => (routes[r.key] ? null : 'missing') },
  );
  onlyMissing
    .querySelector('input')
    .addEventListener('change', (ev) => grid.classList.toggle('only-missing', ev.target.checked));
  updateCount();

  const form = h(
    'form',
    {
      class: 'stack',
      onsubmit: async (ev) => {
        ev.preventDefault();
        status.replaceChildren();
        const body = {};
        for (const [key, sel] of pickers) if (sel.value) body[key] = sel.value;
        try {
          await api('PUT', `/api/admin/projects/${enc(site)}/routing`, { routes: body });
          toast('Routing saved');
        } catch (e) {
          status.append(errorBox(describeError(e)));
        }
      },
    },
    templates.items.length
      ? null
      : h('p', { class: 'notice' }, 'This project has no templates yet: create them in the Templates tab first.'),
    count,
    onlyMissing,
    grid,
    status,
    h('div', { class: 'actions sticky-actions' }, h('button', { type: 'submit', class: 'primary' }, 'Save routing')),
  );
  return form;
}
