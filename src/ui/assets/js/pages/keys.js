// A project's API keys (SPEC §2): list, create (the full key is shown once, here, with a copy button,
// and lives only in this page's memory), edit rights with checkboxes, disable after a confirmation.
import { api, describeError, enc, qs } from '../api.js';
import {
  badge,
  checkbox,
  clear,
  code,
  confirmDialog,
  copyButton,
  errorBox,
  field,
  h,
  pagedTable,
  select,
  time,
  toast,
} from '../dom.js';

function checkGroup(legend, values, checked, name, hint) {
  const boxes = values.map((v) => checkbox(v, checked.includes(v), { name, value: v }));
  const setAll = (on) =>
    boxes.forEach((b) => {
      b.querySelector('input').checked = on;
    });
  return h(
    'fieldset',
    { class: 'checks' },
    h('legend', {}, legend),
    values.length > 4
      ? h(
          'div',
          { class: 'check-tools' },
          h('button', { type: 'button', class: 'small', onclick: () => setAll(true) }, 'All'),
          h('button', { type: 'button', class: 'small', onclick: () => setAll(false) }, 'None'),
        )
      : null,
    hint ? h('small', { class: 'muted' }, hint) : null,
    h('div', { class: 'check-grid' }, boxes),
  );
}

/** The rights form of SPEC §2 (with the rate limit of §7); read() gives the body members. */
function rightsEditor(m, key, lists, templateNames) {
  const r = key?.rights ?? {};
  const checked = (name) => r[name] ?? [];
  const templateKeys = [
    ...new Set([...m.known_template_keys, ...templateNames, ...checked('allowed_template_keys')]),
  ].sort();
  const name = h('input', { name: 'name', required: true, maxlength: '200', value: key?.name ?? '' });
  const listSel = select(
    [['', '— none —'], ...lists.map((l) => [String(l.list_id), `${l.name} (#${l.list_id})`])],
    r.list_id ?? '',
    { name: 'list_id' },
  );
  const note = h('textarea', { name: 'note', rows: '2', maxlength: '2000' });
  note.value = r.note ?? '';
  const perSecond = h('input', {
    type: 'number',
    min: '1',
    max: '100000',
    name: 'per_second',
    value: key?.rate_limit?.per_second ?? '',
    placeholder: '50',
  });
  const burst = h('input', {
    type: 'number',
    min: '1',
    max: '1000000',
    name: 'burst',
    value: key?.rate_limit?.burst ?? '',
    placeholder: '100',
  });
  const node = h(
    'div',
    { class: 'rights' },
    field('Name', name, 'A label: which site or backend uses the key.'),
    checkGroup('Permissions', m.permissions, checked('permissions'), 'permissions'),
    checkGroup(
      'Event types from the catalog',
      m.catalog.map((e) => e.event_type),
      checked('allowed_api_events'),
      'allowed_api_events',
    ),
    checkGroup('Further event types', m.extra_event_types, checked('allowed_api_events'), 'allowed_api_events'),
    checkGroup('Cart types', m.cart_types, checked('allowed_cart_types'), 'allowed_cart_types'),
    checkGroup(
      'Template keys',
      templateKeys,
      checked('allowed_template_keys'),
      'allowed_template_keys',
      'None checked: the key may use every template.',
    ),
    h(
      'div',
      { class: 'row' },
      field('Address book (list_contacts_write)', listSel, 'The only address book the key may write to.'),
      field('Requests per second', perSecond, 'Blank: the default (50/s).'),
      field('Burst', burst, 'Blank: the default (100).'),
    ),
    field('Note', note),
  );
  const values = (n) => [...node.querySelectorAll(`input[name="${n}"]:checked`)].map((i) => i.value);
  const read = () => {
    const rights = {
      permissions: values('permissions'),
      allowed_api_events: [...new Set(values('allowed_api_events'))],
      allowed_template_keys: values('allowed_template_keys'),
      allowed_cart_types: values('allowed_cart_types'),
    };
    if (listSel.value) rights.list_id = Number(listSel.value);
    if (note.value.trim()) rights.note = note.value.trim();
    const rate =
      perSecond.value && burst.value ? { per_second: Number(perSecond.value), burst: Number(burst.value) } : null;
    return { name: name.value.trim(), rights, rate_limit: rate };
  };
  return { node, read };
}

const summary = (list) => (list?.length ? list.join(', ') : '—');

