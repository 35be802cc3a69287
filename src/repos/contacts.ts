// Contacts (written one by one and set-based, read by id and searched) and address books (lists and
// their members).
import { sql, type RawBuilder } from 'kysely';
import type { ContactRow, ContactStatus } from '../db/schema.js';
import type { ContactStatusReason } from '../domain/statuses.js';
import { PREPARED } from '../db/index.js';
import { canonicalAddress } from '../domain/email.js';
import { holdHandOvers } from './handOver.js';
import { unnest } from './setBased.js';
import { parseJson, type Executor, byProject, type ProjectFilter } from './types.js';

/**
 * Contacts are unique per project by this form of the address (SPEC §4, §10): trimmed, lower-cased, the
 * domain in Unicode whichever form was sent.
 */
export const normaliseEmail = canonicalAddress;

const MERGE_ATTEMPTS = 100;

/**
 * The name rule of every contact upsert, written once and used by each statement that upserts contacts
 * (the one-row statement below, the SQLite accept statements, PostgreSQL's set-based one): a new contact
 * gets the name given; a known one takes a non-empty name given, and its updated_at moves only when the
 * name changes. Status and fields are never touched: an event must not resubscribe someone who
 * unsubscribed. The `set` and `when` of `on conflict (project_id, email) do update` over `contacts`.
 */
export const NAME_RULE = {
  set: 'name = excluded.name, updated_at = excluded.updated_at',
  when: "nullif(excluded.name, '') is not null and excluded.name is distinct from contacts.name",
} as const;

/**
 * Insert or update a contact. The name follows NAME_RULE; fields sent now are merged into the stored
 * ones so one event's values do not erase another's (absent ones keep them); status never changes here.
 *
 * Concurrent writers: the unique index decides who creates the row (the others then update it), and a
 * merge of fields is written only over the fields it was computed from (compare-and-set, retried), so
 * two requests adding different fields at the same moment both keep theirs.
 */
export async function upsertContact(
  db: Executor,
  projectId: number,
  c: { email: string; name?: string | null; fields?: Record<string, unknown> },
  now: number,
): Promise<ContactRow> {
  const email = normaliseEmail(c.email);
  const { rows } = await sql<{
    id: number;
  }>`insert into contacts (project_id, email, name, fields, status, created_at, updated_at)
    values (${projectId}, ${email}, ${c.name ?? null}, '{}', 'active', ${now}, ${now})
    on conflict (project_id, email) do update set ${sql.raw(NAME_RULE.set)} where ${sql.raw(NAME_RULE.when)}
    returning id`.execute(db);
  const id = rows[0] ? Number(rows[0].id) : (await findContactByEmail(db, projectId, email))?.id;
  if (id === undefined) throw new Error(`contact ${email} could neither be created nor found`);
  if (c.fields) await mergeContactFields(db, id, c.fields, now);
  const contact = await findContact(db, id);
  if (!contact) throw new Error(`contact ${email} was deleted while it was written`);
  return contact;
}

/** Merges `fields` into the contact's stored fields (compare-and-set, retried on a concurrent merge). */
export async function mergeContactFields(
  db: Executor,
  id: number,
  fields: Record<string, unknown>,
  now: number,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const stored = await db.selectFrom('contacts').select('fields').where('id', '=', id).executeTakeFirst();
    if (!stored) return;
    const merged = JSON.stringify({ ...parseJson<Record<string, unknown>>(stored.fields, {}), ...fields });
    let q = db.updateTable('contacts').set({ fields: merged, updated_at: now }).where('id', '=', id);
    // Each miss means another writer succeeded, so this ends; the bound only caps a pathological pile-up.
    if (attempt < MERGE_ATTEMPTS) q = q.where('fields', '=', stored.fields);
    const res = await q.executeTakeFirst();
    if (Number(res.numUpdatedRows) > 0 || attempt >= MERGE_ATTEMPTS) return;
  }
}

/** Names one contact of a project, whatever the spelling of its address. */
export const contactKey = (projectId: number, email: string) => `${projectId}\n${normaliseEmail(email)}`;

export interface ContactRef {
  id: number;
  email: string;
  name: string | null;
  /** What the plan reports (SPEC §13). */
  status: ContactStatus;
}

export interface ContactWanted {
  project_id: number;
  /** Normalised (normaliseEmail). */
  email: string;
  name: string | null;
  now: number;
}

const WANTED = { project_id: 'bigint', email: 'text', name: 'text', now: 'bigint' } as const;

/** What both statements of upsertContactsMany return per contact. */
type UpsertedContact = ContactRef & { project_id: number };

