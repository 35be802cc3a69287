import type { OrderRow } from '../db/schema.js';
import type { Executor } from './types.js';

export async function findOrder(db: Executor, projectId: number, orderId: string): Promise<OrderRow | undefined> {
  return db
    .selectFrom('orders')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('order_id', '=', orderId)
    .executeTakeFirst();
}

/**
 * Records an unpaid order. Returns undefined when the order already exists (a repeat, or the purchase
 * came first): the unique index decides between racing requests.
 */
export async function insertUnpaidOrder(
  db: Executor,
  o: {
    project_id: number;
    order_id: string;
    cart_type: string;
    contact_id: number;
    course_name: string | null;
    event_id: number;
  },
  now: number,
): Promise<OrderRow | undefined> {
  return db
    .insertInto('orders')
    .values({
      project_id: o.project_id,
      order_id: o.order_id,
      cart_type: o.cart_type,
      contact_id: o.contact_id,
      status: 'unpaid',
      course_name: o.course_name,
      created_event_id: o.event_id,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(['project_id', 'order_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
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