export async function keysTab(ctx, p, m) {
  const site = p.site_key;
  const [keys, lists, templates] = await Promise.all([
    api('GET', `/api/admin/keys${qs({ site_key: site })}`),
    api('GET', `/api/admin/projects/${enc(site)}/lists`),
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
  ]);
  const templateNames = templates.items.map((t) => t.name);
  const tableBox = h('div', {});
  const newKeyBox = h('div', { 'aria-live': 'polite' });
  const formBox = h('div', {});

  async function refresh() {
    const fresh = await api('GET', `/api/admin/keys${qs({ site_key: site })}`);
    drawTable(fresh.items);
  }

  async function disable(k) {
    const ok = await confirmDialog(
      `Disable the key “${k.name}” (…${k.last4})? Requests with it are refused from the next one on, and it cannot be enabled again.`,
      'Disable key',
    );
    if (!ok) return;
    try {
      await api('POST', `/api/admin/keys/${k.id}/disable`);
      toast(`Key …${k.last4} disabled`);
      await refresh();
    } catch (e) {
      toast(describeError(e), 'bad');
    }
  }

  function drawTable(items) {
    clear(tableBox).append(
      pagedTable(
        [
          { label: 'Name', cell: (k) => k.name },
          { label: 'Key', cell: (k) => code(`…${k.last4}`) },
          { label: 'Status', cell: (k) => badge(k.status) },
          { label: 'Permissions', cell: (k) => summary(k.rights.permissions) },
          {
            label: 'Event types',
            cell: (k) =>
              h(
                'span',
                { title: summary(k.rights.allowed_api_events) },
                String(k.rights.allowed_api_events?.length ?? 0),
              ),
          },
          { label: 'Carts', cell: (k) => summary(k.rights.allowed_cart_types) },
          { label: 'Created', cell: (k) => time(k.created_at) },
          {
            label: 'Actions',
            cell: (k) =>
              k.status === 'active'
                ? h(
                    'div',
                    { class: 'actions' },
                    h('button', { type: 'button', class: 'small', onclick: () => drawForm(k) }, 'Edit rights'),
                    h('button', { type: 'button', class: 'small danger', onclick: () => disable(k) }, 'Disable'),
                  )
                : `disabled ${k.disabled_at ? k.disabled_at.slice(0, 10) : ''}`,
          },
        ],
        items,
        { empty: 'No keys yet.', rowClass: (k) => (k.status === 'disabled' ? 'dim' : null) },
      ),
    );
  }

  function showNewKey(k) {
    const value = code(k.key);
    value.classList.add('secret');
    clear(newKeyBox).append(
      h(
        'div',
        { class: 'new-key', role: 'alert' },
        h('h3', {}, `Key “${k.name}” created`),
        h(
          'p',
          {},
          "Copy it now and store it in the site's configuration. It is shown only this once: after you leave or reload this page only its last four characters remain.",
        ),
        h('div', { class: 'key-line' }, value, copyButton(k.key, value)),
      ),
    );
  }

  function drawForm(key) {
    const editor = rightsEditor(m, key, lists.items, templateNames);
    const status = h('div', { 'aria-live': 'polite' });
    const heading = h('h3', { tabindex: '-1' }, key ? `Edit key “${key.name}” (…${key.last4})` : 'New key');
    const form = h(
      'form',
      {
        class: 'stack',
        onsubmit: async (ev) => {
          ev.preventDefault();
          status.replaceChildren();
          const { name, rights, rate_limit } = editor.read();
          try {
            if (key) {
              await api('PATCH', `/api/admin/keys/${key.id}`, { name, rights, rate_limit });
              toast('Rights saved');
              drawForm(null);
            } else {
              const created = await api('POST', '/api/admin/keys', {
                site_key: site,
                name,
                rights,
                ...(rate_limit ? { rate_limit } : {}),
              });
              showNewKey(created);
              drawForm(null);
              newKeyBox.querySelector('h3')?.setAttribute('tabindex', '-1');
              newKeyBox.querySelector('h3')?.focus();
            }
            await refresh();
          } catch (e) {
            status.append(errorBox(describeError(e)));
          }
        },
      },
      heading,
      editor.node,
      status,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit', class: 'primary' }, key ? 'Save rights' : 'Create key'),
        key ? h('button', { type: 'button', onclick: () => drawForm(null) }, 'Cancel') : null,
      ),
    );
    clear(formBox).append(form);
    if (key) heading.focus();
  }

  drawTable(keys.items);
  drawForm(null);
  return h('div', {}, newKeyBox, tableBox, formBox);
}
