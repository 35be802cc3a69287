// @ts-check
// A project's routing (SPEC §6): every catalog event type, further event type and cart-chain step with a
// template picker. Rows without a template stand out; saving replaces the whole routing at once.
import { api, describeError, enc, qs } from '../api.js';
import { badge, checkbox, code, errorBox, h, select, table, toast } from '../dom.js';
import { t } from '../i18n.js';
import { impactBox, impactOf, uncovered } from './contract.js';
import { routingKeyAbout } from './firstRun.js';

/** @typedef {import('../pageTypes.js').Routing} Routing */
/** @typedef {import('../pageTypes.js').Template} Template */
/**
 * @template T
 * @typedef {import('../pageTypes.js').Items<T>} Items
 */
/**
 * An API key's state and the rights routing reads (schemas/admin.ts KeyView).
 * @typedef {{ status: 'active' | 'disabled',
 *   rights: { allowed_api_events?: string[], allowed_cart_types?: string[] } }} KeyState
 */
/** A starting template of the gallery, for the routing key it is written for (schemas/adminUi.ts). */
/** @typedef {{ routing_key: string, name: string }} GalleryEntry */
/** A row of the routing table: a routing key, its kind, when it happens; `cart`: a cart-chain step. */
/** @typedef {{ key: string, kind: string, about: string, cart?: boolean }} Row */

const routedBadge = () => badge(t('routing.routed'), 'ok');
const unroutedBadge = () => badge(t('routing.none'), 'warn');

