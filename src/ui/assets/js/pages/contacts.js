// @ts-check
// Contacts (SPEC §4): search by e-mail, and one person's page: status (changeable, admin_blocked
// included), address books, and the events and e-mails for that person.
import { api, enc, meta, projects, qs } from '../api.js';
import { code, facts, field, h, jsonBlock, select, statusBadge, table, time, toast } from '../dom.js';
import { statusLabel, t } from '../i18n.js';
import { cursorPager, filterForm } from '../paging.js';
import { emailColumns } from './emails.js';
import { consentSection } from './consent.js';
import { showError } from '../errors.js';

/** @typedef {import('../pageTypes.js').PageContext} PageContext */
/** @typedef {import('../pageTypes.js').Contact} Contact */
/** @typedef {import('../pageTypes.js').ContactItem} ContactItem */
/**
 * @template R
 * @typedef {import('../pageTypes.js').Column<R>} Column
 */

/** @param {PageContext} ctx */
export async function contactsPage(ctx) {
  const q = ctx.query;
  const params = { email: q.get('email'), site_key: q.get('site_key'), cursor: q.get('cursor'), limit: 50 };
  /** @type {[import('../pageTypes.js').Project[], import('../pageTypes.js').Page<ContactItem>]} */
  const [all, page] = await Promise.all([projects(), api('GET', `/api/admin/contacts${qs(params)}`)]);
  const filters = filterForm(
    ctx,
    [
      field(
        t('contacts.emailContains'),
        h('input', {
          name: 'email',
          type: 'search',
          value: params.email ?? '',
          maxlength: '254',
          'data-autofocus': !params.email || null,
        }),
      ),
      field(
        t('common.project'),
        select([['', t('common.allProjects')], ...all.map((p) => [p.site_key, p.site_key])], params.site_key, {
          name: 'site_key',
        }),
      ),
    ],
    { label: t('contacts.find') },
  );
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, t('nav.contacts')),
    filters,
    table(
      /** @satisfies {Column<ContactItem>[]} */ ([
        { label: t('common.email'), cell: (c) => h('a', { href: `/ui/contacts/${c.id}` }, c.email) },
        { label: t('common.personName'), cell: (c) => c.name ?? '—' },
        { label: t('common.project'), cell: (c) => c.site_key },
        { label: t('common.status'), cell: (c) => statusBadge(c.status) },
        { label: t('contacts.since'), cell: (c) => time(c.created_at) },
      ]),
      page.items,
      { empty: params.email ? t('contacts.nobody') : t('contacts.empty') },
    ),
    cursorPager(ctx, page.next_cursor, page.items.length),
  );
}

/**
 * Why the contact has its status: who set it, and the e-mail and report that did (SPEC §12).
 * @param {Contact['status_cause']} cause
 */
function statusCause(cause) {
  if (!cause) return '—';
  return h(
    'span',
    {},
    t(`contacts.cause.${cause.reason}`),
    cause.email_id
      ? [' · ', h('a', { href: `/ui/emails/${cause.email_id}` }, t('contacts.causeEmail', { id: cause.email_id }))]
      : null,
    cause.report_id ? [' · ', t('contacts.causeReport', { id: cause.report_id })] : null,
    cause.at ? [' · ', time(cause.at)] : null,
  );
}

/** @param {PageContext} ctx */
export async function contactPage(ctx) {
  const id = ctx.params[0];
  /** @type {[import('../pageTypes.js').UiMeta, import('../pageTypes.js').ContactDetail]} */
  const [m, d] = await Promise.all([meta(), api('GET', `/api/admin/contacts/${id}`)]);
  const c = d.contact;
  /** @type {HTMLSelectElement} */
  const statusSel = select(
    m.contact_statuses.map((s) => [
      s,
      t('contacts.statusOption', { status: statusLabel(s), help: t(`contacts.help.${s}`) }),
    ]),
    c.status,
    { name: 'status' },
  );
  const status = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    {
      class: 'row',
      'data-write': true,
      onsubmit: async (/** @type {Event} */ ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          await api('POST', `/api/admin/contacts/${id}/status`, { status: statusSel.value });
          toast(t('contacts.statusSet', { status: statusLabel(statusSel.value) }));
          ctx.navigate(`/ui/contacts/${id}`, { replace: true, focus: 'select[name="status"]' });
        } catch (e) {
          showError(status, e);
        }
      },
    },
    field(t('common.status'), statusSel),
    h('button', { type: 'submit', class: 'primary' }, t('contacts.changeStatus')),
  );

  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, c.email, ' ', statusBadge(c.status)),
    facts([
      [t('common.personName'), c.name ?? '—'],
      [t('common.project'), h('a', { href: `/ui/projects/${enc(c.site_key)}` }, c.site_key)],
      [t('contacts.knownSince'), time(c.created_at)],
      [t('common.updated'), time(c.updated_at)],
      [t('contacts.statusCause'), statusCause(c.status_cause)],
    ]),
    form,
    status,
    Object.keys(c.fields).length
      ? h('details', {}, h('summary', {}, t('contacts.fields')), jsonBlock(c.fields, t('contacts.fieldsLabel')))
      : null,
    consentSection(ctx, d),
    h('h2', {}, t('project.tab.lists')),
    table(
      /** @satisfies {Column<(typeof d.lists)[number]>[]} */ ([
        {
          label: t('common.addressBook'),
          cell: (l) => h('a', { href: `/ui/projects/${enc(c.site_key)}/lists/${l.list_id}` }, l.name),
        },
        { label: t('lists.addedAt'), cell: (l) => time(l.added_at) },
      ]),
      d.lists,
      { empty: t('contacts.noLists') },
    ),
    h('h2', {}, t('nav.events')),
    table(
      /** @satisfies {Column<import('../pageTypes.js').EventView>[]} */ ([
        { label: t('events.received'), cell: (e) => h('a', { href: `/ui/events/${e.id}` }, time(e.received_at)) },
        { label: t('events.eventType'), cell: (e) => (e.event_type ? code(e.event_type) : '—') },
        { label: t('events.order'), cell: (e) => e.order_id ?? '—' },
        {
          label: t('events.outcome'),
          cell: (e) => [
            statusBadge(e.accepted ? 'accepted' : 'rejected'),
            e.error_code ? [' ', code(e.error_code)] : null,
          ],
        },
      ]),
      d.events,
      { empty: t('contacts.noEvents') },
    ),
    d.events_more
      ? h(
          'p',
          {},
          h('a', { href: `/ui/events${qs({ site_key: c.site_key, email: c.email })}` }, t('contacts.allEvents')),
        )
      : null,
    h('h2', {}, t('nav.emails')),
    table(emailColumns(), d.emails, { empty: t('contacts.noEmails') }),
    d.emails_more
      ? h('p', {}, h('a', { href: `/ui/emails${qs({ site_key: c.site_key, to: c.email })}` }, t('contacts.allEmails')))
      : null,
  );
}
