// @ts-check
// Per-project purchase and cart configuration (SPEC §3, §6): course categories, the address book of
// paid orders per cart type, and the cart chain (the routed 1 h/1 d/3 d steps, or a sequence).
import { api, enc, qs } from '../api.js';
import { badge, code, field, fmtMinutes, h, select, table, toast } from '../dom.js';
import { t } from '../i18n.js';
import { showError } from '../errors.js';

/** @typedef {import('../pageTypes.js').AddressBook} AddressBook */
/** @typedef {import('../pageTypes.js').Template} Template */
/** @typedef {import('../pageTypes.js').Routing} Routing */
/** @typedef {import('../pageTypes.js').Content} Content */
/**
 * @template T
 * @typedef {import('../pageTypes.js').Items<T>} Items
 */
/**
 * @template R
 * @typedef {import('../pageTypes.js').Column<R>} Column
 */
/** A course category: the address book its paid orders join (schemas/admin.ts Category). */
/** @typedef {{ id: string, list_id: number, slug: string, title: string }} Category */
/**
 * A sequence of the project: its steps, each a template after a delay in minutes.
 * @typedef {{ sequence_id: number, name: string, steps: { template_id: number, delay_minutes: number }[] }} Sequence
 */
/** What a cart chain's table shows per step; `key`: the routing key of a routed (default) step. */
/** @typedef {{ when: string, template: string | null, key?: string }} ChainStep */

/**
 * The value of the control named `name` in a row of a form (each row has one of every name).
 * @param {Element} row
 * @param {string} name
 */
const valueIn = (row, name) =>
  /** @type {HTMLInputElement | HTMLSelectElement} */ (row.querySelector(`[name=${name}]`)).value;

/** @param {AddressBook[]} lists */
const listOptions = (lists) => lists.map((l) => [String(l.list_id), `${l.name} (#${l.list_id})`]);

/**
 * A form that saves with `save` and says so, or shows why not.
 * @param {Content} children
 * @param {() => Promise<void>} save
 * @param {string} [label]
 */
function saveForm(children, save, label = t('common.save')) {
  const status = h('div', { 'aria-live': 'polite' });
  return h(
    'form',
    {
      class: 'stack',
      onsubmit: async (/** @type {Event} */ ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          await save();
          toast(t('common.saved'));
        } catch (e) {
          showError(status, e);
        }
      },
    },
    children,
    status,
    h('div', { class: 'actions', 'data-write': true }, h('button', { type: 'submit', class: 'primary' }, label)),
  );
}

