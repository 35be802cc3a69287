// Erasing a person (SPEC §18): the statements that remove every stored copy of one contact's address,
// name and fields, each over at most `limit` rows so that a long history is erased in many short
// transactions. Counts in statistics stay: rows keep their status and times, only their personal
// content goes. test/erasure.test.ts reads the schema and fails on a table this file does not cover.
import { sql } from 'kysely';
import type { ErasureStatus } from '../domain/statuses.js';
import { parseJson, type Executor } from './types.js';

/** Every table, and what erasure does to it or why nothing of a contact is in it. */
export const ERASURE_COVERAGE = {
  contacts: 'address, name and fields replaced; the row stays for the counts (erased_at set)',
  contact_topics: 'deleted',
  consent_records: 'deleted',
  list_members: 'deleted',
  events: 'email and payload cleared (the event row and its effects stay for the statistics)',
  idempotency: "deleted for the person's events (stored answers name the address)",
  scheduled_emails: 'address, name, context, rendered message and error text cleared; pending ones cancelled',
  email_attempts: "relay replies cleared for the person's e-mails (they may quote the address)",
  email_reports: 'recipient, diagnostic and raw report cleared',
  tracking_hits: "deleted for the person's e-mails (network prefix, URL and time of each open and click)",
  email_link_clicks: "deleted for the person's e-mails (a link's URL may carry personal data)",
  email_engagement:
    "free: counters and first open/click times of an e-mail, kept for the statistics like the e-mail's status",
  purchase_attributions: 'free: order id, e-mail id and times; the order row is kept likewise',
  webhook_deliveries: 'data replaced for deliveries that name the address',
  webhook_attempts: "the receiver's answer excerpt cleared for those deliveries",
  audit_log: 'the address replaced in the before/after/target of rows about the contact',
  orders: 'free: order id, cart type, course name, amount; linked to the erased contact row only',
  erasures: 'the address is sealed there only while the erasure runs, then cleared',
  suppressed_hashes: 'free: a keyed hash (HMAC) of the address, kept so the address stays suppressed',
  projects: 'free: site configuration',
  api_keys: 'free: hashes of site keys',
  lists: 'free: address-book names',
  templates: 'free: site templates',
  template_versions: 'free: site templates and the administrator who saved each version',
  template_layouts: 'free: site layouts',
  routes: 'free: configuration',
  course_categories: 'free: configuration',
  paid_lists: 'free: configuration',
  sequences: 'free: configuration',
  cart_chains: 'free: configuration',
  campaigns: 'free: template, book and counts',
  topics: 'free: configuration',
  settings: 'free: installation settings',
  config_version: 'free: a counter',
  sessions: "free: administrators' sessions, not contacts",
  sender_domains: "free: a project's sender domains and their verification",
  login_throttle: "free: administrators' failed logins (account, source address), gone after 15 minutes",
  admin_users: 'free of contacts: administrator accounts (their own data, managed by the accounts UI)',
  admin_user_projects: 'free: configuration',
  admin_tokens: "free: administrators' token hashes",
  project_delivery: 'free: relay settings (sealed secrets)',
  delivery_quota_usage: 'free: counters',
  webhook_endpoints: "free: the site's endpoints",
  kysely_migration: 'free: migration bookkeeping',
  kysely_migration_lock: 'free: migration bookkeeping',
} as const;

export type ErasedCounts = Record<string, number>;

/** What a contact has stored, by the two tables that grow with a history: erased at once or in batches. */
export async function historySize(db: Executor, projectId: number, contactId: number, email: string) {
  const [e, m] = await Promise.all([
    db
      .selectFrom('events')
      .select(sql<number>`count(*)`.as('n'))
      .where('project_id', '=', projectId)
      .where('email', '=', email)
      .executeTakeFirst(),
    db
      .selectFrom('scheduled_emails')
      .select(sql<number>`count(*)`.as('n'))
      .where('contact_id', '=', contactId)
      .executeTakeFirst(),
  ]);
  return Number(e?.n ?? 0) + Number(m?.n ?? 0);
}

const n = (r: { numUpdatedRows?: bigint; numDeletedRows?: bigint } | undefined) =>
  Number(r?.numUpdatedRows ?? r?.numDeletedRows ?? 0);

