// Accepting many requests with a few statements (PostgreSQL).
//
// The profile of the accept path on PostgreSQL was round trips: seven per request, each costing the API
// process a socket write that wakes a server backend, more than the work it carried. Here requests that
// arrive while a batch is being written queue up and are written together in one transaction with
// set-based statements (ids drawn from the sequences, then INSERT … SELECT FROM unnest(…) per table, in
// repos/): about eight round trips per batch, whatever its size. Every request is answered only after
// the COMMIT that holds its writes, as before.
//
// The statements reproduce runPlan's effects exactly (contacts upserted by the same rules, an existing
// order schedules nothing, the same event-log row and idempotency record; test/accept-batch.test.ts
// compares the rows). A batch holds at most one request per contact, per order and per idempotency key;
// the others wait for the next batch, so the set-based statements never see two requests touching the
// same row. When a batch fails it is rolled back and every request in it is carried out on its own by
// the per-request path, which knows how to replay or to refuse: silently when the cause is a repeated
// idempotency key (expected), otherwise logged at error and counted, since the fast path is broken.
import type { Transaction } from 'kysely';
import { batcher, fulfilled } from '../../batcher.js';
import type { Db } from '../../db/index.js';
import type { Database, NewEmail, NewEvent } from '../../db/schema.js';
import type { Body } from '../../domain/validation.js';
import type { AcceptBatchFallbackReason } from '../../metrics.js';
import { contactKey, normaliseEmail, upsertContactsMany, type ContactWanted } from '../../repos/contacts.js';
import { insertAcceptedMany } from '../../repos/events.js';
import type { NewIdempotencyRecord } from '../../repos/idempotency.js';
import { insertUnpaidOrdersMany, orderKey, type NewUnpaidOrder } from '../../repos/orders.js';
import { reserveIds } from '../../repos/setBased.js';
import type { GatewayCall } from '../context.js';
import { acceptedEventRow, idempotencyRow, incoming, type Accepted, type Incoming } from './accept.js';
import { acceptAlone, plannedEmailRow, type AcceptPlan, type OrderState } from './acceptPlan.js';
import { acceptOnSqlite } from './acceptSqlite.js';

/**
 * Accepts a request by carrying out its plan: on PostgreSQL in a batch with the requests that arrive
 * with it, on SQLite with its own prebuilt statements in a unit of the group commit. Same rows, same
 * answer either way, and as runPlan's (deps.referenceAccept runs that one, for the tests to compare).
 */
export function executePlan<T extends object>(
  call: GatewayCall,
  body: Body,
  plan: AcceptPlan<T>,
  refresh?: (stored: T) => Promise<T>,
): Promise<Accepted<T>> {
  // A dry run is rolled back: it must not share a batch's transaction (or a group commit's unit written
  // by the SQLite statements) with real requests. A replay is rare and its effects record what it replays.
  // A call with work of its own for the transaction (an administrator's, writing its audit row) is rare
  // too, and that work has a transaction of this one request only there; so is a body with consent items
  // (SPEC §18), which runPlan alone records.
  if (call.deps.referenceAccept || call.dryRun || call.replayOf || call.alsoInTransaction || plan.consent?.length)
    return acceptAlone(call, body, plan, refresh);
  if (call.deps.db.dialect !== 'postgres') return acceptOnSqlite(call, body, plan, refresh);
  return batchOf(call.deps.db)({
    ...incoming(call, body),
    plan,
    alone: () => acceptAlone(call, body, plan, refresh),
  }) as Promise<Accepted<T>>;
}

/** A request waiting for its batch. */
interface BatchedRequest extends Incoming {
  plan: AcceptPlan<unknown>;
  /** The per-request path, for a batch of one or one rolled back. */
  alone(): Promise<Accepted<unknown>>;
}

/** A repeat of a stored idempotency key: the expected reason to roll a batch back. */
class StoredIdempotencyKey extends Error {
  constructor() {
    super('an idempotency key of the batch is already stored');
  }
}

const MAX_BATCH = 256;

const batches = new WeakMap<Db, (r: BatchedRequest) => Promise<Accepted<unknown>>>();

function batchOf(db: Db): (r: BatchedRequest) => Promise<Accepted<unknown>> {
  let submit = batches.get(db);
  if (!submit) {
    submit = batcher({ maxBatch: MAX_BATCH, admit: oneRequestPerRow, run: (batch) => runBatch(db, batch) });
    batches.set(db, submit);
  }
  return submit;
}