/** @type {import('../pageTypes.js').ProjectTab} */
export async function categoriesTab(_ctx, p) {
  const site = p.site_key;
  /** @type {[{ categories: Category[] }, Items<AddressBook>]} */
  const [cats, lists] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/course-categories`),
    api('GET', `/api/admin/projects/${enc(site)}/lists`),
  ]);
  const body = h('tbody', {});
  /** @param {{ id: string, list_id: number | '', slug: string, title: string }} [c] a category; none: an empty row */
  const addRow = (c = { id: '', list_id: '', slug: '', title: '' }) => {
    const n = body.children.length + 1;
    /** @type {HTMLTableRowElement} */
    const tr = h(
      'tr',
      {},
      h(
        'td',
        {},
        h('input', {
          name: 'id',
          value: c.id,
          required: true,
          maxlength: '50',
          size: '4',
          'aria-label': t('categories.idRow', { n }),
        }),
      ),
      h(
        'td',
        {},
        select([['', t('common.chooseOption')], ...listOptions(lists.items)], c.list_id, {
          name: 'list_id',
          required: true,
          'aria-label': t('categories.listRow', { n }),
        }),
      ),
      h(
        'td',
        {},
        h('input', {
          name: 'slug',
          value: c.slug,
          required: true,
          maxlength: '200',
          'aria-label': t('categories.slugRow', { n }),
        }),
      ),
      h(
        'td',
        {},
        h('input', { name: 'title', value: c.title, maxlength: '500', 'aria-label': t('categories.titleRow', { n }) }),
      ),
      h(
        'td',
        {},
        h(
          'button',
          {
            type: 'button',
            class: 'small',
            'data-write': true,
            'aria-label': t('categories.removeRow', { n }),
            onclick: () => tr.remove(),
          },
          t('common.remove'),
        ),
      ),
    );
    body.append(tr);
    return tr;
  };
  cats.categories.forEach((c) => addRow(c));
  const grid = h(
    'div',
    { class: 'table-wrap', tabindex: '0' },
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          [t('common.id'), t('common.addressBook'), t('categories.slug'), t('categories.title'), ''].map(
            (/** @type {string} */ x) => h('th', { scope: 'col' }, x),
          ),
        ),
      ),
      body,
    ),
  );
  return h(
    'div',
    {},
    h('p', { class: 'muted' }, t('categories.help')),
    saveForm(
      [
        grid,
        h(
          'p',
          {},
          h(
            'button',
            {
              type: 'button',
              'data-write': true,
              onclick: () => /** @type {HTMLInputElement} */ (addRow().querySelector('input')).focus(),
            },
            t('categories.add'),
          ),
        ),
      ],
      async () => {
        const categories = [...body.children].map((tr) => ({
          id: valueIn(tr, 'id').trim(),
          list_id: Number(valueIn(tr, 'list_id')),
          slug: valueIn(tr, 'slug').trim(),
          title: valueIn(tr, 'title').trim(),
        }));
        await api('PUT', `/api/admin/projects/${enc(site)}/course-categories`, { categories });
      },
      t('categories.save'),
    ),
  );
}

/** @type {import('../pageTypes.js').ProjectTab} */
export async function paidListsTab(_ctx, p, m) {
  const site = p.site_key;
  /** @type {[{ lists: Record<string, number> }, Items<AddressBook>]} */
  const [paid, lists] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/paid-lists`),
    api('GET', `/api/admin/projects/${enc(site)}/lists`),
  ]);
  /** @type {[string, HTMLSelectElement][]} cart type and its address book's picker */
  const pickers = m.cart_types.map((c) => [
    c,
    select([['', t('common.noneOption')], ...listOptions(lists.items)], paid.lists[c] ?? '', { name: c }),
  ]);
  return h(
    'div',
    {},
    h('p', { class: 'muted' }, t('paid.help')),
    saveForm(
      h(
        'div',
        { class: 'row' },
        pickers.map(([c, sel]) => field(t('paid.field', { cart: t(`cart.${c}`) }), sel)),
      ),
      async () => {
        /** @type {Record<string, number>} */
        const body = {};
        for (const [c, sel] of pickers) if (sel.value) body[c] = Number(sel.value);
        await api('PUT', `/api/admin/projects/${enc(site)}/paid-lists`, { lists: body });
      },
      t('paid.save'),
    ),
  );
}

/**
 * @param {string} site
 * @param {Template[]} templates
 * @param {() => void} onSaved
 */
function sequenceForm(site, templates, onSaved) {
  /** @type {HTMLInputElement} */
  const name = h('input', { name: 'name', required: true, maxlength: '200' });
  const steps = h('ol', { class: 'steps' });
  /** @param {number} delay minutes after the cart */
  const addStep = (delay = 60) => {
    /** @type {HTMLLIElement} */
    const li = h(
      'li',
      { class: 'row' },
      field(
        t('common.template'),
        select(
          templates.map((t) => [String(t.id), t.name]),
          '',
          { name: 'template_id', required: true },
        ),
      ),
      field(
        t('chain.minutes'),
        h('input', {
          type: 'number',
          name: 'delay_minutes',
          min: '0',
          max: '525600',
          value: String(delay),
          required: true,
        }),
      ),
      h('button', { type: 'button', class: 'small', onclick: () => li.remove() }, t('chain.removeStep')),
    );
    steps.append(li);
  };
  addStep(60);
  const status = h('div', { 'aria-live': 'polite' });
  return h(
    'form',
    {
      class: 'stack',
      'data-write': true,
      onsubmit: async (/** @type {Event} */ ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          const body = {
            site_key: site,
            name: name.value.trim(),
            steps: [...steps.children].map((li) => ({
              template_id: Number(valueIn(li, 'template_id')),
              delay_minutes: Number(valueIn(li, 'delay_minutes')),
            })),
          };
          /** @type {{ sequence_id: number }} */
          const r = await api('POST', '/api/sequences', body);
          toast(t('chain.sequenceCreated', { id: r.sequence_id }));
          onSaved();
        } catch (e) {
          showError(status, e);
        }
      },
    },
    field(t('common.name'), name),
    steps,
    h('p', {}, h('button', { type: 'button', onclick: () => addStep(1440) }, t('chain.addStep'))),
    status,
    h('button', { type: 'submit', class: 'primary' }, t('chain.createSequence')),
  );
}

