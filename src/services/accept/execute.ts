// The one executor of accept plans (acceptPlan.ts), on both engines: requests that arrive while a batch
// is being written queue up and are written together in one transaction, step by step, with the
// engine's statements (repos/acceptStatements.ts: set-based on PostgreSQL, where each round trip costs
// more than the work it carries; one prebuilt statement per row on SQLite, where the shared commit is
// what saves). Every request is answered only after the COMMIT that holds its writes.
//
// The rules of the accept path are here, once: contacts are upserted (NAME_RULE), an existing order
// schedules nothing, a stored idempotency key replays the first answer (accept.ts withIdempotency), an
// administrator's replay is marked in its effects and runs its audit in the same transaction, and a dry
// run is the same executor with its transaction rolled back instead of committed.
//
// A batch holds at most one request per contact, per order and per idempotency key, so the set-based
// statements never see two requests touching the same row; a plan with work of its own (a purchase, a
// consent change, an erasure) or an administrator's audit goes alone. When a batch fails it is rolled
// back and each of its requests is written again in a batch of its own, which replays or refuses it:
// silently when the cause is a repeated idempotency key (expected), otherwise logged at error and
// counted, since a batch should not fail. test/accept-engines.test.ts compares the engines' rows.
import type { Transaction } from 'kysely';
import { batcher, fulfilled } from '../../batcher.js';
import type { Db } from '../../db/index.js';
import type { Database, NewEmail, NewEvent } from '../../db/schema.js';
import type { Body } from '../../domain/validation.js';
import { notFound } from '../../errors.js';
import type { AcceptBatchFallbackReason } from '../../metrics.js';
import { acceptStatements, type AcceptStatements } from '../../repos/acceptStatements.js';
import {
  contactKey,
  findContactByEmail,
  mergeContactFields,
  normaliseEmail,
  type ContactRef,
} from '../../repos/contacts.js';
import type { NewIdempotencyRecord } from '../../repos/idempotency.js';
import { orderKey, type NewUnpaidOrder } from '../../repos/orders.js';
import { recordChoices } from '../consent.js';
import type { GatewayCall } from '../context.js';
import {
  acceptedEventRow,
  IdempotencyRace,
  idempotencyRow,
  incoming,
  withIdempotency,
  type Accepted,
  type Answer,
  type Incoming,
} from './accept.js';
import { plannedEmailRow, type AcceptPlan, type OrderState, type PlanOutcome } from './acceptPlan.js';
import { dryRunAnswer, previewCreated, type DryRunOutcome } from './dryRun.js';
import { isDatabaseUnavailable } from '../../db/unavailable.js';

/** A request and its plan, on its way to the executor. */
interface Planned extends Incoming {
  plan: AcceptPlan<unknown>;
}

/**
 * Accepts a request by carrying out its plan; a repeated idempotency key replays the stored answer
 * (refreshed by `refresh`), a dry run is rolled back.
 */
export function executePlan<T extends object>(
  call: GatewayCall,
  body: Body,
  plan: AcceptPlan<T>,
  refresh?: (stored: T) => Promise<T>,
): Promise<Accepted<T>> {
  const r: Planned = { ...incoming(call, body), plan };
  const write = call.dryRun ? () => dryRun(r) : () => batchOf(call.deps.db)(r);
  return withIdempotency(r, write as () => Promise<Accepted<T>>, refresh);
}

/** What the executor wrote for one request: its answer, and for a dry run the e-mails it would create. */
interface Written {
  accepted: Accepted<unknown>;
  emails: number[];
}

/**
 * The executor: every request's plan, step by step, in the caller's transaction; the answers in batch
 * order. Throws IdempotencyRace when a key of the batch is stored already (nothing of it may commit).
 */
async function carryOut(trx: Transaction<Database>, s: AcceptStatements, batch: Planned[]): Promise<Written[]> {
  const contacts = await contactsOf(trx, s, batch);
  const contactOf = (r: Planned) => {
    const c = contacts.get(contactKey(r.call.project.id, r.plan.contact.email));
    if (!c) throw notFound('A contact with this address');
    return c;
  };
  for (const r of batch) {
    const { fields } = r.plan.contact;
    if (fields && !r.plan.contact.existing) await mergeContactFields(trx, contactOf(r).id, fields, r.now);
    if (r.plan.consent?.length)
      await recordChoices(trx, { ...contactOf(r), project_id: r.call.project.id }, r.plan.consent, 'api', r.now);
  }
  const ids = await s.reserveIds(trx, {
    events: batch.length,
    scheduled_emails: batch.reduce((n, r) => n + r.plan.emails.length, 0),
  });

  const newOrders: (NewUnpaidOrder & { now: number })[] = [];
  batch.forEach((r, i) => {
    const o = r.plan.order;
    if (o)
      newOrders.push({
        project_id: r.call.project.id,
        ...o,
        contact_id: contactOf(r).id,
        event_id: ids.events[i],
        now: r.now,
      });
  });
  const orders = await s.insertUnpaidOrders(trx, newOrders);

  const emails: (NewEmail & { id: number })[] = [];
  const events: (NewEvent & { id: number })[] = [];
  const records: NewIdempotencyRecord[] = [];
  const written: Written[] = [];
  let nextEmail = 0;
  for (const [i, r] of batch.entries()) {
    const projectId = r.call.project.id;
    const eventId = ids.events[i];
    const contact = contactOf(r);
    // An order that existed already (a repeat, or the purchase came first) schedules nothing.
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
    const outcome: PlanOutcome = { eventId, contact, emailIds, order, now: r.now };
    const answer: Answer<unknown> = 'work' in r.plan ? await r.plan.work(trx, outcome) : r.plan.result(outcome);
    events.push({ id: eventId, ...eventRow(r, answer) });
    const record = idempotencyRow(r, answer.response, eventId);
    if (record) records.push(record);
    written.push({ accepted: { status: 200, body: answer.response, eventId, replayed: false }, emails: emailIds });
  }

  // A repeat of a stored key: nothing of the batch may commit; each request is written again alone,
  // which replays it (withIdempotency).
  if ((await s.writeAccepted(trx, { emails, events, records })) !== records.length) throw new IdempotencyRace();
  for (const [i, r] of batch.entries()) {
    const { eventId, body } = written[i].accepted;
    // Never in a dry run, which keeps nothing.
    if (!r.call.dryRun)
      await r.call.alsoInTransaction?.(trx, { eventId, status: 200, accepted: true, replayed: false, body });
  }
  return written;
}