/** The rows tied to the contact by id: choices, consent, books; pending e-mails cancelled. */
export async function eraseContactRows(db: Executor, contactId: number, now: number): Promise<ErasedCounts> {
  const out: ErasedCounts = {};
  out.contact_topics = n(await db.deleteFrom('contact_topics').where('contact_id', '=', contactId).executeTakeFirst());
  out.consent_records = n(
    await db.deleteFrom('consent_records').where('contact_id', '=', contactId).executeTakeFirst(),
  );
  out.list_members = n(await db.deleteFrom('list_members').where('contact_id', '=', contactId).executeTakeFirst());
  await db
    .updateTable('scheduled_emails')
    .set({ status: 'cancelled', last_error: 'the person was erased', updated_at: now })
    .where('contact_id', '=', contactId)
    .where('status', 'in', ['queued', 'scheduled'])
    .execute();
  return out;
}

/** The contact row itself: kept (e-mails and orders refer to it, counts stay), its content gone. */
export async function tombstoneContact(db: Executor, contactId: number, now: number): Promise<void> {
  await db
    .updateTable('contacts')
    .set({
      email: `erased-${contactId}@erased.invalid`,
      name: null,
      fields: '{}',
      status: 'admin_blocked',
      status_reason: null,
      status_email_id: null,
      status_report_id: null,
      status_changed_at: now,
      erased_at: now,
      updated_at: now,
    })
    .where('id', '=', contactId)
    .execute();
}

/**
 * One batch of the history: at most `limit` events, then e-mails (with their attempts and reports), then
 * webhook deliveries naming the address. Returns what it erased; all zero means the history is clean.
 */
export async function eraseHistoryBatch(
  db: Executor,
  p: { projectId: number; contactId: number; email: string; limit: number },
): Promise<ErasedCounts> {
  const out: ErasedCounts = {};
  const events = await db
    .selectFrom('events')
    .select('id')
    .where('project_id', '=', p.projectId)
    .where('email', '=', p.email)
    .limit(p.limit)
    .execute();
  if (events.length) {
    const ids = events.map((e) => Number(e.id));
    out.idempotency = n(await db.deleteFrom('idempotency').where('event_id', 'in', ids).executeTakeFirst());
    out.events = n(
      await db.updateTable('events').set({ email: null, payload: null }).where('id', 'in', ids).executeTakeFirst(),
    );
  }
  const emails = await db
    .selectFrom('scheduled_emails')
    .select('id')
    .where('contact_id', '=', p.contactId)
    .where('to_email', '<>', '')
    .limit(p.limit)
    .execute();
  if (emails.length) {
    const ids = emails.map((e) => Number(e.id));
    out.email_attempts = n(
      await db
        .updateTable('email_attempts')
        .set({ reply: null })
        .where('scheduled_email_id', 'in', ids)
        .executeTakeFirst(),
    );
    out.tracking_hits = n(await db.deleteFrom('tracking_hits').where('email_id', 'in', ids).executeTakeFirst());
    out.email_link_clicks = n(await db.deleteFrom('email_link_clicks').where('email_id', 'in', ids).executeTakeFirst());
    out.email_reports = n(
      await db
        .updateTable('email_reports')
        .set({ recipient: null, diagnostic: null, raw: '' })
        .where((eb) => eb.or([eb('email_id', 'in', ids), eb('contact_id', '=', p.contactId)]))
        .executeTakeFirst(),
    );
    out.scheduled_emails = n(
      await db
        .updateTable('scheduled_emails')
        .set({
          to_email: '',
          to_name: null,
          context: '{}',
          rendered: null,
          last_error: sql`case when last_error like ${`%${p.email}%`} then '[erased]' else last_error end`,
        })
        .where('id', 'in', ids)
        .executeTakeFirst(),
    );
  }
  const deliveries = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('project_id', '=', p.projectId)
    // `_` or `%` in an address widens the match: a little more webhook data erased, never less.
    .where('data', 'like', `%${p.email}%`)
    .limit(p.limit)
    .execute();
  if (deliveries.length) {
    const ids = deliveries.map((d) => Number(d.id));
    out.webhook_attempts = n(
      await db
        .updateTable('webhook_attempts')
        .set({ response_excerpt: null })
        .where('delivery_id', 'in', ids)
        .executeTakeFirst(),
    );
    out.webhook_deliveries = n(
      await db
        .updateTable('webhook_deliveries')
        .set({ data: '{"erased":true}' })
        .where('id', 'in', ids)
        .executeTakeFirst(),
    );
  }
  return out;
}