/** @type {import('../pageTypes.js').ProjectTab} */
export async function routingTab(ctx, p, m) {
  const site = p.site_key;
  /** @type {[Routing, Items<Template>, Items<KeyState>, Items<GalleryEntry>]} */
  const [routing, templates, keys, gallery] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/routing`),
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
    api('GET', `/api/admin/keys${qs({ site_key: site })}`),
    api('GET', '/api/admin/ui/template-gallery'),
  ]);
  const routes = { ...routing.routes };
  const options = [['', t('routing.noTemplate')], ...templates.items.map((x) => [x.name, x.name])];
  const byName = new Map(templates.items.map((x) => [x.name, x]));
  // SPEC §16: a routed template that needs members the catalog does not announce is marked: sites that
  // follow the catalog alone would be refused (422) until they send them.
  /**
   * @param {string} key routing key
   * @param {string | undefined} name the template routed from it, if any
   */
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
  const cartSteps = m.cart_types.flatMap((c) => m.cart_steps.map((s) => `${c}_abandoned_cart_${s.step}`));
  /** @type {Row[]} */
  const rows = [
    ...m.catalog.map((e) => ({ key: e.event_type, kind: t('routing.kind.catalog') })),
    ...m.extra_event_types.map((x) => ({ key: x, kind: t('routing.kind.further') })),
    ...cartSteps.map((key) => ({ key, kind: t('routing.kind.cartStep'), cart: true })),
  ].map((r) => ({ ...r, about: routingKeyAbout(m, r.key) }));
  // Issue 28: what the project's keys may send comes first, with what is routed, the rest folded. Before
  // any key may send anything: the events whose gallery template the project has (the first-run path
  // creates one), else every event type; cart steps wait under the fold until a key may report carts.
  const active = keys.items.filter((k) => k.status === 'active');
  const events = new Set(active.flatMap((k) => k.rights.allowed_api_events ?? []));
  const carts = new Set(active.flatMap((k) => k.rights.allowed_cart_types ?? []));
  const anyKey = events.size + carts.size > 0;
  const have = new Set(templates.items.map((x) => x.name));
  const suggested = new Set(gallery.items.filter((g) => have.has(g.name)).map((g) => g.routing_key));
  /** @param {Row} r */
  const byKeys = (r) => events.has(r.key) || [...carts].some((c) => r.key.startsWith(`${c}_abandoned_cart_`));
  /** @param {Row} r */
  const byGallery = (r) => (suggested.size ? suggested.has(r.key) : !r.cart);
  /** @param {Row} r */
  const first = (r) => Boolean(routes[r.key]) || (anyKey ? byKeys(r) : byGallery(r));
  const status = h('div', { 'aria-live': 'polite' });
  const count = h('p', { class: 'muted' });
  const onlyMissing = checkbox(t('routing.onlyMissing'), false);
  /** @type {Map<string, HTMLSelectElement>} routing key -> its template picker */
  const pickers = new Map();
  /** @param {Row} r */
  const pickerOf = (r) => /** @type {HTMLSelectElement} */ (pickers.get(r.key));

  const updateCount = () => {
    const routed = rows.filter((r) => pickerOf(r).value).length;
    count.textContent = t('routing.count', { routed, total: rows.length, missing: rows.length - routed });
  };
  for (const r of rows) {
    /** @type {HTMLSelectElement} */
    const sel = select(options, routes[r.key] ?? '', {
      'aria-label': t('routing.templateFor', { key: r.key }),
      'data-key': r.key,
    });
    sel.addEventListener('change', () => {
      // The picker is in its row of the table, which has both cells.
      const row = /** @type {HTMLTableRowElement} */ (sel.closest('tr'));
      row.classList.toggle('missing', !sel.value);
      /** @type {Element} */ (row.querySelector('.route-state')).replaceChildren(
        sel.value ? routedBadge() : unroutedBadge(),
      );
      /** @type {Element} */ (row.querySelector('.route-needs-cell')).replaceChildren(needsCell(r.key, sel.value));
      updateCount();
    });
    pickers.set(r.key, sel);
  }
  /** @type {import('../pageTypes.js').Column<Row>[]} */
  const columns = [
    { label: t('routing.key'), cell: (r) => code(r.key) },
    { label: t('routing.kind'), cell: (r) => r.kind },
    { label: t('routing.when'), cell: (r) => r.about },
    { label: t('common.template'), cell: pickerOf },
    {
      label: t('routing.state'),
      cell: (r) => h('span', { class: 'route-state' }, routes[r.key] ? routedBadge() : unroutedBadge()),
    },
    {
      label: t('routing.templateNeeds'),
      cell: (r) => h('span', { class: 'route-needs-cell' }, needsCell(r.key, routes[r.key])),
    },
  ];
  /** @param {Row[]} part */
  const grid = (part) =>
    table(columns, part, { rowClass: (/** @type {Row} */ r) => (routes[r.key] ? null : 'missing') });
  const main = grid(rows.filter(first));
  const others = rows.filter((r) => !first(r));
  const rest = grid(others);
  const folded = others.length
    ? h(
        'details',
        { class: 'routing-others' },
        h('summary', {}, t('routing.others', { n: others.length })),
        h('p', { class: 'muted' }, anyKey ? t('routing.othersHelpKeys') : t('routing.othersHelp')),
        rest,
      )
    : null;
  const onlyMissingInput = /** @type {HTMLInputElement} */ (onlyMissing.querySelector('input'));
  onlyMissingInput.addEventListener('change', () => {
    for (const g of [main, rest]) g.classList.toggle('only-missing', onlyMissingInput.checked);
  });
  updateCount();

  /** @param {boolean} confirm save although recent requests would then be refused */
  async function save(confirm) {
    status.replaceChildren();
    /** @type {Record<string, string>} */
    const body = {};
    for (const [key, sel] of pickers) if (sel.value) body[key] = sel.value;
    try {
      await api('PUT', `/api/admin/projects/${enc(site)}/routing`, { routes: body, ...(confirm ? { confirm } : {}) });
      toast(t('routing.saved'));
    } catch (e) {
      const impact = impactOf(e);
      status.append((impact && impactBox(impact, () => void save(true))) || errorBox(describeError(e)));
    }
  }
  const form = h(
    'form',
    {
      class: 'stack',
      onsubmit: (/** @type {Event} */ ev) => {
        ev.preventDefault();
        void save(false);
      },
    },
    templates.items.length ? null : h('p', { class: 'notice' }, t('routing.noTemplates')),
    count,
    h('p', { class: 'muted' }, anyKey ? t('routing.firstKeys') : t('routing.firstNoKey')),
    onlyMissing,
    main,
    folded,
    status,
    h(
      'div',
      { class: 'actions sticky-actions', 'data-write': true },
      h('button', { type: 'submit', class: 'primary' }, t('routing.save')),
    ),
  );
  return form;
}
