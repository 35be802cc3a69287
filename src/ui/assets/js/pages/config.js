// Per-project purchase and cart configuration (SPEC §3, §6): course categories, the address book of
// paid orders per cart type, and the cart chain (the routed 1 h/1 d/3 d steps, or a sequence).
import { api, describeError, enc, qs } from '../api.js';
import { badge, code, errorBox, field, fmtMinutes, h, select, table, toast } from '../dom.js';

const listOptions = (lists) => lists.map((l) => [String(l.list_id), `${l.name} (#${l.list_id})`]);

function saveForm(children, save, label = 'Save') {
  const status = h('div', { 'aria-live': 'polite' });
  return h(
    'form',
    {
      class: 'stack',
      onsubmit: async (ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          await save();
          toast('Saved');
        } catch (e) {
          status.append(errorBox(describeError(e)));
        }
      },
    },
    children,
    status,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, label)),
  );
}

export async function categoriesTab(_ctx, p) {
  const site = p.site_key;
  const [cats, lists] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/course-categories`),
    api('GET', `/api/admin/projects/${enc(site)}/lists`),
  ]);
  const body = h('tbody', {});
  const addRow = (c = { id: '', list_id: '', slug: '', title: '' }) => {
    const n = body.children.length + 1;
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
          'aria-label': `Category id, row ${n}`,
        }),
      ),
      h(
        'td',
        {},
        select([['', '— choose —'], ...listOptions(lists.items)], c.list_id, {
          name: 'list_id',
          required: true,
          'aria-label': `Address book, row ${n}`,
        }),
      ),
      h(
        'td',
        {},
        h('input', { name: 'slug', value: c.slug, required: true, maxlength: '200', 'aria-label': `Slug, row ${n}` }),
      ),
      h('td', {}, h('input', { name: 'title', value: c.title, maxlength: '500', 'aria-label': `Title, row ${n}` })),
      h(
        'td',
        {},
        h(
          'button',
          { type: 'button', class: 'small', 'aria-label': `Remove row ${n}`, onclick: () => tr.remove() },
          'Remove',
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
          ['Id', 'Address book', 'Slug', 'Title', ''].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      body,
    ),
  );
  return h(
    'div',
    {},
    h(
      'p',
      { class: 'muted' },
      "A purchase of cart type course with fields.course_category_id adds the buyer to the category's address book too. An unknown id does not fail the purchase: it answers with a warning.",
    ),
    saveForm(
      [
        grid,
        h(
          'p',
          {},
          h('button', { type: 'button', onclick: () => addRow().querySelector('input').focus() }, 'Add category'),
        ),
      ],
      async () => {
        const categories = [...body.children].map((tr) => ({
          id: tr.querySelector('[name=id]').value.trim(),
          list_id: Number(tr.querySelector('[name=list_id]').value),
          slug: tr.querySelector('[name=slug]').value.trim(),
          title: tr.querySelector('[name=title]').value.trim(),
        }));
        await api('PUT', `/api/admin/projects/${enc(site)}/course-categories`, { categories });
      },
      'Save categories',
    ),
  );
}

export async function paidListsTab(_ctx, p, m) {
  const site = p.site_key;
  const [paid, lists] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/paid-lists`),
    api('GET', `/api/admin/projects/${enc(site)}/lists`),
  ]);
  const pickers = m.cart_types.map((c) => [
    c,
    select([['', '— none —'], ...listOptions(lists.items)], paid.lists[c] ?? '', { name: c }),
  ]);
  return h(
    'div',
    {},
    h(
      'p',
      { class: 'muted' },
      'Every purchase adds the buyer to the general address book of paid orders for its cart type. Without one, the purchase still succeeds and its answer carries a warning.',
    ),
    saveForm(
      h(
        'div',
        { class: 'row' },
        pickers.map(([c, sel]) => field(`Paid ${c} orders`, sel)),
      ),
      async () => {
        const body = {};
        for (const [c, sel] of pickers) if (sel.value) body[c] = Number(sel.value);
        await api('PUT', `/api/admin/projects/${enc(site)}/paid-lists`, { lists: body });
      },
      'Save paid-order books',
    ),
  );
}

