// The event log (chronology of incoming gateway requests, SPEC §5).
import { replayBlocker } from '../domain/refusal.js';
import { sql, type Selectable } from 'kysely';
import { fromFlag, toFlag } from '../db/flags.js';
import { PREPARED, type Dialect } from '../db/index.js';
import type { EventRow, EventsTable, NewEmail, NewEvent } from '../db/schema.js';
import { eventOutcome, REPEAT_ERROR_CODE, type EventOutcome } from '../domain/statuses.js';
import { insertEmailsStatement } from './emails.js';
import { eventFromRow, eventToRow } from './flagRows.js';
import { insertIdempotencyStatement, type NewIdempotencyRecord } from './idempotency.js';
import { columnList, unnest } from './setBased.js';
import { iso, parseJson, type Executor, byProject, type ProjectFilter } from './types.js';

export async function insertEvent(db: Executor, e: NewEvent): Promise<number> {
  const row = await db.insertInto('events').values(eventToRow(e)).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function findEventRow(db: Executor, id: number): Promise<EventRow | undefined> {
  const row = await db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst();
  return row && eventFromRow(row);
}

/** The stored payloads of a project's accepted requests of one event type since `since` (the impact check). */
export function acceptedPayloads(
  db: Executor,
  q: { projectId: number; eventType: string; endpoints: string[]; since: number },
) {
  return db
    .selectFrom('events')
    .select('payload')
    .where('project_id', '=', q.projectId)
    .where('event_type', '=', q.eventType)
    .where('created_at', '>=', q.since)
    .where('accepted', '=', toFlag(true))
    .where('endpoint', 'in', q.endpoints)
    .execute();
}

/** The accepted replay of the event (effects end with the marker the accept executor writes), but `except`. */
export function replayOf(db: Executor, ev: { id: number; project_id: number }, except?: number) {
  let q = db
    .selectFrom('events')
    .select('id')
    .where('project_id', '=', ev.project_id)
    .where('accepted', '=', toFlag(true))
    .where('effects', 'like', `%"replay_of":${Number(ev.id)},"admin_replay":true}`);
  if (except !== undefined) q = q.where('id', '<>', except);
  return q.executeTakeFirst();
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
      select ${columnList(NEW_EVENT, 'u')} from ${unnest(rows.events.map(eventToRow), NEW_EVENT)})
    ${insertIdempotencyStatement(rows.records)}`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}

/** The request's outcome (domain/statuses.ts eventOutcome) as SQL, for filters and counts. */
export const OUTCOME_SQL = sql<EventOutcome>`(case when accepted = 1 then 'accepted' when error_code = ${sql.lit(
  REPEAT_ERROR_CODE,
)} then 'repeated' else 'rejected' end)`;

export interface EventFilter {
  projectId?: ProjectFilter;
  orderId?: string;
  eventType?: string;
  endpoint?: string;
  email?: string;
  status?: EventOutcome;
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
  if (f.status !== undefined) q = q.where(OUTCOME_SQL, '=', f.status);
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

export function toEventView(r: Selectable<EventsTable> & { site_key: string }) {
  const effects = parseJson<Record<string, unknown>>(r.effects, {});
  const accepted = fromFlag(r.accepted);
  const outcome = eventOutcome({ accepted, error_code: r.error_code });
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
    accepted,
    outcome,
    repeat_of: outcome === 'repeated' && typeof effects.repeat_of === 'number' ? effects.repeat_of : null,
    error_code: r.error_code,
    replayable: replayBlocker({ ...r, accepted, effects }) === null,
    payload: parseJson<unknown>(r.payload, null),
    effects,
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
  const count = (o: EventOutcome) => sql<number>`sum(case when ${OUTCOME_SQL} = ${sql.lit(o)} then 1 else 0 end)`;
  const accepted = count('accepted');
  const rejected = count('rejected');
  const repeated = count('repeated');
  const totals = await base()
    .select([
      sql<number>`count(*)`.as('total'),
      accepted.as('accepted'),
      rejected.as('rejected'),
      repeated.as('repeated'),
    ])
    .executeTakeFirstOrThrow();
  const byType = await base()
    .select([
      'event_type',
      sql<number>`count(*)`.as('total'),
      accepted.as('accepted'),
      rejected.as('rejected'),
      repeated.as('repeated'),
    ])
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
      repeated.as('repeated'),
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
    .select([
      day.as('day'),
      sql<number>`count(*)`.as('total'),
      accepted.as('accepted'),
      rejected.as('rejected'),
      repeated.as('repeated'),
    ])
    .groupBy(day)
    .orderBy(day)
    .execute();
  const byCode = await base()
    .select(['error_code', sql<number>`count(*)`.as('total')])
    .where(OUTCOME_SQL, '=', 'rejected')
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
  const bucket = (r: { total: unknown; accepted: unknown; rejected: unknown; repeated: unknown }) => ({
    total: n(r.total),
    accepted: n(r.accepted),
    rejected: n(r.rejected),
    repeated: n(r.repeated),
  });
  return {
    ...bucket(totals),
    by_event_type: byType.map((r) => ({ event_type: r.event_type, ...bucket(r) })),
    by_endpoint: [...new Set(byEndpointType.map((r) => r.endpoint))].map((endpoint) => {
      const rows = byEndpointType.filter((r) => r.endpoint === endpoint);
      const sum = (k: 'total' | 'accepted' | 'rejected' | 'repeated') => rows.reduce((s, r) => s + n(r[k]), 0);
      return {
        endpoint,
        ...bucket({
          total: sum('total'),
          accepted: sum('accepted'),
          rejected: sum('rejected'),
          repeated: sum('repeated'),
        }),
      };
    }),
    by_endpoint_and_type: byEndpointType.map((r) => ({ endpoint: r.endpoint, event_type: r.event_type, ...bucket(r) })),
    by_day: byDay.map((r) => ({ day: r.day, ...bucket(r) })),
    rejected_by_code: byCode.map((r) => ({ code: r.error_code ?? 'unknown', total: n(r.total) })),
    emails_by_status: Object.fromEntries(emails.map((r) => [r.status, n(r.total)])),
  };
}