/** At most one request per contact, order and idempotency key in a batch. */
function oneRequestPerRow(): (r: BatchedRequest) => boolean {
  const seen = new Set<string>();
  return (r) => {
    const p = r.call.project.id;
    const keys = [`c\n${contactKey(p, r.plan.contact.email)}`];
    if (r.plan.order) keys.push(`o\n${orderKey(p, r.plan.order.order_id)}`);
    if (r.d.idempotency_key) keys.push(`i\n${p}\n${r.d.idempotency_key}`);
    if (keys.some((k) => seen.has(k))) return false;
    for (const k of keys) seen.add(k);
    return true;
  };
}

async function runBatch(db: Db, batch: BatchedRequest[]): Promise<PromiseSettledResult<Accepted<unknown>>[]> {
  if (batch.length === 1) return Promise.allSettled([batch[0].alone()]);
  try {
    const results = await db.db.transaction().execute((trx) => writeBatch(trx, batch));
    batch[0].call.deps.metrics?.acceptBatchSize.observe(batch.length);
    return results.map(fulfilled);
  } catch (err) {
    reportFallback(batch, err);
    // Rolled back: nothing of the batch is written. Each request on its own path (replays, errors).
    return Promise.allSettled(batch.map((r) => r.alone()));
  }
}

function reportFallback(batch: BatchedRequest[], err: unknown): void {
  const { deps } = batch[0].call;
  const code = (err as { code?: unknown } | null)?.code;
  const reason: AcceptBatchFallbackReason =
    err instanceof StoredIdempotencyKey
      ? 'idempotency_key_stored'
      : typeof code === 'string' && /^(?=.*\d)[0-9A-Z]{5}$/.test(code) // a SQLSTATE: the server refused
        ? 'database_error'
        : 'other_error';
  deps.metrics?.acceptBatchFallbacks.inc({ reason });
  if (reason === 'idempotency_key_stored') return;
  deps.log?.error(
    { err, batch_size: batch.length, reason },
    'accept batch failed and was rolled back; its requests are carried out one by one',
  );
}

/** The whole batch's writes, in the caller's transaction; the answers in batch order. */
async function writeBatch(trx: Transaction<Database>, batch: BatchedRequest[]): Promise<Accepted<unknown>[]> {
  const ids = await reserveIds(trx, {
    events: batch.length,
    scheduled_emails: batch.reduce((n, r) => n + r.plan.emails.length, 0),
  });
  const wanted = new Map<string, ContactWanted>();
  for (const r of batch) {
    const { email, name } = r.plan.contact;
    wanted.set(contactKey(r.call.project.id, email), {
      project_id: r.call.project.id,
      email: normaliseEmail(email),
      name: name ?? null,
      now: r.now,
    });
  }
  const contacts = await upsertContactsMany(trx, [...wanted.values()]);
  const contactOf = (r: BatchedRequest) => {
    const c = contacts.get(contactKey(r.call.project.id, r.plan.contact.email));
    if (!c) throw new Error('a contact of the batch was deleted while it was written');
    return c;
  };

  const newOrders: (NewUnpaidOrder & { now: number })[] = [];
  batch.forEach((r, i) => {
    if (r.plan.order)
      newOrders.push({
        project_id: r.call.project.id,
        ...r.plan.order,
        contact_id: contactOf(r).id,
        event_id: ids.events[i],
        now: r.now,
      });
  });
  const orders = await insertUnpaidOrdersMany(trx, newOrders);

  const emails: (NewEmail & { id: number })[] = [];
  const events: (NewEvent & { id: number })[] = [];
  const records: NewIdempotencyRecord[] = [];
  let nextEmail = 0;
  const results = batch.map((r, i): Accepted<unknown> => {
    const projectId = r.call.project.id;
    const eventId = ids.events[i];
    const contact = contactOf(r);
    // As runPlan: an order that existed already (a repeat, or the purchase came first) schedules nothing.
    const stored = r.plan.order ? orders.get(orderKey(projectId, r.plan.order.order_id)) : 'created';
    const order: OrderState = stored === 'created' ? 'created' : stored === 'paid' ? 'paid' : 'duplicate';
    const emailIds: number[] = [];
    if (order === 'created') {
      for (const e of r.plan.emails) {
        const id = ids.scheduled_emails[nextEmail++];
        emailIds.push(id);
        emails.push({ id, ...plannedEmailRow(projectId, e, r.plan, contact, eventId, r.now) });
      }
    }
    const answer = r.plan.result({ eventId, contact, emailIds, order, now: r.now });
    events.push({ id: eventId, ...acceptedEventRow(r, JSON.stringify(answer.effects)) });
    const record = idempotencyRow(r, answer.response, eventId);
    if (record) records.push(record);
    return { status: 200, body: answer.response, eventId, replayed: false };
  });

  // A repeat of a stored key: the batch rolls back and is redone request by request (which replays it).
  if ((await insertAcceptedMany(trx, { emails, events, records })) !== records.length) throw new StoredIdempotencyKey();
  return results;
}
