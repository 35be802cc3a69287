import { sql } from 'kysely';
import { PREPARED } from '../db/index.js';
import type { OrderRow } from '../db/schema.js';
import { unnest } from './setBased.js';
import type { Executor } from './types.js';

export interface NewUnpaidOrder {
  project_id: number;
  order_id: string;
  cart_type: string;
  contact_id: number;
  course_name: string | null;
  event_id: number;
}

/** Names one order of a project. */
export const orderKey = (projectId: number, orderId: string) => `${projectId}\n${orderId}`;

const NEW_ORDER = {
  project_id: 'bigint',
  order_id: 'text',
  cart_type: 'text',
  contact_id: 'bigint',
  course_name: 'text',
  event_id: 'bigint',
  now: 'bigint',
} as const;

/**
 * insertUnpaidOrder for many orders at once (PostgreSQL; at most one row per project and order id), in
 * one order (project, order id) so concurrent writers cannot deadlock. Returns, by orderKey, 'created'
 * or the status of the order that existed already.
 */
export async function insertUnpaidOrdersMany(
  db: Executor,
  orders: (NewUnpaidOrder & { now: number })[],
): Promise<Map<string, 'created' | OrderRow['status']>> {
  const out = new Map<string, 'created' | OrderRow['status']>();
  if (!orders.length) return out;
  const rows = [...orders].sort(
    (a, b) => a.project_id - b.project_id || (a.order_id < b.order_id ? -1 : a.order_id > b.order_id ? 1 : 0),
  );
  const created = await sql<{ project_id: number; order_id: string }>`
    ${sql.raw(PREPARED)}insert into orders (project_id, order_id, cart_type, contact_id, status, course_name, created_event_id, created_at, updated_at)
    select u.project_id, u.order_id, u.cart_type, u.contact_id, 'unpaid', u.course_name, u.event_id, u.now, u.now
    from ${unnest(rows, NEW_ORDER, true)}
    order by u.ord
    on conflict (project_id, order_id) do nothing
    returning project_id, order_id`.execute(db);
  for (const o of created.rows) out.set(orderKey(Number(o.project_id), o.order_id), 'created');
  const existing = rows.filter((r) => !out.has(orderKey(r.project_id, r.order_id)));
  if (!existing.length) return out;
  const found = await sql<{ project_id: number; order_id: string; status: OrderRow['status'] }>`
    ${sql.raw(PREPARED)}select o.project_id, o.order_id, o.status from orders o
    join ${unnest(existing, { project_id: 'bigint', order_id: 'text' })} on o.project_id = u.project_id and o.order_id = u.order_id`.execute(
    db,
  );
  for (const o of found.rows) out.set(orderKey(Number(o.project_id), o.order_id), o.status);
  return out;
}

/**
 * Marks an order paid, creating it when the purchase arrives before order-created. The first payment wins,
 * decided by one statement: the insert, or on conflict an update that applies only while the order is
 * unpaid. Concurrent retries of one purchase (payment providers retry webhooks) wait on the row and then
 * see it paid: exactly one of them writes its amount, every other is told `alreadyPaid`.
 */
export async function markOrderPaid(
  db: Executor,
  o: {
    project_id: number;
    order_id: string;
    cart_type: string;
    contact_id: number;
    /** Hundredths of the currency unit (domain/money.ts). */
    amount_minor: number | null;
    currency: string | null;
    paid_at: string | null;
    event_id: number;
  },
  now: number,
): Promise<{ alreadyPaid: boolean }> {
  const paid = {
    status: 'paid' as const,
    amount_minor: o.amount_minor,
    currency: o.currency,
    paid_at: o.paid_at,
    paid_event_id: o.event_id,
    updated_at: now,
  };
  const won = await db
    .insertInto('orders')
    .values({
      project_id: o.project_id,
      order_id: o.order_id,
      cart_type: o.cart_type,
      contact_id: o.contact_id,
      course_name: null,
      created_event_id: null,
      created_at: now,
      ...paid,
    })
    .onConflict((oc) => oc.columns(['project_id', 'order_id']).doUpdateSet(paid).where('orders.status', '<>', 'paid'))
    .returning('id')
    .executeTakeFirst();
  return { alreadyPaid: won === undefined };
}
