// @ts-check
// Address books: the project's list (a tab) with a create form, and one book's members, paged by the
// server, with a form that adds a contact (created first when the address is new to the project).
import { api, ApiError, enc, qs } from '../api.js';
import { field, h, pagedTable, statusBadge, table, time, toast } from '../dom.js';
import { fmtNumber, t } from '../i18n.js';
import { cursorPager } from '../paging.js';
import { showError } from '../errors.js';

/** @typedef {import('../pageTypes.js').AddressBook} AddressBook */
/**
 * @template T
 * @typedef {import('../pageTypes.js').Items<T>} Items
 */
/**
 * @template R
 * @typedef {import('../pageTypes.js').Column<R>} Column
 */
/** A contact in an address book (schemas/admin.ts MemberView). */
/** @typedef {{ contact_id: number, email: string, name: string | null, status: string, added_at: string }} Member */

/** @type {import('../pageTypes.js').ProjectTab} */
export async function listsTab(ctx, p) {
  const site = p.site_key;
  /** @type {Items<AddressBook>} */
  const lists = await api('GET', `/api/admin/projects/${enc(site)}/lists`);
  /** @type {HTMLInputElement} */
  const name = h('input', { name: 'name', required: true, maxlength: '200' });
  const status = h('div', { 'aria-live': 'polite' });
  return h(
    'div',
    {},
    pagedTable(
      /** @satisfies {Column<AddressBook>[]} */ ([
        { label: t('common.id'), class: 'num', cell: (l) => String(l.list_id) },
        {
          label: t('common.name'),
          cell: (l) => h('a', { href: `/ui/projects/${enc(site)}/lists/${l.list_id}` }, l.name),
        },
        { label: t('lists.contacts'), class: 'num', cell: (l) => fmtNumber(l.members) },
        { label: t('common.created'), cell: (l) => time(l.created_at) },
      ]),
      lists.items,
      { empty: t('lists.empty') },
    ),
    h('h3', { 'data-write': true }, t('lists.new')),
    h(
      'form',
      {
        class: 'row',
        'data-write': true,
        onsubmit: async (/** @type {Event} */ ev) => {
          ev.preventDefault();
          status.replaceChildren();
          try {
            /** @type {{ list_id: number, created: boolean }} */
            const r = await api('POST', '/api/lists', { site_key: site, name: name.value.trim() });
            toast(r.created ? t('lists.created', { id: r.list_id }) : t('lists.exists', { id: r.list_id }));
            ctx.navigate(`/ui/projects/${enc(site)}${qs({ tab: 'lists' })}`, { replace: true, keepFocus: true });
          } catch (e) {
            showError(status, e);
          }
        },
      },
      field(t('common.name'), name),
      h('button', { type: 'submit', class: 'primary' }, t('common.create')),
    ),
    status,
  );
}

/** @param {import('../pageTypes.js').PageContext} ctx */
export async function listPage(ctx) {
  const [site, listId] = ctx.params;
  const cursor = ctx.query.get('cursor');
  /** @type {[Items<AddressBook>, import('../pageTypes.js').Page<Member>]} */
  const [lists, page] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/lists`),
    api('GET', `/api/lists/${listId}/contacts${qs({ limit: 50, cursor })}`),
  ]);
  const list = lists.items.find((l) => String(l.list_id) === listId);
  if (!list) throw new ApiError(404, { code: 'not_found', message: t('lists.notFound', { id: listId, site }) });

  /** @type {HTMLInputElement} */
  const email = h('input', {
    inputmode: 'email',
    name: 'email',
    required: true,
    maxlength: '254',
    spellcheck: 'false',
  });
  /** @type {HTMLInputElement} */
  const name = h('input', { name: 'name', maxlength: '500' });
  const status = h('div', { 'aria-live': 'polite' });
  const add = h(
    'form',
    {
      class: 'row',
      'data-write': true,
      onsubmit: async (/** @type {Event} */ ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          /** @type {{ contact_id: number }} */
          const c = await api('POST', '/api/contacts/upsert', {
            site_key: site,
            email: email.value.trim(),
            ...(name.value.trim() ? { name: name.value.trim() } : {}),
          });
          /** @type {{ added: boolean }} */
          const r = await api('POST', `/api/lists/${listId}/contacts`, { contact_id: c.contact_id });
          const who = email.value.trim();
          toast(r.added ? t('lists.added', { email: who }) : t('lists.already', { email: who }));
          ctx.navigate(`/ui/projects/${enc(site)}/lists/${listId}`, { replace: true, keepFocus: true });
        } catch (e) {
          showError(status, e);
        }
      },
    },
    field(t('common.email'), email),
    field(t('common.name'), name),
    h('button', { type: 'submit', class: 'primary' }, t('lists.add')),
  );

  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, t('lists.title', { name: list.name })),
    h(
      'p',
      { class: 'muted' },
      h('a', { href: `/ui/projects/${enc(site)}?tab=lists` }, site),
      ` · #${list.list_id} · `,
      t('lists.members', { count: list.members, n: fmtNumber(list.members) }),
    ),
    table(
      /** @satisfies {Column<Member>[]} */ ([
        { label: t('common.email'), cell: (c) => h('a', { href: `/ui/contacts/${c.contact_id}` }, c.email) },
        { label: t('common.personName'), cell: (c) => c.name ?? '—' },
        { label: t('common.status'), cell: (c) => statusBadge(c.status) },
        { label: t('lists.addedAt'), cell: (c) => time(c.added_at) },
      ]),
      page.items,
      { empty: t('lists.nobody') },
    ),
    cursorPager(ctx, page.next_cursor, page.items.length),
    h('h2', {}, t('lists.addTitle')),
    add,
    status,
  );
}