/** The batch's contacts: upserted, or for an erasure found (never created). */
async function contactsOf(trx: Transaction<Database>, s: AcceptStatements, batch: Planned[]) {
  const wanted = batch
    .filter((r) => !r.plan.contact.existing)
    .map((r) => ({
      project_id: r.call.project.id,
      email: normaliseEmail(r.plan.contact.email),
      name: r.plan.contact.name ?? null,
      now: r.now,
    }));
  const contacts: Map<string, ContactRef> = wanted.length
    ? await s.upsertContacts(trx, wanted)
    : new Map<string, ContactRef>();
  for (const r of batch) {
    if (!r.plan.contact.existing) continue;
    const c = await findContactByEmail(trx, r.call.project.id, normaliseEmail(r.plan.contact.email));
    if (c)
      contacts.set(contactKey(c.project_id, c.email), { id: c.id, email: c.email, name: c.name, status: c.status });
  }
  return contacts;
}

/** The request's chronology row, its effects last (a replay marked by its tail: services/replay.ts). */
function eventRow(r: Planned, answer: Answer<unknown>): NewEvent {
  const { replayOf } = r.call;
  const effects = replayOf ? { ...answer.effects, replay_of: replayOf, admin_replay: true } : answer.effects;
  const row = acceptedEventRow(r, JSON.stringify(effects));
  return r.plan.forget ? { ...row, email: null, payload: null } : row;
}

/**
 * A dry run: the executor in a transaction of its own that is rolled back, not committed. The e-mails
 * it would create are rendered first, to prove their templates work; only a chronology row marked
 * `dry_run` is kept (dryRun.ts).
 */
async function dryRun(r: Planned): Promise<Accepted<unknown>> {
  const { db } = r.call.deps;
  const trx = await db.db.startTransaction().execute();
  let outcome: DryRunOutcome;
  try {
    const [written] = await carryOut(trx, acceptStatements(db.dialect), [r]);
    const renderFailed = await previewCreated(trx, written.emails, r.call);
    outcome = { answer: written.accepted.body, created: new Set(written.emails), renderFailed };
  } finally {
    await trx.rollback().execute();
  }
  return dryRunAnswer(r, outcome);
}

const MAX_BATCH = 256;

const batches = new WeakMap<Db, (r: Planned) => Promise<Accepted<unknown>>>();

function batchOf(db: Db): (r: Planned) => Promise<Accepted<unknown>> {
  let submit = batches.get(db);
  if (!submit) {
    submit = batcher({ maxBatch: MAX_BATCH, admit: oneRequestPerRow, run: (batch) => runBatch(db, batch) });
    batches.set(db, submit);
  }
  return submit;
}

/** Work that may touch any row, or an administrator's audit (which may refuse), goes alone. */
const alone = (r: Planned) => 'work' in r.plan || Boolean(r.call.alsoInTransaction);

/** At most one request per contact, order and idempotency key in a batch. */
function oneRequestPerRow(): (r: Planned) => boolean {
  const seen = new Set<string>();
  let closed = false;
  return (r) => {
    const p = r.call.project.id;
    const keys = [`c\n${contactKey(p, r.plan.contact.email)}`];
    if (r.plan.order) keys.push(`o\n${orderKey(p, r.plan.order.order_id)}`);
    if (r.d.idempotency_key) keys.push(`i\n${p}\n${r.d.idempotency_key}`);
    if (closed || (seen.size > 0 && alone(r)) || keys.some((k) => seen.has(k))) return false;
    for (const k of keys) seen.add(k);
    closed = alone(r);
    return true;
  };
}

/** One batch in one transaction (on SQLite, one commit). */
function writeTogether(db: Db, batch: Planned[]): Promise<Written[]> {
  return db.db.transaction().execute((trx) => carryOut(trx, acceptStatements(db.dialect), batch));
}

async function runBatch(db: Db, batch: Planned[]): Promise<PromiseSettledResult<Accepted<unknown>>[]> {
  const one = async (r: Planned) => (await writeTogether(db, [r]))[0].accepted;
  if (batch.length === 1) return Promise.allSettled([one(batch[0])]);
  try {
    const written = await writeTogether(db, batch);
    batch[0].call.deps.metrics?.acceptBatchSize.observe(batch.length);
    return written.map((w) => fulfilled(w.accepted));
  } catch (err) {
    // The database away: each request alone would fail the same way; all are answered 503 at once.
    if (isDatabaseUnavailable(err)) throw err;
    reportFallback(batch, err);
    // Rolled back: nothing of the batch is written. Each request again, alone (replays, errors).
    return Promise.allSettled(batch.map(one));
  }
}

function reportFallback(batch: Planned[], err: unknown): void {
  const { deps } = batch[0].call;
  const code = (err as { code?: unknown } | null)?.code;
  const reason: AcceptBatchFallbackReason =
    err instanceof IdempotencyRace
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
