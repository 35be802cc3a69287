// Contacts and address books as the admin API, the legacy endpoints and the admin UI use them.
import type { ContactStatus } from '../domain/statuses.js';
import { TRANSACTIONAL } from '../domain/consent.js';
import { consentHistory, contactTopicState, listTopics } from '../repos/consent.js';
import { erasureOf } from './erasure.js';
import { leaveAll } from './consent.js';
import { rejoinAll } from '../repos/consent.js';
import { notFound, validationError } from '../errors.js';
import {
  addToList,
  contactLists,
  createList,
  findContact,
  findContactByEmail,
  findList,
  listMembers,
  normaliseEmail,
  searchContacts,
  setContactStatus,
  upsertContact,
} from '../repos/contacts.js';
import { listEmails } from '../repos/emails.js';
import { listEvents } from '../repos/events.js';
import { findProjectById } from '../repos/projects.js';
import { decodeCursor, encodeCursor, iso, parseJson } from '../repos/types.js';
import type { ContactUpsertBody, ListBody } from '../schemas/admin.js';
import type { ContactsQuery } from '../schemas/adminUi.js';
import { PAGE_SIZE } from '../schemas/common.js';
import { projectFilter, requireProject } from './admin.js';
import { contactNotice, enqueueSiteWebhooks } from './siteWebhooks/enqueue.js';
import type { Deps } from './context.js';
import { audited, type AuditActor } from './audit.js';

/** How many of a contact's events and e-mails its page shows; the full lists are a filter away. */
const CONTACT_HISTORY = 50;

/** What the audit log shows of a contact (SPEC §14). */
const contactView = (c: { email: string; name: string | null; status: string; fields: string | null }) => ({
  email: c.email,
  name: c.name,
  status: c.status,
  fields: parseJson<Record<string, unknown>>(c.fields, {}),
});

/** Creates or updates a contact of the project named in the input (legacy POST /api/contacts/upsert). */
export async function saveContact(deps: Deps, who: AuditActor, input: ContactUpsertBody) {
  return audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, input.site_key);
    const before = await findContactByEmail(trx, project.id, normaliseEmail(input.email));
    const c = await upsertContact(
      trx,
      project.id,
      { email: input.email, name: input.name, fields: input.fields },
      deps.clock.now(),
    );
    const after = (await findContact(trx, c.id))!;
    note({
      action: 'contact.upsert',
      site_key: project.site_key,
      target: `contact:${c.id}`,
      before: before && contactView(before),
      after: contactView(after),
    });
    return { ok: true as const, site_key: project.site_key, contact_id: c.id, status: c.status };
  });
}

export async function changeStatus(deps: Deps, who: AuditActor, id: number, status: ContactStatus) {
  const now = deps.clock.now();
  // The change, the site's contact.unsubscribed webhook and the audit row commit together.
  return audited(deps, who, async (trx, note) => {
    const contact = await findContact(trx, id);
    if (!contact) throw notFound(`Contact ${id}`);
    // Only a change into unsubscribed is news for the site (SPEC §13).
    const from = (['active', 'invalid', 'admin_blocked'] as const).filter((s) => s !== status);
    const changed = await setContactStatus(trx, id, status, now, status === 'unsubscribed' ? [...from] : undefined, {
      reason: 'admin',
    });
    if (changed && status === 'unsubscribed') {
      await leaveAll(trx, { ...contact, status: 'unsubscribed' }, 'admin', now);
      await enqueueSiteWebhooks(trx, contact.project_id, 'contact.unsubscribed', contactNotice(contact, 'admin'), now);
    }
    // Made active again by an administrator: the topics left are open again (no consent is recorded on
    // the person's behalf: a topic that requires it still needs the person's own grant).
    if (changed && status === 'active' && contact.status === 'unsubscribed') await rejoinAll(trx, contact.id, now);
    const after = (await findContact(trx, id))!;
    note({
      action: 'contact.status',
      site_key: (await findProjectById(trx, contact.project_id))?.site_key ?? null,
      target: `contact:${id}`,
      before: { email: contact.email, status: contact.status },
      after: { email: after.email, status: after.status },
    });
    return { ok: true as const, contact_id: id, status };
  });
}

/** Contacts by (part of) their address, newest first. */
export async function search(deps: Deps, q: ContactsQuery, scope: readonly number[] | null = null) {
  const db = deps.db.db;
  const limit = q.limit ?? PAGE_SIZE;
  const rows = await searchContacts(db, {
    projectId: await projectFilter(db, q.site_key, scope),
    email: q.email?.trim() || undefined,
    limit,
    afterId: decodeCursor(q.cursor),
  });
  const items = rows.slice(0, limit).map((r) => ({
    id: r.id,
    site_key: r.site_key,
    email: r.email,
    name: r.name,
    status: r.status,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  }));
  return {
    ok: true as const,
    items,
    next_cursor: rows.length > limit ? encodeCursor(items[items.length - 1].id) : null,
  };
}