/**
 * upsertContact for many contacts at once (PostgreSQL; at most one row per project and address, no
 * fields), by NAME_RULE. One statement inserts the new contacts, renames the known ones whose name
 * changes and returns both; a second reads the known ones left as they were, only when there are any
 * (updating them too would write a new row version of every known contact for nothing). Rows are taken
 * in one order (project, e-mail) so concurrent writers cannot deadlock on them. Returns the contacts by
 * contactKey; one deleted meanwhile is missing.
 */
export async function upsertContactsMany(db: Executor, wanted: ContactWanted[]): Promise<Map<string, ContactRef>> {
  const rows = [...wanted].sort(
    (a, b) => a.project_id - b.project_id || (a.email < b.email ? -1 : a.email > b.email ? 1 : 0),
  );
  const out = new Map<string, ContactRef>();
  const keep = (c: { id: number; project_id: number; email: string; name: string | null; status: ContactStatus }) =>
    out.set(contactKey(Number(c.project_id), c.email), {
      id: Number(c.id),
      email: c.email,
      name: c.name,
      status: c.status,
    });
  const written = await sql<UpsertedContact>`
    ${sql.raw(PREPARED)}insert into contacts (project_id, email, name, fields, status, created_at, updated_at)
    select u.project_id, u.email, u.name, '{}', 'active', u.now, u.now
    from ${unnest(rows, WANTED, true)}
    order by u.ord
    on conflict (project_id, email) do update set ${sql.raw(NAME_RULE.set)} where ${sql.raw(NAME_RULE.when)}
    returning id, project_id, email, name, status`.execute(db);
  for (const c of written.rows) keep(c);
  const known = rows.filter((r) => !out.has(contactKey(r.project_id, r.email)));
  if (!known.length) return out;
  // A new statement: it also sees a contact another transaction committed while the upsert ran.
  const found = await sql<UpsertedContact>`
    ${sql.raw(PREPARED)}select c.id, c.project_id, c.email, c.name, c.status from contacts c
    join ${unnest(known, { project_id: 'bigint', email: 'text' })} on c.project_id = u.project_id and c.email = u.email`.execute(
    db,
  );
  for (const c of found.rows) keep(c);
  return out;
}

export async function findContact(db: Executor, id: number): Promise<ContactRow | undefined> {
  return db.selectFrom('contacts').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A project's contact by its address as stored (normaliseEmail). */
export async function findContactByEmail(
  db: Executor,
  projectId: number,
  email: string,
): Promise<ContactRow | undefined> {
  return db
    .selectFrom('contacts')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('email', '=', email)
    .executeTakeFirst();
}

/** Many contacts by id in one query. */
export async function findContactsByIds(db: Executor, ids: number[]): Promise<Map<number, ContactRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('contacts').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [Number(r.id), r]));
}

