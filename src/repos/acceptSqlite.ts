// The statements of the accept path on SQLite, written once as SQL text and run as compiled queries:
// no Kysely query building per request, and db/index.ts keeps one prepared statement per text, so each
// is parsed and planned once per process. Four statements carry what seven did (issue 18):
//   - the contact upsert is one INSERT … ON CONFLICT DO UPDATE … RETURNING (no read first), which also
//     returns the id the request's event row will get (NEXT_EVENT_ID);
//   - the event row is inserted once, last, with its effects (no insert-then-update): the order and
//     e-mail rows written before it name it by that id;
//   - the order and each e-mail are one statement each, as before; the idempotency record too.
// They run inside the unit's transaction (group commit), which holds SQLite's write lock from the
// upsert on, and the unit runs alone on the connection: nothing else can insert an event between the
// upsert that reads the next id and the event row that takes it (were it taken, the insert would fail
// on the primary key and the unit roll back, never link rows to another request's event).
import { CompiledQuery } from 'kysely';
import type { NewEmail, NewEvent, OrderRow } from '../db/schema.js';
import type { ContactRef } from './contacts.js';
import type { NewIdempotencyRecord } from './idempotency.js';
import type { NewUnpaidOrder } from './orders.js';
import type { Executor } from './types.js';

/**
 * The id the next event row gets. events.id is AUTOINCREMENT: the next is one past the larger of the
 * table's sequence and its largest id (the sequence row is absent before the first insert).
 */
const NEXT_EVENT_ID = `(select max(coalesce((select seq from sqlite_sequence where name = 'events'), 0),
  coalesce((select max(id) from events), 0)) + 1)`;

/**
 * upsertContact without fields, in one statement: a new contact gets the name given; a known one takes
 * a non-empty name given (updated_at moves only when the name changes) and keeps its status and fields.
 */
const UPSERT_CONTACT = `insert into contacts (project_id, email, name, fields, status, created_at, updated_at)
values (?, ?, ?, '{}', 'active', ?, ?)
on conflict (project_id, email) do update set
  name = coalesce(nullif(excluded.name, ''), contacts.name),
  updated_at = case when nullif(excluded.name, '') is not null and excluded.name is distinct from contacts.name
    then excluded.updated_at else contacts.updated_at end
returning id, email, name, status, ${NEXT_EVENT_ID} as next_event_id`;

/** The contact (e-mail normalised by the caller) and the id the next event row will get. */
export async function upsertContactOnce(
  db: Executor,
  projectId: number,
  email: string,
  name: string | null,
  now: number,
): Promise<{ contact: ContactRef; nextEventId: number }> {
  const { rows } = await db.executeQuery<ContactRef & { next_event_id: number }>(
    CompiledQuery.raw(UPSERT_CONTACT, [projectId, email, name, now, now]),
  );
  const c = rows[0];
  return {
    contact: { id: Number(c.id), email: c.email, name: c.name, status: c.status },
    nextEventId: Number(c.next_event_id),
  };
}

const INSERT_ORDER = `insert into orders (project_id, order_id, cart_type, contact_id, status, course_name,
  created_event_id, created_at, updated_at)
values (?, ?, ?, ?, 'unpaid', ?, ?, ?, ?)
on conflict (project_id, order_id) do nothing
returning id`;
const ORDER_STATUS = 'select status from orders where project_id = ? and order_id = ?';

/** insertUnpaidOrder: 'created', or the status of the order that existed already. */
export async function insertUnpaidOrderOnce(
  db: Executor,
  o: NewUnpaidOrder,
  now: number,
): Promise<'created' | OrderRow['status']> {
  const created = await db.executeQuery(
    CompiledQuery.raw(INSERT_ORDER, [
      o.project_id,
      o.order_id,
      o.cart_type,
      o.contact_id,
      o.course_name,
      o.event_id,
      now,
      now,
    ]),
  );
  if (created.rows.length) return 'created';
  const { rows } = await db.executeQuery<{ status: OrderRow['status'] }>(
    CompiledQuery.raw(ORDER_STATUS, [o.project_id, o.order_id]),
  );
  // Deleted between the two statements (an admin's cleanup): schedule nothing, as for a known order.
  return rows[0]?.status ?? 'unpaid';
}

const INSERT_EMAIL = `insert into scheduled_emails (project_id, kind, template_id, template_key, contact_id, to_email,
  to_name, order_id, event_id, campaign_id, chain_step, context, status, due_at, attempts, created_at, updated_at,
  topic, last_error)
values (?, ?, ?, ?, ?, ?, ?, ?, ?, null, ?, ?, ?, ?, 0, ?, ?, ?, ?)
returning id`;

/** insertEmail (an accept-path row: no campaign, no attempts yet). */
export async function insertEmailOnce(db: Executor, e: NewEmail): Promise<number> {
  const { rows } = await db.executeQuery<{ id: number }>(
    CompiledQuery.raw(INSERT_EMAIL, [
      e.project_id,
      e.kind,
      e.template_id,
      e.template_key,
      e.contact_id,
      e.to_email,
      e.to_name ?? null,
      e.order_id ?? null,
      e.event_id ?? null,
      e.chain_step ?? null,
      e.context,
      e.status,
      e.due_at,
      e.created_at,
      e.updated_at,
      e.topic ?? null,
      e.last_error ?? null,
    ]),
  );
  return Number(rows[0].id);
}

const INSERT_EVENT = `insert into events (id, project_id, key_id, key_last4, endpoint, event_type, email, order_id,
  idempotency_key, http_status, accepted, error_code, payload, effects, created_at)
values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The event row with its effects, under the id upsertContactOnce gave (the rows before it name it). */
export async function insertEventOnce(db: Executor, id: number, e: NewEvent): Promise<void> {
  await db.executeQuery(
    CompiledQuery.raw(INSERT_EVENT, [
      id,
      e.project_id,
      e.key_id ?? null,
      e.key_last4 ?? null,
      e.endpoint,
      e.event_type ?? null,
      e.email ?? null,
      e.order_id ?? null,
      e.idempotency_key ?? null,
      e.http_status,
      e.accepted,
      e.error_code ?? null,
      e.payload ?? null,
      e.effects ?? '{}',
      e.created_at,
    ]),
  );
}

const INSERT_IDEMPOTENCY = `insert into idempotency (project_id, idempotency_key, request_hash, endpoint, response_status,
  response_body, event_id, created_at)
values (?, ?, ?, ?, ?, ?, ?, ?)
on conflict (project_id, idempotency_key) do nothing`;

/** Returns false when the key is stored already (a repeat, or a request that committed first). */
export async function insertIdempotencyOnce(db: Executor, r: NewIdempotencyRecord): Promise<boolean> {
  const res = await db.executeQuery(
    CompiledQuery.raw(INSERT_IDEMPOTENCY, [
      r.project_id,
      r.idempotency_key,
      r.request_hash,
      r.endpoint,
      r.response_status,
      r.response_body,
      r.event_id,
      r.created_at,
    ]),
  );
  return Number(res.numAffectedRows ?? 0) > 0;
}
