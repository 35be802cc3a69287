// Address books: the project's list (a tab) with a create form, and one book's members, paged by the
// server, with a form that adds a contact (created first when the address is new to the project).
import { api, ApiError, describeError, enc, qs } from '../api.js';
import { badge, errorBox, field, h, pagedTable, table, time, toast } from '../dom.js';
import { cursorPager } from '../paging.js';

export async function listsTab(ctx, p) {
  const site = p.site_key;
  const lists = await api('GET', `/api/admin/projects/${enc(site)}/lists`);
  const name = h('input', { name: 'name', required: true, maxlength: '200' });
  const status = h('div', { 'aria-live': 'polite' });
  return h(
    'div',
    {},
    pagedTable(
      [
        { label: 'Id', class: 'num', cell: (l) => String(l.list_id) },
        { label: 'Name', cell: (l) => h('a', { href: `/ui/projects/${enc(site)}/lists/${l.list_id}` }, l.name) },
        { label: 'Contacts', class: 'num', cell: (l) => String(l.members) },
        { label: 'Created', cell: (l) => time(l.created_at) },
      ],
      lists.items,
      { empty: 'No address books yet.' },
    ),
    h('h3', {}, 'New address book'),
    h(
      'form',
      {
        class: 'row',
        onsubmit: async (ev) => {
          ev.preventDefault();
          status.replaceChildren();
          try {
            const r = await api('POST', '/api/lists', { site_key: site, name: name.value.trim() });
            toast(
              r.created ? `Address book #${r.list_id} created` : `An address book with that name exists: #${r.list_id}`,
            );
            ctx.navigate(`/ui/projects/${enc(site)}${qs({ tab: 'lists' })}`, { replace: true, keepFocus: true });
          } catch (e) {
            status.append(errorBox(describeError(e)));
          }
        },
      },
      field('Name', name),
      h('button', { type: 'submit', class: 'primary' }, 'Create'),
    ),
    status,
  );
}

export async function listPage(ctx) {
  const [site, listId] = ctx.params;
  const cursor = ctx.query.get('cursor');
  const [lists, page] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/lists`),
    api('GET', `/api/lists/${listId}/contacts${qs({ limit: 50, cursor })}`),
  ]);
  const list = lists.items.find((l) => String(l.list_id) === listId);
  if (!list)
    throw new ApiError(404, { code: 'not_found', message: `Address book ${listId} is not in project ${site}` });

  const email = h('input', {
    inputmode: 'email',
    name: 'email',
    required: true,
    maxlength: '254',
    spellcheck: 'false',
  });
  const name = h('input', { name: 'name', maxlength: '500' });
  const status = h('div', { 'aria-live': 'polite' });
  const add = h(
    'form',
    {
      class: 'row',
      onsubmit: async (ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          const c = await api('POST', '/api/contacts/upsert', {
            site_key: site,
            email: email.value.trim(),
            ...(name.value.trim() ? { name: name.value.trim() } : {}),
          });
          const r = await api('POST', `/api/lists/${listId}/contacts`, { contact_id: c.contact_id });
          toast(r.added ? `${email.value.trim()} added` : `${email.value.trim()} was already in this address book`);
          ctx.navigate(`/ui/projects/${enc(site)}/lists/${listId}`, { replace: true, keepFocus: true });
        } catch (e) {
          status.append(errorBox(describeError(e)));
        }
      },
    },
    field('E-mail', email),
    field('Name', name),
    h('button', { type: 'submit', class: 'primary' }, 'Add contact'),
  );

  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, `Address book: ${list.name}`),
    h(
      'p',
      { class: 'muted' },
      h('a', { href: `/ui/projects/${enc(site)}?tab=lists` }, site),
      ` · #${list.list_id} · ${list.members} contacts`,
    ),
    table(
      [
        { label: 'E-mail', cell: (c) => h('a', { href: `/ui/contacts/${c.contact_id}` }, c.email) },
        { label: 'Name', cell: (c) => c.name ?? '—' },
        { label: 'Status', cell: (c) => badge(c.status) },
        { label: 'Added', cell: (c) => time(c.added_at) },
      ],
      page.items,
      { empty: 'Nobody in this address book yet.' },
    ),
    cursorPager(ctx, page.next_cursor, page.items.length),
    h('h2', {}, 'Add a contact'),
    add,
    status,
  );
}