/** The text as a LIKE pattern matching it anywhere, with `!` as the escape character. */
function containsPattern(text: string): string {
  return `%${text.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

const UPPER = 'АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ';
const LOWER = 'абвгдеёжзийклмнопрстуфхцчшщъыьэюя';

/** Lower case with ё as е, the way an administrator types a name («алена» finds «Алёна»). */
export const foldText = (text: string): string => text.toLocaleLowerCase('ru').replaceAll('ё', 'е');

/**
 * The same folding in SQL, alike on both databases: SQLite's lower() folds ASCII only, and PostgreSQL's
 * depends on the database's locale, so Cyrillic capitals are replaced one by one.
 */
function foldSql(column: string): RawBuilder<string> {
  let expr: RawBuilder<string> = sql<string>`lower(${sql.ref(column)})`;
  for (let i = 0; i < UPPER.length; i++)
    expr = sql<string>`replace(${expr}, ${sql.lit(UPPER[i])}, ${sql.lit(LOWER[i])})`;
  return sql<string>`replace(${expr}, ${sql.lit('ё')}, ${sql.lit('е')})`;
}

/**
 * Contact search for the admin UI: by any part of the address or the name (issue 37), case- and
 * ё/е-insensitive, newest first, keyset-paged. The text is matched literally: LIKE's wildcards in it are
 * escaped, so "anna_b" finds "anna_b@…" only.
 */
export async function searchContacts(
  db: Executor,
  o: { projectId?: ProjectFilter; email?: string; limit: number; afterId: number | null },
) {
  let q = db
    .selectFrom('contacts')
    .innerJoin('projects', 'projects.id', 'contacts.project_id')
    .select([
      'contacts.id',
      'projects.site_key',
      'contacts.email',
      'contacts.name',
      'contacts.status',
      'contacts.created_at',
      'contacts.updated_at',
    ])
    .orderBy('contacts.id', 'desc')
    .limit(o.limit + 1);
  if (o.projectId !== undefined) q = q.where('contacts.project_id', ...byProject(o.projectId));
  const text = o.email?.trim() ?? '';
  if (text) {
    // Addresses are stored normalised (trimmed, lower case), so the text is normalised the same way for them.
    const address = containsPattern(foldText(normaliseEmail(text)));
    const name = containsPattern(foldText(text));
    q = q.where(
      sql<boolean>`(${foldSql('contacts.email')} like ${address} escape '!' or ${foldSql('contacts.name')} like ${name} escape '!')`,
    );
  }
  if (o.afterId !== null) q = q.where('contacts.id', '<', o.afterId);
  return q.execute();
}

/** Who or what changed a contact's status, kept on the contact (SPEC §12: which e-mail and report). */
export interface StatusCause {
  reason: ContactStatusReason;
  emailId?: number | null;
  reportId?: number | null;
}

/** Sets the status and its cause; false when `onlyFrom` kept the row as it was. */
export async function setContactStatus(
  db: Executor,
  id: number,
  status: ContactStatus,
  now: number,
  onlyFrom?: ContactStatus[],
  cause?: StatusCause,
): Promise<boolean> {
  let q = db
    .updateTable('contacts')
    .set({
      status,
      updated_at: now,
      status_reason: cause?.reason ?? null,
      status_email_id: cause?.emailId ?? null,
      status_report_id: cause?.reportId ?? null,
      status_changed_at: now,
    })
    .where('id', '=', id);
  // A conditional change never overrides a stronger status set concurrently (e.g. admin_blocked).
  if (onlyFrom) q = q.where('status', 'in', onlyFrom);
  const r = await q.executeTakeFirst();
  const changed = Number(r.numUpdatedRows ?? 0) > 0;
  // A status that stops e-mails holds back hand-overs under way until it commits (issue 30).
  if (changed && status !== 'active') await holdHandOvers(db, { contactId: id });
  return changed;
}

export interface ListRow {
  id: number;
  project_id: number;
  name: string;
  created_at: number;
}

export async function findList(db: Executor, id: number): Promise<ListRow | undefined> {
  return db.selectFrom('lists').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listLists(db: Executor, projectId: number): Promise<(ListRow & { members: number })[]> {
  return db
    .selectFrom('lists')
    .leftJoin('list_members', 'list_members.list_id', 'lists.id')
    .select(['lists.id', 'lists.project_id', 'lists.name', 'lists.created_at'])
    .select((eb) => eb.fn.count<number>('list_members.contact_id').as('members'))
    .where('lists.project_id', '=', projectId)
    .groupBy(['lists.id', 'lists.project_id', 'lists.name', 'lists.created_at'])
    .orderBy('lists.id')
    .execute()
    .then((rows) => rows.map((r) => ({ ...r, members: Number(r.members) })));
}

/**
 * Address books are unique by name within a project; creating an existing one returns it. The unique
 * index decides between concurrent creators (insert … on conflict do nothing, then read).
 */
export async function createList(
  db: Executor,
  projectId: number,
  name: string,
  now: number,
  id?: number,
): Promise<{ list: ListRow; created: boolean }> {
  const list = await db
    .insertInto('lists')
    .values({ ...(id !== undefined ? { id } : {}), project_id: projectId, name, created_at: now })
    .onConflict((oc) => oc.columns(['project_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (list) return { list, created: true };
  const existing = await db
    .selectFrom('lists')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return { list: existing, created: false };
}

/** Adds once; returns true when the contact was not yet in the book. */
export async function addToList(db: Executor, listId: number, contactId: number, now: number): Promise<boolean> {
  const res = await db
    .insertInto('list_members')
    .values({ list_id: listId, contact_id: contactId, added_at: now })
    .onConflict((oc) => oc.columns(['list_id', 'contact_id']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function listMembers(db: Executor, listId: number, limit: number, afterContactId: number | null) {
  let q = db
    .selectFrom('list_members')
    .innerJoin('contacts', 'contacts.id', 'list_members.contact_id')
    .select([
      'contacts.id as contact_id',
      'contacts.email',
      'contacts.name',
      'contacts.status',
      'list_members.added_at',
    ])
    .where('list_members.list_id', '=', listId)
    .orderBy('contacts.id')
    .limit(limit + 1);
  if (afterContactId !== null) q = q.where('contacts.id', '>', afterContactId);
  return q.execute();
}

export async function contactLists(db: Executor, contactId: number) {
  return db
    .selectFrom('list_members')
    .innerJoin('lists', 'lists.id', 'list_members.list_id')
    .select(['lists.id as list_id', 'lists.name', 'list_members.added_at'])
    .where('list_members.contact_id', '=', contactId)
    .orderBy('lists.id')
    .execute();
}