/** Audit rows about the contact keep what was done, without the address. */
export async function scrubAudit(db: Executor, contactId: number, email: string): Promise<number> {
  const r = await db
    .updateTable('audit_log')
    .set({
      before: sql`replace(before, ${email}, '[erased]')`,
      after: sql`replace(after, ${email}, '[erased]')`,
      target: sql`replace(target, ${email}, '[erased]')`,
    })
    .where((eb) =>
      eb.or([
        eb('target', '=', `contact:${contactId}`),
        eb('before', 'like', `%${email}%`),
        eb('after', 'like', `%${email}%`),
        eb('target', 'like', `%${email}%`),
      ]),
    )
    .executeTakeFirst();
  return n(r);
}

export const addCounts = (a: ErasedCounts, b: ErasedCounts): ErasedCounts => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
};
export const isEmpty = (c: ErasedCounts) => Object.values(c).every((v) => v === 0);

export interface ErasureRow {
  id: number;
  project_id: number;
  contact_id: number;
  status: ErasureStatus;
  sealed_email: string | null;
  erased: ErasedCounts;
  created_at: number;
  finished_at: number | null;
}

const toRow = (r: {
  id: number;
  project_id: number;
  contact_id: number;
  status: ErasureStatus;
  sealed_email: string | null;
  erased: string;
  created_at: number;
  finished_at: number | null;
}): ErasureRow => ({
  ...r,
  id: Number(r.id),
  project_id: Number(r.project_id),
  contact_id: Number(r.contact_id),
  erased: parseJson<ErasedCounts>(r.erased, {}),
  created_at: Number(r.created_at),
  finished_at: r.finished_at === null ? null : Number(r.finished_at),
});

export async function insertErasure(
  db: Executor,
  e: { project_id: number; contact_id: number; sealed_email: string; erased: ErasedCounts },
  now: number,
): Promise<number> {
  const r = await db
    .insertInto('erasures')
    .values({
      ...e,
      status: 'in_progress',
      erased: JSON.stringify(e.erased),
      created_at: now,
      locked_by: null,
      locked_until: null,
      finished_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(r.id);
}

export async function latestErasure(db: Executor, contactId: number): Promise<ErasureRow | undefined> {
  const r = await db
    .selectFrom('erasures')
    .selectAll()
    .where('contact_id', '=', contactId)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return r ? toRow(r) : undefined;
}

/** Takes one running erasure whose lease is free, for `leaseMs`. */
export async function claimErasure(db: Executor, workerId: string, now: number, leaseMs: number) {
  const candidate = await db
    .selectFrom('erasures')
    .select('id')
    .where('status', '=', 'in_progress')
    .where((eb) =>
      eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now), eb('locked_by', '=', workerId)]),
    )
    .orderBy('id')
    .executeTakeFirst();
  if (!candidate) return undefined;
  // Compare-and-set on the lease: of two workers, one wins the row.
  const won = await db
    .updateTable('erasures')
    .set({ locked_by: workerId, locked_until: now + leaseMs })
    .where('id', '=', candidate.id)
    .where('status', '=', 'in_progress')
    .where((eb) =>
      eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now), eb('locked_by', '=', workerId)]),
    )
    .executeTakeFirst();
  if (n(won) === 0) return undefined;
  const r = await db.selectFrom('erasures').selectAll().where('id', '=', candidate.id).executeTakeFirstOrThrow();
  return toRow(r);
}

/** Adds a batch's counts (and finishes) under the worker's lease; false when the lease was lost. */
export async function recordErasureProgress(
  db: Executor,
  p: { id: number; workerId: string; erased: ErasedCounts; done: boolean; now: number; leaseMs: number },
): Promise<boolean> {
  const r = await db
    .updateTable('erasures')
    .set({
      erased: JSON.stringify(p.erased),
      locked_until: p.done ? null : p.now + p.leaseMs,
      locked_by: p.done ? null : p.workerId,
      ...(p.done ? { status: 'done' as const, sealed_email: null, finished_at: p.now } : {}),
    })
    .where('id', '=', p.id)
    .where('locked_by', '=', p.workerId)
    .executeTakeFirst();
  return n(r) > 0;
}

/** Finishes an erasure done within the request. */
export async function finishErasure(db: Executor, id: number, erased: ErasedCounts, now: number) {
  await db
    .updateTable('erasures')
    .set({ status: 'done', sealed_email: null, finished_at: now, erased: JSON.stringify(erased) })
    .where('id', '=', id)
    .execute();
}
