// @ts-check
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
  field,
  h,
  pagedTable,
  select,
  statusBadge,
  table,
  time,
  toast,
} from '../dom.js';
import { showError } from '../errors.js';
import { fmtTime, statusLabel, t } from '../i18n.js';
import { memberList, requestNeeds } from './contract.js';
import { routingKeyAbout } from './firstRun.js';
import { RIGHT_OF_ERROR, emptyEventsWarning, snippetBox } from './keyHelp.js';

/**
 * @typedef {import('../types.js').UiMeta} UiMeta
 * @typedef {import('../types.js').ApiKey} ApiKey
 * @typedef {import('../types.js').KeyRights} KeyRights
 * @typedef {import('../types.js').AddressBook} AddressBook
 * @typedef {import('../types.js').Routes} Routes
 * @typedef {import('../types.js').TemplateSummary} TemplateSummary
 * @typedef {import('./keyHelp.js').KeyRight} KeyRight
 */

/**
 * A value with its meaning in words when there is one: `course_paid — после подтверждения оплаты`.
 * @param {string} v
 * @param {string} about
 */
const labelled = (v, about) => (about ? h('span', {}, code(v), ' — ', about) : v);

/**
 * A fieldset of checkboxes named `name`, one per value, with All/None buttons when there are many.
 * @param {string} legend
 * @param {string[]} values
 * @param {string[]} checked the values ticked
 * @param {string} name
 * @param {{ hint?: string, describe?: (value: string) => string, id?: string }} [options] describe: a value's
 *   meaning in words ('' for none); id: the fieldset's, for links to one right (events.js)
 */
function checkGroup(legend, values, checked, name, { hint = '', describe = (_v) => '', id = '' } = {}) {
  const boxes = values.map((v) => checkbox(labelled(v, describe(v)), checked.includes(v), { name, value: v }));
  /** @param {boolean} on */
  const setAll = (on) =>
    boxes.forEach((b) => {
      const input = b.querySelector('input');
      if (input) input.checked = on;
    });
  return h(
    'fieldset',
    { class: 'checks', id: id || null, tabindex: id ? '-1' : null },
    h('legend', {}, legend),
    values.length > 4
      ? h(
          'div',
          { class: 'check-tools' },
          h('button', { type: 'button', class: 'small', onclick: () => setAll(true) }, t('keys.all')),
          h('button', { type: 'button', class: 'small', onclick: () => setAll(false) }, t('keys.none')),
        )
      : null,
    hint ? h('small', { class: 'muted' }, hint) : null,
    h('div', { class: 'check-grid' }, boxes),
  );
}

/**
 * The rights form of SPEC §2 (with the rate limit of §7); read() gives the body members.
 * @param {UiMeta} m
 * @param {ApiKey | null} key the key edited; null: a new one
 * @param {AddressBook[]} lists
 * @param {string[]} templateNames
 * @param {Routes} routes
 */
