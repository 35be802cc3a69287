// The e-mail outbox (scheduled_emails). Rows are written in the transaction of the event that caused
// them; the delivery worker claims and updates them.
import { sql, type ExpressionBuilder, type RawBuilder } from 'kysely';
import { fromFlag } from '../db/flags.js';
import type { Dialect } from '../db/index.js';
import type { Database, EmailRow, EmailStatus, NewEmail } from '../db/schema.js';
import { canonicalAddress } from '../domain/email.js';
import { emailReason } from '../domain/emailReason.js';
import { ORDER_PAID_NOTE } from '../domain/handOver.js';
import { emailFromRow, emailToRow } from './flagRows.js';
import { lockInIdOrder } from './outbox.js';
import { columnList, unnest } from './setBased.js';
import { iso, parseJson, type Executor, byProject, type ProjectFilter } from './types.js';

export const PENDING: EmailStatus[] = ['scheduled', 'queued'];

export async function insertEmail(db: Executor, e: NewEmail): Promise<number> {
  const row = await db.insertInto('scheduled_emails').values(emailToRow(e)).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

const NEW_EMAIL = {
  id: 'bigint',
  project_id: 'bigint',
  kind: 'text',
  template_id: 'bigint',
  template_key: 'text',
  contact_id: 'bigint',
  to_email: 'text',
  to_name: 'text',
  order_id: 'text',
  event_id: 'bigint',
  campaign_id: 'bigint',
  chain_step: 'text',
  context: 'text',
  status: 'text',
  due_at: 'bigint',
  attempts: 'integer',
  created_at: 'bigint',
  updated_at: 'bigint',
  topic: 'text',
  last_error: 'text',
} as const;

/** insertEmail for many rows (PostgreSQL), ids drawn ahead (reserveIds): a statement for insertAcceptedMany. */
export function insertEmailsStatement(rows: (NewEmail & { id: number })[]): RawBuilder<unknown> {
  return sql`insert into scheduled_emails (${columnList(NEW_EMAIL)})
    select ${columnList(NEW_EMAIL, 'u')} from ${unnest(rows, NEW_EMAIL)}`;
}

export async function findEmail(db: Executor, id: number): Promise<EmailRow | undefined> {
  const row = await db.selectFrom('scheduled_emails').selectAll().where('id', '=', id).executeTakeFirst();
  return row && emailFromRow(row);
}

/**
 * A purchase's stop (issue 30): cancels every cart e-mail of the order not yet handed to the relay
 * (pending, or claimed by a worker that has not started its send) and marks the ones already in flight
 * with the purchase's event. The order's rows are locked first (lockInIdOrder), so a hand-over under way
 * finishes before this reads them, and one not yet begun waits for the purchase and finds its row
 * cancelled (repos/handOver.ts startSends). Returns both.
 */
export async function stopCartEmails(
  db: Executor,
  projectId: number,
  orderId: string,
  now: number,
  eventId: number | null,
) {
  const ofOrder = (eb: ExpressionBuilder<Database, 'scheduled_emails'>) =>
    eb.and([eb('project_id', '=', projectId), eb('order_id', '=', orderId), eb('kind', '=', 'cart')]);
  await lockInIdOrder(db, (q) => q.where(ofOrder).where('status', 'in', [...PENDING, 'sending']));
  const returned = [
    'id',
    'project_id',
    'event_id',
    'order_id',
    'to_email',
    'template_key',
    'chain_step',
    'due_at',
  ] as const;
  const stopped = await db
    .updateTable('scheduled_emails')
    .where(ofOrder)
    .set({ status: 'cancelled', updated_at: now, last_error: ORDER_PAID_NOTE, cancelled_by_event_id: eventId })
    .where((eb) =>
      eb.or([eb('status', 'in', PENDING), eb.and([eb('status', '=', 'sending'), eb('send_started_at', 'is', null)])]),
    )
    .returning(returned)
    .execute();
  const inFlight = await db
    .updateTable('scheduled_emails')
    .where(ofOrder)
    .set((eb) => ({ in_flight_event_id: eb.fn.coalesce('in_flight_event_id', eb.val(eventId)) }))
    .where('status', '=', 'sending')
    .where('send_started_at', 'is not', null)
    .returning([...returned, 'send_started_at'])
    .execute();
  return { stopped, inFlight };
}

export interface EmailFilter {
  projectId?: ProjectFilter;
  orderId?: string;
  status?: string;
  to?: string;
  eventId?: number;
  contactId?: number;
  campaignId?: number;
  limit: number;
  cursor: number | null;
}

/** Due-but-unsent rows are stored as `scheduled` and shown as `queued` once their time has come. */
export function visibleStatus(status: EmailStatus, dueAt: number, now: number): EmailStatus {
  return status === 'scheduled' && dueAt <= now ? 'queued' : status;
}

/** The rendered subject, read from the stored message without parsing its bodies (null until rendered). */
const renderedSubject = (dialect: Dialect) =>
  dialect === 'postgres'
    ? sql<string | null>`(scheduled_emails.rendered::json ->> 'subject')`
    : sql<string | null>`json_extract(scheduled_emails.rendered, '$.subject')`;

export async function listEmails(db: Executor, dialect: Dialect, f: EmailFilter, now: number) {
  let q = db
    .selectFrom('scheduled_emails')
    .innerJoin('projects', 'projects.id', 'scheduled_emails.project_id')
    .select([
      'scheduled_emails.id',
      'projects.site_key',
      'scheduled_emails.kind',
      'scheduled_emails.template_key',
      'scheduled_emails.to_email',
      'scheduled_emails.status',
      'scheduled_emails.due_at',
      'scheduled_emails.sent_at',
      'scheduled_emails.order_id',
      'scheduled_emails.event_id',
      'scheduled_emails.campaign_id',
      'scheduled_emails.attempts',
      'scheduled_emails.last_error',
      'scheduled_emails.waiting_since',
      'scheduled_emails.contact_id',
      'scheduled_emails.chain_step',
      'scheduled_emails.is_test',
      renderedSubject(dialect).as('subject'),
    ])
    .orderBy('scheduled_emails.id', 'desc')
    .limit(f.limit + 1);
  if (f.projectId !== undefined) q = q.where('scheduled_emails.project_id', ...byProject(f.projectId));
  if (f.orderId !== undefined) q = q.where('scheduled_emails.order_id', '=', f.orderId);
  if (f.to !== undefined) q = q.where('scheduled_emails.to_email', '=', canonicalAddress(f.to));
  if (f.eventId !== undefined) q = q.where('scheduled_emails.event_id', '=', f.eventId);
  if (f.contactId !== undefined) q = q.where('scheduled_emails.contact_id', '=', f.contactId);
  if (f.campaignId !== undefined) q = q.where('scheduled_emails.campaign_id', '=', f.campaignId);
  if (f.status === 'queued')
    q = q.where((eb) =>
      eb.or([
        eb('scheduled_emails.status', '=', 'queued'),
        eb.and([eb('scheduled_emails.status', '=', 'scheduled'), eb('scheduled_emails.due_at', '<=', now)]),
      ]),
    );
  else if (f.status === 'scheduled')
    q = q.where('scheduled_emails.status', '=', 'scheduled').where('scheduled_emails.due_at', '>', now);
  else if (f.status !== undefined) q = q.where('scheduled_emails.status', '=', f.status as EmailStatus);
  if (f.cursor !== null) q = q.where('scheduled_emails.id', '<', f.cursor);
  const rows = await q.execute();
  const more = rows.length > f.limit;
  const items = rows.slice(0, f.limit).map((r) => ({
    id: r.id,
    site_key: r.site_key,
    kind: r.kind,
    template_key: r.template_key,
    to: r.to_email,
    subject: r.subject ?? null,
    status: visibleStatus(r.status, Number(r.due_at), now),
    due_at: iso(r.due_at)!,
    sent_at: iso(r.sent_at),
    order_id: r.order_id,
    event_id: r.event_id,
    campaign_id: r.campaign_id,
    contact_id: r.contact_id,
    chain_step: r.chain_step,
    attempts: r.attempts,
    last_error: r.last_error,
    waiting_since: waitingSince(r.status, r.waiting_since),
    test: fromFlag(r.is_test),
    reason: emailReason(r.status, r.last_error),
  }));
  return { items, nextId: more ? items[items.length - 1].id : null };
}

export interface RenderedMessage {
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
  /** The template version it was rendered from (SPEC §16); absent in e-mails sent before. */
  template_version?: number | null;
}

/** "Waiting for the relay since …" (SPEC §20): only while the e-mail has not gone nor ended. */
const waitingSince = (status: EmailStatus, since: number | null) =>
  since !== null && (status === 'scheduled' || status === 'queued' || status === 'sending') ? iso(since) : null;

export function emailDetail(r: EmailRow & { site_key: string }, now: number) {
  const rendered = parseJson<RenderedMessage | null>(r.rendered, null);
  return {
    id: r.id,
    site_key: r.site_key,
    kind: r.kind,
    template_key: r.template_key,
    to: r.to_email,
    to_name: r.to_name,
    status: visibleStatus(r.status, Number(r.due_at), now),
    due_at: iso(r.due_at)!,
    sent_at: iso(r.sent_at),
    created_at: iso(r.created_at)!,
    order_id: r.order_id,
    event_id: r.event_id,
    campaign_id: r.campaign_id,
    contact_id: r.contact_id,
    chain_step: r.chain_step,
    attempts: r.attempts,
    last_error: r.last_error,
    waiting_since: waitingSince(r.status, r.waiting_since),
    test: r.is_test,
    message_id: r.message_id,
    cancelled_by_event_id: r.cancelled_by_event_id ?? null,
    reason: emailReason(r.status, r.last_error, r.in_flight_event_id),
    send_started_at: iso(r.send_started_at),
    in_flight_event_id: r.in_flight_event_id ?? null,
    context: parseJson<Record<string, unknown>>(r.context, {}),
    subject: rendered?.subject ?? null,
    html: rendered?.html ?? null,
    text: rendered?.text ?? null,
    headers: rendered?.headers ?? {},
    // As rendered; before that, the version a test send asked for (null: the published one at send time).
    template_version: rendered?.template_version ?? (r.template_version === null ? null : Number(r.template_version)),
  };
}

export async function findEmailWithSite(
  db: Executor,
  id: number,
): Promise<(EmailRow & { site_key: string }) | undefined> {
  const row = await db
    .selectFrom('scheduled_emails')
    .innerJoin('projects', 'projects.id', 'scheduled_emails.project_id')
    .selectAll('scheduled_emails')
    .select('projects.site_key')
    .where('scheduled_emails.id', '=', id)
    .executeTakeFirst();
  return row && { ...emailFromRow(row), site_key: row.site_key };
}

/**
 * Scoped reads (SPEC §13): always filtered by the calling key's project, so another project's id reads as
 * absent. The event type comes from the event that caused the e-mail.
 */
function scopedEmails(db: Executor, projectId: number) {
  return db
    .selectFrom('scheduled_emails')
    .leftJoin('events', 'events.id', 'scheduled_emails.event_id')
    .leftJoin('email_engagement', 'email_engagement.email_id', 'scheduled_emails.id')
    .select([
      'email_engagement.first_open_at',
      'email_engagement.first_click_at',
      'scheduled_emails.id',
      'scheduled_emails.status',
      'events.event_type',
      'scheduled_emails.order_id',
      'scheduled_emails.template_key',
      'scheduled_emails.to_email',
      'scheduled_emails.due_at',
      'scheduled_emails.sent_at',
      'scheduled_emails.attempts',
      'scheduled_emails.last_error',
      'scheduled_emails.in_flight_event_id',
    ])
    .where('scheduled_emails.project_id', '=', projectId);
}

type ScopedRow = Awaited<ReturnType<ReturnType<typeof scopedEmails>['execute']>>[number];
function toScopedEmail(r: ScopedRow, now: number) {
  return {
    id: r.id,
    status: visibleStatus(r.status, Number(r.due_at), now),
    event_type: r.event_type ?? null,
    order_id: r.order_id,
    template_key: r.template_key,
    to: r.to_email,
    due_at: iso(r.due_at)!,
    sent_at: iso(r.sent_at),
    attempts: r.attempts,
    outcome: r.last_error,
    reason: emailReason(r.status, r.last_error, r.in_flight_event_id),
    opened_at: iso(r.first_open_at),
    clicked_at: iso(r.first_click_at),
  };
}

export async function findScopedEmail(db: Executor, projectId: number, id: number, now: number) {
  const row = await scopedEmails(db, projectId).where('scheduled_emails.id', '=', id).executeTakeFirst();
  return row && toScopedEmail(row, now);
}

export async function listScopedEmails(
  db: Executor,
  f: { projectId: number; orderId?: string; idempotencyKey?: string; limit: number; cursor: number | null },
  now: number,
) {
  let q = scopedEmails(db, f.projectId)
    .orderBy('scheduled_emails.id', 'desc')
    .limit(f.limit + 1);
  if (f.orderId !== undefined) q = q.where('scheduled_emails.order_id', '=', f.orderId);
  if (f.idempotencyKey !== undefined) q = q.where('events.idempotency_key', '=', f.idempotencyKey);
  if (f.cursor !== null) q = q.where('scheduled_emails.id', '<', f.cursor);
  const rows = await q.execute();
  const items = rows.slice(0, f.limit).map((r) => toScopedEmail(r, now));
  return { items, nextId: rows.length > f.limit ? items[items.length - 1].id : null };
}
