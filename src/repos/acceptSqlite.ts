// The accept statements on SQLite (repos/acceptStatements.ts), written once as SQL text and run as
// compiled queries: no Kysely query building per request, and db/index.ts keeps one prepared statement
// per text, so each is parsed and planned once per process. One statement per row: here a statement
// costs microseconds and what requests share is the commit (db/groupCommit.ts).
//
// They run inside the request's unit of the group commit, on the process's one SQLite connection, which
// the unit holds alone until it ends: ids read ahead (reserveIds: one past the largest id or sequence
// value) cannot be taken by another writer before the rows are inserted. Not by another process either:
// the transaction opened with BEGIN IMMEDIATE (db/sqliteBusy.ts), so it holds the file's write lock from
// its first read.
import { CompiledQuery } from 'kysely';
import { toFlag } from '../db/flags.js';
import type { NewEmail, NewEvent, OrderRow } from '../db/schema.js';
import type { AcceptStatements, AcceptedRows, StoredOrder } from './acceptStatements.js';
import { contactKey, NAME_RULE, type ContactRef, type ContactWanted } from './contacts.js';
import type { NewIdempotencyRecord } from './idempotency.js';
import { orderKey, type NewUnpaidOrder } from './orders.js';
import type { Executor } from './types.js';

const UPSERT_CONTACT = `insert into contacts (project_id, email, name, fields, status, created_at, updated_at)
values (?, ?, ?, '{}', 'active', ?, ?)
on conflict (project_id, email) do update set ${NAME_RULE.set} where ${NAME_RULE.when}
returning id, email, name, status`;
const CONTACT = 'select id, email, name, status from contacts where project_id = ? and email = ?';

async function upsertContacts(db: Executor, wanted: ContactWanted[]): Promise<Map<string, ContactRef>> {
  const out = new Map<string, ContactRef>();
  for (const w of wanted) {
    const args = [w.project_id, w.email, w.name, w.now, w.now];
    let { rows } = await db.executeQuery<ContactRef>(CompiledQuery.raw(UPSERT_CONTACT, args));
    // A known contact whose name stays: the upsert wrote (and returned) nothing.
    if (!rows.length)
      ({ rows } = await db.executeQuery<ContactRef>(CompiledQuery.raw(CONTACT, [w.project_id, w.email])));
    const c = rows[0];
    if (c)
      out.set(contactKey(w.project_id, w.email), { id: Number(c.id), email: c.email, name: c.name, status: c.status });
  }
  return out;
}

/** One past the largest id a table's rows or its AUTOINCREMENT sequence ever had. */
const nextId = (table: string) => `(select max(coalesce((select seq from sqlite_sequence where name = '${table}'), 0),
  coalesce((select max(id) from ${table}), 0)) + 1)`;
const NEXT_IDS = `select ${nextId('events')} as events, ${nextId('scheduled_emails')} as scheduled_emails`;

async function reserveIds(
  db: Executor,
  counts: { events: number; scheduled_emails: number },
): Promise<{ events: number[]; scheduled_emails: number[] }> {
  const { rows } = await db.executeQuery<{ events: number; scheduled_emails: number }>(CompiledQuery.raw(NEXT_IDS));
  const from = (first: number, n: number) => Array.from({ length: n }, (_, i) => Number(first) + i);
  return {
    events: from(rows[0].events, counts.events),
    scheduled_emails: from(rows[0].scheduled_emails, counts.scheduled_emails),
  };
}

const INSERT_ORDER = `insert into orders (project_id, order_id, cart_type, contact_id, status, course_name,
  created_event_id, created_at, updated_at)
values (?, ?, ?, ?, 'unpaid', ?, ?, ?, ?)
on conflict (project_id, order_id) do nothing
returning id`;
const ORDER_STATUS = 'select status from orders where project_id = ? and order_id = ?';

/** insertUnpaidOrder: 'created', or the status of the order that existed already. */
async function insertUnpaidOrder(
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

async function insertUnpaidOrders(
  db: Executor,
  orders: (NewUnpaidOrder & { now: number })[],
): Promise<Map<string, StoredOrder>> {
  const out = new Map<string, StoredOrder>();
  for (const o of orders) out.set(orderKey(o.project_id, o.order_id), await insertUnpaidOrder(db, o, o.now));
  return out;
}

const INSERT_EMAIL = `insert into scheduled_emails (id, project_id, kind, template_id, template_key, contact_id, to_email,
  to_name, order_id, event_id, campaign_id, chain_step, context, status, due_at, attempts, created_at, updated_at,
  topic, last_error)
values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, ?, ?, ?, ?, 0, ?, ?, ?, ?)`;

/** insertEmail under its reserved id (an accept-path row: no campaign, no attempts yet). */
async function insertEmail(db: Executor, e: NewEmail & { id: number }): Promise<void> {
  await db.executeQuery(
    CompiledQuery.raw(INSERT_EMAIL, [
      e.id,
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
}

const INSERT_EVENT = `insert into events (id, project_id, key_id, key_last4, endpoint, event_type, email, order_id,
  idempotency_key, http_status, accepted, error_code, payload, effects, created_at)
values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The event row with its effects, under its reserved id (the rows before it name it). */
async function insertEvent(db: Executor, e: NewEvent & { id: number }): Promise<void> {
  await db.executeQuery(
    CompiledQuery.raw(INSERT_EVENT, [
      e.id,
      e.project_id,
      e.key_id ?? null,
      e.key_last4 ?? null,
      e.endpoint,
      e.event_type ?? null,
      e.email ?? null,
      e.order_id ?? null,
      e.idempotency_key ?? null,
      e.http_status,
      toFlag(e.accepted),
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
async function insertIdempotency(db: Executor, r: NewIdempotencyRecord): Promise<boolean> {
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

async function writeAccepted(db: Executor, rows: AcceptedRows): Promise<number> {
  for (const e of rows.emails) await insertEmail(db, e);
  for (const e of rows.events) await insertEvent(db, e);
  let stored = 0;
  for (const r of rows.records) if (await insertIdempotency(db, r)) stored++;
  return stored;
}

export const sqliteAcceptStatements: AcceptStatements = {
  upsertContacts,
  reserveIds,
  insertUnpaidOrders,
  writeAccepted,
};