function rightsEditor(m, key, lists, templateNames, routes) {
  /** @type {KeyRights} */
  const r = key?.rights ?? {};
  /** @param {KeyRight} name */
  const checked = (name) => r[name] ?? [];
  const templateKeys = [
    ...new Set([...m.known_template_keys, ...templateNames, ...checked('allowed_template_keys')]),
  ].sort();
  /** @type {HTMLInputElement} */
  const name = h('input', { name: 'name', required: true, maxlength: '200', value: key?.name ?? '' });
  /** @type {HTMLSelectElement} */
  const listSel = select(
    [['', t('common.noneOption')], ...lists.map((l) => [String(l.list_id), `${l.name} (#${l.list_id})`])],
    r.list_id ?? '',
    { name: 'list_id' },
  );
  /** @type {HTMLTextAreaElement} */
  const note = h('textarea', { name: 'note', rows: '2', maxlength: '2000' });
  note.value = r.note ?? '';
  /** @type {HTMLInputElement} */
  const perSecond = h('input', {
    type: 'number',
    min: '1',
    max: '100000',
    name: 'per_second',
    value: key?.rate_limit?.per_second ?? '',
    placeholder: '50',
  });
  /** @type {HTMLInputElement} */
  const burst = h('input', {
    type: 'number',
    min: '1',
    max: '1000000',
    name: 'burst',
    value: key?.rate_limit?.burst ?? '',
    placeholder: '100',
  });
  // An empty event list grants nothing (unlike the template keys): said at once, with the two usual answers.
  /** @returns {HTMLInputElement[]} */
  const eventBoxes = () =>
    [...node.querySelectorAll('input[name="allowed_api_events"]')].filter((e) => e instanceof HTMLInputElement);
  const warning = emptyEventsWarning(
    m,
    routes,
    (names) => {
      for (const b of eventBoxes()) if (names.includes(b.value)) b.checked = true;
      warning.refresh();
    },
    () => eventBoxes().some((b) => b.checked),
  );
  const node = h(
    'div',
    { class: 'rights', onchange: () => warning.refresh() },
    field(t('common.name'), name, t('keys.nameHint')),
    checkGroup(t('keys.permissions'), m.permissions, checked('permissions'), 'permissions', {
      hint: t('keys.permissionsHint'),
      describe: (p) => t(`keys.perm.${p}`),
      id: 'right-permissions',
    }),
    checkGroup(
      t('keys.catalogEvents'),
      m.catalog.map((e) => e.event_type),
      checked('allowed_api_events'),
      'allowed_api_events',
      { hint: t('keys.catalogEventsHint'), describe: (e) => routingKeyAbout(m, e), id: 'right-allowed_api_events' },
    ),
    warning.node,
    checkGroup(t('keys.extraEvents'), m.extra_event_types, checked('allowed_api_events'), 'allowed_api_events', {
      hint: t('keys.extraEventsHint'),
    }),
    checkGroup(t('keys.cartTypes'), m.cart_types, checked('allowed_cart_types'), 'allowed_cart_types', {
      hint: t('keys.cartTypesHint'),
      describe: (c) => t(`cart.${c}`),
      id: 'right-allowed_cart_types',
    }),
    checkGroup(t('keys.templateKeys'), templateKeys, checked('allowed_template_keys'), 'allowed_template_keys', {
      hint: t('keys.templateKeysHint'),
      id: 'right-allowed_template_keys',
    }),
    h(
      'div',
      { class: 'row' },
      field(t('keys.list'), listSel, t('keys.listHint')),
      field(t('keys.perSecond'), perSecond, t('keys.perSecondHint')),
      field(t('keys.burst'), burst, t('keys.burstHint')),
    ),
    field(t('keys.note'), note),
  );
  warning.refresh();
  /**
   * The values ticked in the boxes named n.
   * @param {string} n
   * @returns {string[]}
   */
  const values = (n) =>
    [...node.querySelectorAll(`input[name="${n}"]:checked`)]
      .filter((i) => i instanceof HTMLInputElement)
      .map((i) => i.value);
  const read = () => {
    /** @type {KeyRights} */
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

/** @param {string[] | undefined} list */
const summary = (list) => (list?.length ? list.join(', ') : '—');

/**
 * The project page's Keys tab.
 * @param {import('../types.js').PageContext} ctx
 * @param {Pick<import('../types.js').Project, 'site_key'>} p
 * @param {UiMeta} m
 */
export async function keysTab(ctx, p, m) {
  const site = p.site_key;
  /** @type {[{ items: ApiKey[] }, { items: AddressBook[] }, { items: TemplateSummary[] }, { routes: Routes }]} */
  const [keys, lists, templates, routing] = await Promise.all([
    api('GET', `/api/admin/keys${qs({ site_key: site })}`),
    api('GET', `/api/admin/projects/${enc(site)}/lists`),
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
    api('GET', `/api/admin/projects/${enc(site)}/routing`),
  ]);
  const byName = new Map(templates.items.map((x) => [x.name, x]));
  // SPEC §16: per allowed event (and cart type), what a request must carry: the catalog's members and
  // what the routed templates require (marked *).
  /** @param {ApiKey} k */
  const needsOf = (k) =>
    h(
      'details',
      { class: 'key-needs' },
      h('summary', {}, t('keys.needs', { name: k.name })),
      table(
        [
          { label: t('contract.event'), cell: (e) => code(e) },
          { label: t('contract.mustCarry'), cell: (e) => memberList(requestNeeds(m, routing.routes, byName, e)) },
        ],
        [...(k.rights.allowed_api_events ?? []), ...(k.rights.allowed_cart_types ?? [])],
        { empty: t('keys.noEvents') },
      ),
      h('p', { class: 'muted' }, t('contract.starHelp')),
      h('h3', {}, t('keys.snippetTitle')),
      snippetBox(m, k, null, routing.routes, byName),
    );
  const templateNames = templates.items.map((t) => t.name);
  const tableBox = h('div', {});
  const newKeyBox = h('div', { 'aria-live': 'polite' });
  const formBox = h('div', {});

  async function refresh() {
    /** @type {{ items: ApiKey[] }} */
    const fresh = await api('GET', `/api/admin/keys${qs({ site_key: site })}`);
    drawTable(fresh.items);
  }

  /** @param {ApiKey} k */
  async function disable(k) {
    const ok = await confirmDialog(t('keys.disableQuestion', { name: k.name, last4: k.last4 }), t('keys.disableYes'));
    if (!ok) return;
    try {
      await api('POST', `/api/admin/keys/${k.id}/disable`);
      toast(t('keys.disabled', { last4: k.last4 }));
      await refresh();
    } catch (e) {
      toast(describeError(e), 'bad');
    }
  }

  /** @param {ApiKey[]} items */
  function drawTable(items) {
    clear(tableBox).append(
      pagedTable(
        [
          { label: t('common.name'), cell: (k) => k.name },
          { label: t('keys.key'), cell: (k) => code(`…${k.last4}`) },
          { label: t('common.status'), cell: (k) => statusBadge(k.status) },
          { label: t('keys.permissions'), cell: (k) => summary(k.rights.permissions) },
          {
            label: t('keys.eventTypes'),
            cell: (k) =>
              k.rights.allowed_api_events?.length
                ? h('span', { title: summary(k.rights.allowed_api_events) }, String(k.rights.allowed_api_events.length))
                : badge(t('keys.noEventsShort'), 'warn'),
          },
          { label: t('keys.carts'), cell: (k) => summary(k.rights.allowed_cart_types) },
          { label: t('common.created'), cell: (k) => time(k.created_at) },
          {
            label: t('common.actions'),
            cell: (k) =>
              k.status === 'active'
                ? h(
                    'div',
                    { class: 'actions', 'data-write': true },
                    h('button', { type: 'button', class: 'small', onclick: () => drawForm(k) }, t('keys.editRights')),
                    h(
                      'button',
                      { type: 'button', class: 'small danger', onclick: () => disable(k) },
                      t('keys.disable'),
                    ),
                  )
                : k.disabled_at
                  ? t('keys.disabledOn', { date: fmtTime(k.disabled_at) })
                  : statusLabel('disabled'),
          },
        ],
        items,
        { empty: t('keys.empty'), rowClass: (k) => (k.status === 'disabled' ? 'dim' : null) },
      ),
      ...items.filter((k) => k.status === 'active').map(needsOf),
    );
  }

  /** @param {import('../types.js').CreatedKey} k */
  function showNewKey(k) {
    const value = code(k.key);
    value.classList.add('secret');
    clear(newKeyBox).append(
      h(
        'div',
        { class: 'new-key', role: 'alert' },
        h('h3', {}, t('keys.created', { name: k.name })),
        h('p', {}, t('keys.createdHelp')),
        h('div', { class: 'key-line' }, value, copyButton(k.key, value)),
        h('h4', {}, t('keys.snippetTitle')),
        snippetBox(m, k, k.key, routing.routes, byName),
      ),
    );
  }

  /**
   * @param {ApiKey | null} key the key whose rights are edited; null: the form for a new key
   * @param {boolean} [focus] focus the heading (a new key's form asked for)
   */
  function drawForm(key, focus = false) {
    const editor = rightsEditor(m, key, lists.items, templateNames, routing.routes);
    const status = h('div', { 'aria-live': 'polite' });
    const heading = h(
      'h3',
      { tabindex: '-1', 'data-write': true },
      key ? t('keys.editTitle', { name: key.name, last4: key.last4 }) : t('keys.new'),
    );
    const form = h(
      'form',
      {
        class: 'stack',
        'data-write': true,
        onsubmit: async (ev) => {
          ev.preventDefault();
          status.replaceChildren();
          const { name, rights, rate_limit } = editor.read();
          try {
            if (key) {
              await api('PATCH', `/api/admin/keys/${key.id}`, { name, rights, rate_limit });
              toast(t('keys.saved'));
              drawForm(null);
            } else {
              /** @type {import('../types.js').CreatedKey} */
              const created = await api('POST', '/api/admin/keys', {
                site_key: site,
                name,
                rights,
                ...(rate_limit ? { rate_limit } : {}),
              });
              showNewKey(created);
              // Not an empty form under the new key: its «no event» warning read as the new key's.
              clear(formBox).append(
                h(
                  'button',
                  { type: 'button', class: 'another-key', 'data-write': true, onclick: () => drawForm(null, true) },
                  t('keys.another'),
                ),
              );
              newKeyBox.querySelector('h3')?.setAttribute('tabindex', '-1');
              newKeyBox.querySelector('h3')?.focus();
            }
            await refresh();
          } catch (e) {
            showError(status, e);
          }
        },
      },
      heading,
      editor.node,
      status,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit', class: 'primary' }, key ? t('keys.saveRights') : t('keys.create')),
        key ? h('button', { type: 'button', onclick: () => drawForm(null) }, t('common.cancel')) : null,
      ),
    );
    clear(formBox).append(form);
    if (key || focus) heading.focus();
  }

  drawTable(keys.items);
  // From a refused event (events.js): the key's form, at the right that refused it.
  const right = ctx.query.get('right');
  const target = keys.items.find((k) => k.status === 'active' && k.last4 === ctx.query.get('key'));
  drawForm(target ?? null);
  if (right && Object.values(RIGHT_OF_ERROR).some((r) => r === right)) {
    const set = formBox.querySelector(`#right-${right}`);
    // The router focuses [data-autofocus] once the page is drawn.
    set?.classList.add('pointed');
    set?.setAttribute('data-autofocus', 'true');
  }
  return h('div', {}, newKeyBox, tableBox, formBox);
}
