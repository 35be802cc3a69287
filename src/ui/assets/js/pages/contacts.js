// Contacts (SPEC §4): search by e-mail, and one person's page: status (changeable, admin_blocked
// included), address books, and the events and e-mails for that person.
import { api, describeError, enc, meta, projects, qs } from '../api.js';
import { badge, code, errorBox, facts, field, h, jsonBlock, select, table, time, toast } from '../dom.js';
import { cursorPager, filterForm } from '../paging.js';
import { emailColumns } from './emails.js';

const STATUS_HELP = {
  active: 'receives everything',
  unsubscribed: 'no cart chains or campaigns; transactional e-mails about their own orders still go',
  invalid: 'the address does not exist: nothing is sent',
  admin_blocked: 'blocked by an administrator: nothing is sent',
};

export async function contactsPage(ctx) {
  const q = ctx.query;
  const params = { email: q.get('email'), site_key: q.get('site_key'), cursor: q.get('cursor'), limit: 50 };
  const [all, page] = await Promise.all([projects(), api('GET', `/api/admin/contacts${qs(params)}`)]);
  const filters = filterForm(
    ctx,
    [
      field(
        'E-mail contains',
        h('input', {
          name: 'email',
          type: 'search',
          value: params.email ?? '',
          maxlength: '254',
          'data-autofocus': !params.email || null,
        }),
      ),
      field(
        'Project',
        select([['', 'All projects'], ...all.map((p) => [p.site_key, p.site_key])], params.site_key, {
          name: 'site_key',
        }),
      ),
    ],
    { label: 'Find contacts' },
  );
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, 'Contacts'),
    filters,
    table(
      [
        { label: 'E-mail', cell: (c) => h('a', { href: `/ui/contacts/${c.id}` }, c.email) },
        { label: 'Name', cell: (c) => c.name ?? '—' },
        { label: 'Project', cell: (c) => c.site_key },
        { label: 'Status', cell: (c) => badge(c.status) },
        { label: 'Since', cell: (c) => time(c.created_at) },
      ],
      page.items,
      { empty: params.email ? 'Nobody with such an address.' : 'No contacts yet.' },
    ),
    cursorPager(ctx, page.next_cursor, page.items.length),
  );
}

export async function contactPage(ctx) {
  const id = ctx.params[0];
  const [m, d] = await Promise.all([meta(), api('GET', `/api/admin/contacts/${id}`)]);
  const c = d.contact;
  const statusSel = select(
    m.contact_statuses.map((s) => [s, `${s}: ${STATUS_HELP[s] ?? ''}`]),
    c.status,
    { name: 'status' },
  );
  const status = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    {
      class: 'row',
      onsubmit: async (ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          await api('POST', `/api/admin/contacts/${id}/status`, { status: statusSel.value });
          toast(`Status set to ${statusSel.value}`);
          ctx.navigate(`/ui/contacts/${id}`, { replace: true, focus: 'select[name="status"]' });
        } catch (e) {
          status.append(errorBox(describeError(e)));
        }
      },
    },
    field('Status', statusSel),
    h('button', { type: 'submit', class: 'primary' }, 'Change status'),
  );

  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, c.email, ' ', badge(c.status)),
    facts([
      ['Name', c.name ?? '—'],
      ['Project', h('a', { href: `/ui/projects/${enc(c.site_key)}` }, c.site_key)],
      ['Known since', time(c.created_at)],
      ['Updated', time(c.updated_at)],
    ]),
    form,
    status,
    Object.keys(c.fields).length
      ? h('details', {}, h('summary', {}, 'Fields'), jsonBlock(c.fields, 'Contact fields'))
      : null,
    h('h2', {}, 'Address books'),
    table(
      [
        {
          label: 'Address book',
          cell: (l) => h('a', { href: `/ui/projects/${enc(c.site_key)}/lists/${l.list_id}` }, l.name),
        },
        { label: 'Added', cell: (l) => time(l.added_at) },
      ],
      d.lists,
      { empty: 'In no address book.' },
    ),
    h('h2', {}, 'Events'),
    table(
      [
        { label: 'Received', cell: (e) => h('a', { href: `/ui/events/${e.id}` }, time(e.received_at)) },
        { label: 'Event type', cell: (e) => (e.event_type ? code(e.event_type) : '—') },
        { label: 'Order', cell: (e) => e.order_id ?? '—' },
        {
          label: 'Outcome',
          cell: (e) => [badge(e.accepted ? 'accepted' : 'rejected'), e.error_code ? [' ', code(e.error_code)] : null],
        },
      ],
      d.events,
      { empty: 'No events for this address.' },
    ),
    d.events_more
      ? h(
          'p',
          {},
          h(
            'a',
            { href: `/ui/events${qs({ site_key: c.site_key, email: c.email })}` },
            'All events for this address →',
          ),
        )
      : null,
    h('h2', {}, 'E-mails'),
    table(emailColumns(), d.emails, { empty: 'No e-mails to this contact.' }),
    d.emails_more
      ? h(
          'p',
          {},
          h('a', { href: `/ui/emails${qs({ site_key: c.site_key, to: c.email })}` }, 'All e-mails to this contact →'),
        )
      : null,
  );
}