/** @type {import('../pageTypes.js').ProjectTab} */
export async function cartChainTab(ctx, p, m) {
  const site = p.site_key;
  /** @type {[Items<Sequence> & { cart_chains: Record<string, number> }, Routing, Items<Template>]} */
  const [seqs, routing, templates] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/sequences`),
    api('GET', `/api/admin/projects/${enc(site)}/routing`),
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
  ]);
  const tplName = new Map(templates.items.map((t) => [t.id, t.name]));
  const seqById = new Map(seqs.items.map((s) => [s.sequence_id, s]));
  /**
   * @param {string} cart a cart type
   * @returns {{ source: string, steps: ChainStep[] }}
   */
  const chainOf = (cart) => {
    const seq = seqById.get(seqs.cart_chains[cart]);
    if (seq)
      return {
        source: t('chain.fromSequence', { name: seq.name, id: seq.sequence_id }),
        steps: seq.steps.map((s) => ({
          when: fmtMinutes(s.delay_minutes),
          template: tplName.get(s.template_id) ?? `#${s.template_id}`,
        })),
      };
    return {
      source: t('chain.default'),
      steps: m.cart_steps.map((s) => ({
        when: fmtMinutes(s.delay_minutes),
        template: routing.routes[`${cart}_abandoned_cart_${s.step}`] ?? null,
        key: `${cart}_abandoned_cart_${s.step}`,
      })),
    };
  };
  /** @type {[string, HTMLSelectElement][]} cart type and its sequence's picker */
  const pickers = m.cart_types.map((c) => [
    c,
    select(
      [
        ['', t('chain.defaultOption')],
        ...seqs.items.map((s) => [String(s.sequence_id), `${s.name} (#${s.sequence_id})`]),
      ],
      seqs.cart_chains[c] ?? '',
      { name: c },
    ),
  ]);
  const reload = () =>
    ctx.navigate(`/ui/projects/${enc(site)}${qs({ tab: 'chain' })}`, { replace: true, keepFocus: true });
  return h(
    'div',
    {},
    h('p', { class: 'muted' }, t('chain.help')),
    m.cart_types.map((c) => {
      const chain = chainOf(c);
      return h(
        'section',
        { class: 'chain' },
        h('h3', {}, t('chain.carts', { cart: t(`cart.${c}`) })),
        h('p', { class: 'muted' }, chain.source),
        table(
          /** @satisfies {Column<ChainStep>[]} */ ([
            { label: t('chain.after'), cell: (s) => s.when },
            {
              label: t('common.template'),
              cell: (s) => (s.template ? code(s.template) : badge(t('routing.none'), 'warn')),
            },
            { label: t('routing.key'), cell: (s) => (s.key ? code(s.key) : '—') },
          ]),
          chain.steps,
          { empty: t('chain.noSteps') },
        ),
      );
    }),
    h('h3', {}, t('chain.perCartType')),
    saveForm(
      h(
        'div',
        { class: 'row' },
        pickers.map(([c, sel]) => field(t('chain.carts', { cart: t(`cart.${c}`) }), sel)),
      ),
      async () => {
        /** @type {Record<string, number | null>} */
        const chains = {};
        for (const [c, sel] of pickers) chains[c] = sel.value ? Number(sel.value) : null;
        await api('PUT', `/api/admin/projects/${enc(site)}/cart-chains`, { chains });
        reload();
      },
      t('chain.save'),
    ),
    h(
      'details',
      {},
      h('summary', {}, t('chain.newSequence')),
      templates.items.length ? sequenceForm(site, templates.items, reload) : h('p', {}, t('chain.templatesFirst')),
    ),
  );
}