function sequenceForm(site, templates, onSaved) {
  const name = h('input', { name: 'name', required: true, maxlength: '200' });
  const steps = h('ol', { class: 'steps' });
  const addStep = (delay = 60) => {
    const li = h(
      'li',
      { class: 'row' },
      field(
        'Template',
        select(
          templates.map((t) => [String(t.id), t.name]),
          '',
          { name: 'template_id', required: true },
        ),
      ),
      field(
        'Minutes after the order',
        h('input', {
          type: 'number',
          name: 'delay_minutes',
          min: '0',
          max: '525600',
          value: String(delay),
          required: true,
        }),
      ),
      h('button', { type: 'button', class: 'small', onclick: () => li.remove() }, 'Remove step'),
    );
    steps.append(li);
  };
  addStep(60);
  const status = h('div', { 'aria-live': 'polite' });
  return h(
    'form',
    {
      class: 'stack',
      onsubmit: async (ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          const body = {
            site_key: site,
            name: name.value.trim(),
            steps: [...steps.children].map((li) => ({
              template_id: Number(li.querySelector('[name=template_id]').value),
              delay_minutes: Number(li.querySelector('[name=delay_minutes]').value),
            })),
          };
          const r = await api('POST', '/api/sequences', body);
          toast(`Sequence #${r.sequence_id} created`);
          onSaved();
        } catch (e) {
          status.append(errorBox(describeError(e)));
        }
      },
    },
    field('Name', name),
    steps,
    h('p', {}, h('button', { type: 'button', onclick: () => addStep(1440) }, 'Add step')),
    status,
    h('button', { type: 'submit', class: 'primary' }, 'Create sequence'),
  );
}

export async function cartChainTab(ctx, p, m) {
  const site = p.site_key;
  const [seqs, routing, templates] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/sequences`),
    api('GET', `/api/admin/projects/${enc(site)}/routing`),
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
  ]);
  const tplName = new Map(templates.items.map((t) => [t.id, t.name]));
  const seqById = new Map(seqs.items.map((s) => [s.sequence_id, s]));
  const chainOf = (cart) => {
    const seq = seqById.get(seqs.cart_chains[cart]);
    if (seq)
      return {
        source: `sequence “${seq.name}” (#${seq.sequence_id})`,
        steps: seq.steps.map((s) => ({
          when: fmtMinutes(s.delay_minutes),
          template: tplName.get(s.template_id) ?? `#${s.template_id}`,
        })),
      };
    return {
      source: 'default: the templates routed to the 1 h, 1 d and 3 d steps',
      steps: m.cart_steps.map((s) => ({
        when: fmtMinutes(s.delay_minutes),
        template: routing.routes[`${cart}_abandoned_cart_${s.step}`] ?? null,
        key: `${cart}_abandoned_cart_${s.step}`,
      })),
    };
  };
  const pickers = m.cart_types.map((c) => [
    c,
    select(
      [
        ['', 'Default (routed steps)'],
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
    h(
      'p',
      { class: 'muted' },
      "An order-created event schedules its cart type's chain; the purchase of that order cancels what has not been sent. A step without a template is skipped.",
    ),
    m.cart_types.map((c) => {
      const chain = chainOf(c);
      return h(
        'section',
        { class: 'chain' },
        h('h3', {}, `${c} carts`),
        h('p', { class: 'muted' }, chain.source),
        table(
          [
            { label: 'After', cell: (s) => s.when },
            { label: 'Template', cell: (s) => (s.template ? code(s.template) : badge('none')) },
            { label: 'Routing key', cell: (s) => (s.key ? code(s.key) : '—') },
          ],
          chain.steps,
          { empty: 'No steps.' },
        ),
      );
    }),
    h('h3', {}, 'Chain per cart type'),
    saveForm(
      h(
        'div',
        { class: 'row' },
        pickers.map(([c, sel]) => field(`${c} carts`, sel)),
      ),
      async () => {
        const chains = {};
        for (const [c, sel] of pickers) chains[c] = sel.value ? Number(sel.value) : null;
        await api('PUT', `/api/admin/projects/${enc(site)}/cart-chains`, { chains });
        reload();
      },
      'Save chains',
    ),
    h(
      'details',
      {},
      h('summary', {}, 'New sequence'),
      templates.items.length ? sequenceForm(site, templates.items, reload) : h('p', {}, 'Create templates first.'),
    ),
  );
}
