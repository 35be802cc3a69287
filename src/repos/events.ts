// The event log (chronology of incoming gateway requests, SPEC §5).
import { sql } from 'kysely';
import { PREPARED, type Dialect } from '../db/index.js';
import type { EventRow, NewEmail, NewEvent } from '../db/schema.js';
import { insertEmailsStatement } from './emails.js';
import { insertIdempotencyStatement, type NewIdempotencyRecord } from './idempotency.js';
import { columnList, unnest } from './setBased.js';
import { iso, parseJson, type Executor, byProject, type ProjectFilter } from './types.js';

export async function insertEvent(db: Executor, e: NewEvent): Promise<number> {
  const row = await db.insertInto('events').values(e).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

const NEW_EVENT = {
  id: 'bigint',
  project_id: 'bigint',
  key_id: 'bigint',
  key_last4: 'text',
  endpoint: 'text',
  event_type: 'text',
  email: 'text',
  order_id: 'text',
  idempotency_key: 'text',
  http_status: 'integer',
  accepted: 'integer',
  error_code: 'text',
  payload: 'text',
  effects: 'text',
  created_at: 'bigint',
} as const;

/**
 * What a batch of accepted requests writes last (PostgreSQL), in one statement: their e-mails, their
 * event rows (ids drawn ahead with reserveIds, effects included) and their idempotency records, the
 * first two as data-modifying CTEs of the third. Returns how many records were stored: fewer than given
 * means a key was stored before (or by a concurrent request that committed first).
 */
export async function insertAcceptedMany(
  db: Executor,
  rows: {
    emails: (NewEmail & { id: number })[];
    events: (NewEvent & { id: number })[];
    records: NewIdempotencyRecord[];
  },
): Promise<number> {
  const res = await sql`
    ${sql.raw(PREPARED)}with new_emails as (${insertEmailsStatement(rows.emails)}),
    new_events as (insert into events (${columnList(NEW_EVENT)})
      select ${columnList(NEW_EVENT, 'u')} from ${unnest(rows.events, NEW_EVENT)})
    ${insertIdempotencyStatement(rows.records)}`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}

export async function setEventEffects(db: Executor, id: number, effects: Record<string, unknown>): Promise<void> {
  await db
    .updateTable('events')
    .set({ effects: JSON.stringify(effects) })
    .where('id', '=', id)
    .execute();
}

export interface EventFilter {
  projectId?: ProjectFilter;
  orderId?: string;
  eventType?: string;
  endpoint?: string;
  email?: string;
  status?: 'accepted' | 'rejected';
  since?: number;
  until?: number;
  order: 'asc' | 'desc';
  limit: number;
  cursor: number | null;
}

export async function listEvents(db: Executor, f: EventFilter) {
  let q = db
    .selectFrom('events')
    .innerJoin('projects', 'projects.id', 'events.project_id')
    .selectAll('events')
    .select('projects.site_key')
    .orderBy('events.id', f.order)
    .limit(f.limit + 1);
  if (f.projectId !== undefined) q = q.where('events.project_id', ...byProject(f.projectId));
  if (f.orderId !== undefined) q = q.where('events.order_id', '=', f.orderId);
  if (f.eventType !== undefined) q = q.where('events.event_type', '=', f.eventType);
  if (f.endpoint !== undefined) q = q.where('events.endpoint', '=', f.endpoint);
  if (f.email !== undefined) q = q.where('events.email', '=', f.email);
  if (f.status !== undefined) q = q.where('events.accepted', '=', f.status === 'accepted' ? 1 : 0);
  if (f.since !== undefined) q = q.where('events.created_at', '>=', f.since);
  if (f.until !== undefined) q = q.where('events.created_at', '<', f.until);
  if (f.cursor !== null) q = q.where('events.id', f.order === 'desc' ? '<' : '>', f.cursor);
  const rows = await q.execute();
  const more = rows.length > f.limit;
  const items = rows.slice(0, f.limit).map(toEventView);
  return { items, nextId: more ? items[items.length - 1].id : null };
}

export async function findEvent(db: Executor, id: number) {
  const row = await db
    .selectFrom('events')
    .innerJoin('projects', 'projects.id', 'events.project_id')
    .selectAll('events')
    .select('projects.site_key')
    .where('events.id', '=', id)
    .executeTakeFirst();
  return row && toEventView(row);
}

export function toEventView(r: EventRow & { site_key: string }) {
  return {
    id: r.id,
    site_key: r.site_key,
    received_at: iso(r.created_at)!,
    endpoint: r.endpoint,
    event_type: r.event_type,
    email: r.email,
    order_id: r.order_id,
    idempotency_key: r.idempotency_key,
    key_id: r.key_id,
    key_last4: r.key_last4,
    http_status: r.http_status,
    accepted: r.accepted === 1,
    error_code: r.error_code,
    payload: parseJson<unknown>(r.payload, null),
    effects: parseJson<Record<string, unknown>>(r.effects, {}),
  };
}

export async function eventStats(
  db: Executor,
  dialect: Dialect,
  f: { projectId?: ProjectFilter; endpoint?: string; since?: number; until?: number },
) {
  const base = () => {
    let q = db.selectFrom('events');
    if (f.projectId !== undefined) q = q.where('project_id', ...byProject(f.projectId));
    if (f.endpoint !== undefined) q = q.where('endpoint', '=', f.endpoint);
    if (f.since !== undefined) q = q.where('created_at', '>=', f.since);
    if (f.until !== undefined) q = q.where('created_at', '<', f.until);
    return q;
  };
  const accepted = sql<number>`sum(case when accepted = 1 then 1 else 0 end)`;
  const rejected = sql<number>`sum(case when accepted = 1 then 0 else 1 end)`;
  const totals = await base()
    .select([sql<number>`count(*)`.as('total'), accepted.as('accepted'), rejected.as('rejected')])
    .executeTakeFirstOrThrow();
  const byType = await base()
    .select(['event_type', sql<number>`count(*)`.as('total'), accepted.as('accepted'), rejected.as('rejected')])
    .groupBy('event_type')
    .orderBy('event_type')
    .execute();
  // The same event_type from two endpoints (course_paid: a purchase, or a transactional send) are
  // different things: counted apart.
  const byEndpointType = await base()
    .select([
      'endpoint',
      'event_type',
      sql<number>`count(*)`.as('total'),
      accepted.as('accepted'),
      rejected.as('rejected'),
    ])
    .groupBy(['endpoint', 'event_type'])
    .orderBy('endpoint')
    .orderBy('event_type')
    .execute();
  const day =
    dialect === 'postgres'
      ? sql<string>`to_char(to_timestamp(created_at / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')`
      : sql<string>`strftime('%Y-%m-%d', created_at / 1000, 'unixepoch')`;
  const byDay = await base()
    .select([day.as('day'), sql<number>`count(*)`.as('total'), accepted.as('accepted'), rejected.as('rejected')])
    .groupBy(day)
    .orderBy(day)
    .execute();
  const byCode = await base()
    .select(['error_code', sql<number>`count(*)`.as('total')])
    .where('accepted', '=', 0)
    .groupBy('error_code')
    .orderBy('error_code')
    .execute();

  let eq = db.selectFrom('scheduled_emails').innerJoin('events', 'events.id', 'scheduled_emails.event_id');
  if (f.projectId !== undefined) eq = eq.where('events.project_id', ...byProject(f.projectId));
  if (f.endpoint !== undefined) eq = eq.where('events.endpoint', '=', f.endpoint);
  if (f.since !== undefined) eq = eq.where('events.created_at', '>=', f.since);
  if (f.until !== undefined) eq = eq.where('events.created_at', '<', f.until);
  const emails = await eq
    .select(['scheduled_emails.status', sql<number>`count(*)`.as('total')])
    .groupBy('scheduled_emails.status')
    .execute();

  const n = (v: unknown) => Number(v ?? 0);
  return {
    total: n(totals.total),
    accepted: n(totals.accepted),
    rejected: n(totals.rejected),
    by_event_type: byType.map((r) => ({
      event_type: r.event_type,
      total: n(r.total),
      accepted: n(r.accepted),
      rejected: n(r.rejected),
    })),
    by_endpoint: [...new Set(byEndpointType.map((r) => r.endpoint))].map((endpoint) => {
      const rows = byEndpointType.filter((r) => r.endpoint === endpoint);
      const sum = (k: 'total' | 'accepted' | 'rejected') => rows.reduce((s, r) => s + n(r[k]), 0);
      return { endpoint, total: sum('total'), accepted: sum('accepted'), rejected: sum('rejected') };
    }),
    by_endpoint_and_type: byEndpointType.map((r) => ({
      endpoint: r.endpoint,
      event_type: r.event_type,
      total: n(r.total),
      accepted: n(r.accepted),
      rejected: n(r.rejected),
    })),
    by_day: byDay.map((r) => ({ day: r.day, total: n(r.total), accepted: n(r.accepted), rejected: n(r.rejected) })),
    rejected_by_code: byCode.map((r) => ({ code: r.error_code ?? 'unknown', total: n(r.total) })),
    emails_by_status: Object.fromEntries(emails.map((r) => [r.status, n(r.total)])),
  };
}