/** One contact with its address books, and its latest events and e-mails. */
export async function contact(deps: Deps, id: number) {
  const db = deps.db.db;
  const c = await findContact(db, id);
  if (!c) throw notFound(`Contact ${id}`);
  const project = await findProjectById(db, c.project_id);
  if (!project) throw notFound(`Project of contact ${id}`);
  const [lists, events, emails, topics, state, consent, erasure] = await Promise.all([
    contactLists(db, id),
    listEvents(db, { projectId: c.project_id, email: c.email, order: 'desc', limit: CONTACT_HISTORY, cursor: null }),
    listEmails(db, deps.db.dialect, { contactId: id, limit: CONTACT_HISTORY, cursor: null }, deps.clock.now()),
    listTopics(db, c.project_id),
    contactTopicState(db, id),
    consentHistory(db, id),
    erasureOf(deps, id),
  ]);
  return {
    ok: true as const,
    contact: {
      id: c.id,
      site_key: project.site_key,
      email: c.email,
      name: c.name,
      status: c.status,
      fields: parseJson<Record<string, unknown>>(c.fields, {}),
      erased_at: iso(c.erased_at),
      status_cause: c.status_reason
        ? {
            reason: c.status_reason,
            email_id: c.status_email_id,
            report_id: c.status_report_id,
            at: iso(c.status_changed_at),
          }
        : null,
      created_at: iso(c.created_at)!,
      updated_at: iso(c.updated_at)!,
    },
    lists: lists.map((l) => ({ list_id: l.list_id, name: l.name, added_at: iso(l.added_at)! })),
    events: events.items,
    events_more: events.nextId !== null,
    emails: emails.items,
    emails_more: emails.nextId !== null,
    topics: topics.map((t) => ({
      ...t,
      // An erased person gets nothing more (issue 37: the topics read «подписан» after an erasure).
      subscribed:
        c.erased_at == null &&
        (t.key === TRANSACTIONAL || (c.status !== 'unsubscribed' && (state.subscribed.get(t.key) ?? true))),
      latest_grant: state.latestGrant.get(t.key) ?? null,
    })),
    consent,
    erasure,
  };
}

/** Address books are unique by name within a project; creating an existing one returns it. */
export async function saveList(deps: Deps, who: AuditActor, input: ListBody) {
  return audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, input.site_key);
    const { list, created } = await createList(trx, project.id, input.name, deps.clock.now());
    const view = { list_id: list.id, name: list.name };
    // Naming an existing book changes nothing: the row says so with before = after.
    note({
      action: 'list.create',
      site_key: project.site_key,
      target: `list:${list.id}`,
      before: created ? null : view,
      after: view,
    });
    return { ok: true as const, site_key: project.site_key, list_id: list.id, created };
  });
}

/** Adds a contact of the book's own project; a contact of another project is refused. */
export async function addMember(deps: Deps, who: AuditActor, listId: number, contactId: number) {
  return audited(deps, who, async (trx, note) => {
    const list = await findList(trx, listId);
    if (!list) throw notFound(`Address book ${listId}`);
    const c = await findContact(trx, contactId);
    if (!c || c.project_id !== list.project_id) {
      throw validationError(
        { reason: 'contact_not_in_project', params: { contact: contactId, list: listId } },
        {
          invalid_fields: { contact_id: 'unknown contact of this project' },
        },
      );
    }
    const added = await addToList(trx, listId, contactId, deps.clock.now());
    const member = (isMember: boolean) => ({
      list_id: listId,
      contact_id: contactId,
      email: c.email,
      member: isMember,
    });
    note({
      action: 'list.add_contact',
      site_key: (await findProjectById(trx, list.project_id))?.site_key ?? null,
      target: `list:${listId}`,
      before: member(!added),
      after: member(true),
    });
    return { ok: true as const, list_id: listId, contact_id: contactId, added };
  });
}

export async function members(deps: Deps, listId: number, q: { limit?: number; cursor?: string }) {
  const db = deps.db.db;
  const limit = q.limit ?? PAGE_SIZE;
  if (!(await findList(db, listId))) throw notFound(`Address book ${listId}`);
  const rows = await listMembers(db, listId, limit, decodeCursor(q.cursor));
  const items = rows.slice(0, limit).map((r) => ({ ...r, added_at: iso(r.added_at)! }));
  return {
    ok: true as const,
    list_id: listId,
    items,
    next_cursor: rows.length > limit ? encodeCursor(items[items.length - 1].contact_id) : null,
  };
}
