// Accepting many requests with a few statements (PostgreSQL).
//
// The profile of the accept path on PostgreSQL was round trips: seven per request, each costing the API
// process a socket write that wakes a server backend, more than the work it carried. Here requests that
// arrive while a batch is being written queue up and are written together in one transaction with
// set-based statements (ids drawn from the sequences, then INSERT … SELECT FROM unnest(…) per table):
// about eight round trips per batch, whatever its size. Every request is answered only after the COMMIT
// that holds its writes, as before.
//
// The statements reproduce runPlan's effects exactly (contacts upserted by the same rules, an existing
// order schedules nothing, the same event-log row and idempotency record). Anything unusual — an
// idempotency key already stored (a repeat), any error — rolls the batch back and every request in it
// is carried out on its own by the per-request path, which knows how to replay or to refuse. A batch
// holds at most one request per contact, per order and per idempotency key; the others wait for the
// next batch, so the set-based statements never see two requests touching the same row.
import { sql, type Transaction } from 'kysely';
import type { Db } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import type { Body } from '../../domain/validation.js';
import { normaliseEmail } from '../../repos/contacts.js';
import { acceptEvent, describe, requestHash, type Accepted, type Described } from './accept.js';
import { plannedEmailRow, runPlan, type AcceptPlan, type OrderState, type PlanOutcome } from './acceptPlan.js';
import type { GatewayCall } from '../context.js';

/** Carries out an accept plan: set-based with others on PostgreSQL, statement by statement elsewhere. */
export function acceptPlanned<T extends object>(
  call: GatewayCall,
  body: Body,
  plan: AcceptPlan<T>,
  refresh?: (stored: T) => Promise<T>,
): Promise<Accepted<T>> {
  const perRequest = () =>
    acceptEvent<T>(call, body, (trx, eventId, now) => runPlan(trx, call.project.id, plan, eventId, now), refresh);
  if (call.deps.db.dialect !== 'postgres') return perRequest();
  let b = batchers.get(call.deps.db);
  if (!b) batchers.set(call.deps.db, (b = new Batcher(call.deps.db)));
  return new Promise<Accepted<T>>((resolve, reject) => {
    b.submit({
      call,
      body,
      plan: plan as AcceptPlan<unknown>,
      d: describe(call.endpoint, body),
      hash: requestHash(call.endpoint, body),
      now: call.deps.clock.now(),
      perRequest: perRequest as () => Promise<Accepted<unknown>>,
      resolve: resolve as (a: Accepted<unknown>) => void,
      reject,
    });
  });
}

interface Unit {
  call: GatewayCall;
  body: Body;
  plan: AcceptPlan<unknown>;
  d: Described;
  hash: string;
  now: number;
  perRequest(): Promise<Accepted<unknown>>;
  resolve(a: Accepted<unknown>): void;
  reject(e: unknown): void;
}

const MAX_BATCH = 256;

const batchers = new WeakMap<Db, Batcher>();

class Batcher {
  private queue: Unit[] = [];
  private busy = false;
  constructor(private readonly db: Db) {}

  submit(u: Unit): void {
    this.queue.push(u);
    if (!this.busy) {
      this.busy = true;
      // Requests that are ready in this turn of the event loop join the first batch.
      setImmediate(() => void this.drain());
    }
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length) await this.write(this.take());
    } finally {
      this.busy = false;
    }
  }

  /** Up to MAX_BATCH requests, at most one per contact, order and idempotency key; the rest wait. */
  private take(): Unit[] {
    const seen = new Set<string>();
    const batch: Unit[] = [];
    const rest: Unit[] = [];
    for (const u of this.queue) {
      const p = u.call.project.id;
      const keys = [`c\n${p}\n${normaliseEmail(u.plan.contact.email)}`];
      if (u.plan.order) keys.push(`o\n${p}\n${u.plan.order.order_id}`);
      if (u.d.idempotency_key) keys.push(`i\n${p}\n${u.d.idempotency_key}`);
      if (batch.length >= MAX_BATCH || keys.some((k) => seen.has(k))) rest.push(u);
      else {
        keys.forEach((k) => seen.add(k));
        batch.push(u);
      }
    }
    this.queue = rest;
    return batch;
  }

  private async write(batch: Unit[]): Promise<void> {
    if (batch.length === 1) return void (await batch[0].perRequest().then(batch[0].resolve, batch[0].reject));
    let results: Accepted<unknown>[];
    try {
      results = await this.db.db.transaction().execute((trx) => writeBatch(trx, batch));
    } catch {
      // Rolled back: nothing of the batch is written. Each request on its own path (replays, errors).
      await Promise.all(batch.map((u) => u.perRequest().then(u.resolve, u.reject)));
      return;
    }
    batch.forEach((u, i) => u.resolve(results[i]));
  }
}

type Contact = PlanOutcome['contact'];

async function writeBatch(trx: Transaction<Database>, batch: Unit[]): Promise<Accepted<unknown>[]> {
  const emailCount = batch.reduce((n, u) => n + u.plan.emails.length, 0);
  const {
    rows: [ids],
  } = await sql<{ ev: (string | number)[]; em: (string | number)[] }>`
    select array(select nextval(pg_get_serial_sequence('events', 'id')) from generate_series(1, ${batch.length}::int)) as ev,
           array(select nextval(pg_get_serial_sequence('scheduled_emails', 'id')) from generate_series(1, ${emailCount}::int)) as em`.execute(
    trx,
  );
  const eventIds = ids.ev.map(Number);
  const emailIdPool = ids.em.map(Number);

  const contacts = await upsertContacts(trx, batch);
  const orders = await insertOrders(trx, batch, contacts, eventIds);

  const emails: Record<string, unknown[]> = {
    id: [],
    project_id: [],
    kind: [],
    template_id: [],
    template_key: [],
    contact_id: [],
    to_email: [],
    to_name: [],
    order_id: [],
    event_id: [],
    chain_step: [],
    context: [],
    status: [],
    due_at: [],
    created_at: [],
  };
  const events: Record<string, unknown[]> = {
    id: [],
    project_id: [],
    key_id: [],
    key_last4: [],
    endpoint: [],
    event_type: [],
    email: [],
    order_id: [],
    idempotency_key: [],
    payload: [],
    effects: [],
    created_at: [],
  };
  const idem: Record<string, unknown[]> = {
    project_id: [],
    idempotency_key: [],
    request_hash: [],
    endpoint: [],
    response_body: [],
    event_id: [],
    created_at: [],
  };
  let nextEmail = 0;
  const results = batch.map((u, i) => {
    const projectId = u.call.project.id;
    const eventId = eventIds[i];
    const contact = contacts.get(contactKey(projectId, u.plan.contact.email))!;
    const order = u.plan.order ? orders.get(`${projectId}\n${u.plan.order.order_id}`)! : 'created';
    const emailIds: number[] = [];
    if (order === 'created') {
      for (const e of u.plan.emails) {
        const id = emailIdPool[nextEmail++];
        emailIds.push(id);
        push(emails, { id, ...plannedEmailRow(projectId, e, u.plan, contact, eventId, u.now) });
      }
    }
    const work = u.plan.result({ eventId, contact, emailIds, order });
    const key = u.call.key;
    push(events, {
      id: eventId,
      project_id: projectId,
      key_id: key?.id ?? null,
      key_last4: key?.last4 ?? null,
      endpoint: u.call.endpoint,
      event_type: u.d.event_type,
      email: u.d.email,
      order_id: u.d.order_id,
      idempotency_key: u.d.idempotency_key,
      payload: JSON.stringify(u.body),
      effects: JSON.stringify(work.effects),
      created_at: u.now,
    });
    if (u.d.idempotency_key) {
      push(idem, {
        project_id: projectId,
        idempotency_key: u.d.idempotency_key,
        request_hash: u.hash,
        endpoint: u.call.endpoint,
        response_body: JSON.stringify(work.response),
        event_id: eventId,
        created_at: u.now,
      });
    }
    return { status: 200, body: work.response, eventId, replayed: false };
  });

  if (emails.id.length) {
    await sql`
      insert into scheduled_emails (id, project_id, kind, template_id, template_key, contact_id, to_email, to_name, order_id, event_id,
        campaign_id, chain_step, context, status, due_at, attempts, created_at, updated_at)
      select u.id, u.project_id, u.kind, u.template_id, u.template_key, u.contact_id, u.to_email, u.to_name, u.order_id, u.event_id,
        null, u.chain_step, u.context, u.status, u.due_at, 0, u.created_at, u.created_at
      from unnest(${emails.id}::bigint[], ${emails.project_id}::bigint[], ${emails.kind}::text[], ${emails.template_id}::bigint[],
        ${emails.template_key}::text[], ${emails.contact_id}::bigint[], ${emails.to_email}::text[], ${emails.to_name}::text[],
        ${emails.order_id}::text[], ${emails.event_id}::bigint[], ${emails.chain_step}::text[], ${emails.context}::text[],
        ${emails.status}::text[], ${emails.due_at}::bigint[], ${emails.created_at}::bigint[])
        as u(id, project_id, kind, template_id, template_key, contact_id, to_email, to_name, order_id, event_id, chain_step, context, status, due_at, created_at)`.execute(
      trx,
    );
  }
  await sql`
    insert into events (id, project_id, key_id, key_last4, endpoint, event_type, email, order_id, idempotency_key, http_status, accepted,
      error_code, payload, effects, created_at)
    select u.id, u.project_id, u.key_id, u.key_last4, u.endpoint, u.event_type, u.email, u.order_id, u.idempotency_key, 200, 1,
      null, u.payload, u.effects, u.created_at
    from unnest(${events.id}::bigint[], ${events.project_id}::bigint[], ${events.key_id}::bigint[], ${events.key_last4}::text[],
      ${events.endpoint}::text[], ${events.event_type}::text[], ${events.email}::text[], ${events.order_id}::text[],
      ${events.idempotency_key}::text[], ${events.payload}::text[], ${events.effects}::text[], ${events.created_at}::bigint[])
      as u(id, project_id, key_id, key_last4, endpoint, event_type, email, order_id, idempotency_key, payload, effects, created_at)`.execute(
    trx,
  );
  if (idem.project_id.length) {
    const stored = await sql`
      insert into idempotency (project_id, idempotency_key, request_hash, endpoint, response_status, response_body, event_id, created_at)
      select u.project_id, u.idempotency_key, u.request_hash, u.endpoint, 200, u.response_body, u.event_id, u.created_at
      from unnest(${idem.project_id}::bigint[], ${idem.idempotency_key}::text[], ${idem.request_hash}::text[], ${idem.endpoint}::text[],
        ${idem.response_body}::text[], ${idem.event_id}::bigint[], ${idem.created_at}::bigint[])
        as u(project_id, idempotency_key, request_hash, endpoint, response_body, event_id, created_at)
      order by u.project_id, u.idempotency_key
      on conflict (project_id, idempotency_key) do nothing
      returning idempotency_key`.execute(trx);
    // A repeat of a stored key: the batch rolls back and is redone request by request (which replays it).
    if (stored.rows.length !== idem.project_id.length)
      throw new Error('an idempotency key of the batch is already stored');
  }
  return results;
}

/** Appends a row's values to the column arrays (members the columns do not name are ignored). */
function push(cols: Record<string, unknown[]>, row: object): void {
  for (const k of Object.keys(cols)) cols[k].push((row as Record<string, unknown>)[k] ?? null);
}

const contactKey = (projectId: number, email: string) => `${projectId}\n${normaliseEmail(email)}`;

/**
 * upsertContact's rules for every contact of the batch: new ones are inserted (name as given), a known
 * one gets the name the request gives when it gives one (and keeps its status). Rows are taken in one
 * order (project, e-mail) so concurrent writers cannot deadlock on them.
 */
async function upsertContacts(trx: Transaction<Database>, batch: Unit[]): Promise<Map<string, Contact>> {
  const wanted = new Map<string, { project_id: number; email: string; name: string | null; now: number }>();
  for (const u of batch) {
    wanted.set(contactKey(u.call.project.id, u.plan.contact.email), {
      project_id: u.call.project.id,
      email: normaliseEmail(u.plan.contact.email),
      name: u.plan.contact.name ?? null,
      now: u.now,
    });
  }
  const rows = [...wanted.values()].sort(
    (a, b) => a.project_id - b.project_id || (a.email < b.email ? -1 : a.email > b.email ? 1 : 0),
  );
  const out = new Map<string, Contact>();
  const created = await sql<{ id: number; project_id: number; email: string; name: string | null }>`
    insert into contacts (project_id, email, name, fields, status, created_at, updated_at)
    select u.p, u.e, u.n, '{}', 'active', u.t, u.t
    from unnest(${rows.map((r) => r.project_id)}::bigint[], ${rows.map((r) => r.email)}::text[], ${rows.map((r) => r.name)}::text[], ${rows.map((r) => r.now)}::bigint[]) with ordinality as u(p, e, n, t, ord)
    order by u.ord
    on conflict (project_id, email) do nothing
    returning id, project_id, email, name`.execute(trx);
  for (const c of created.rows)
    out.set(contactKey(Number(c.project_id), c.email), { id: Number(c.id), email: c.email, name: c.name });
  const known = rows.filter((r) => !out.has(contactKey(r.project_id, r.email)));
  if (known.length) {
    const found = await sql<{ id: number; project_id: number; email: string; name: string | null }>`
      select c.id, c.project_id, c.email, c.name from contacts c
      join unnest(${known.map((r) => r.project_id)}::bigint[], ${known.map((r) => r.email)}::text[]) as u(p, e) on c.project_id = u.p and c.email = u.e`.execute(
      trx,
    );
    const renames: { id: number; name: string; now: number }[] = [];
    for (const c of found.rows) {
      const k = contactKey(Number(c.project_id), c.email);
      const w = wanted.get(k)!;
      const name = w.name ? w.name : c.name;
      if (name !== c.name) renames.push({ id: Number(c.id), name: name!, now: w.now });
      out.set(k, { id: Number(c.id), email: c.email, name });
    }
    if (renames.length) {
      renames.sort((a, b) => a.id - b.id);
      await sql`
        update contacts as c set name = u.n, updated_at = u.t
        from unnest(${renames.map((r) => r.id)}::bigint[], ${renames.map((r) => r.name)}::text[], ${renames.map((r) => r.now)}::bigint[]) as u(id, n, t)
        where c.id = u.id`.execute(trx);
    }
    if (found.rows.length !== known.length) throw new Error('a contact vanished during the batch');
  }
  return out;
}

/** insertUnpaidOrder for the batch's orders; one that exists already is 'paid' or 'duplicate'. */
async function insertOrders(
  trx: Transaction<Database>,
  batch: Unit[],
  contacts: Map<string, Contact>,
  eventIds: number[],
): Promise<Map<string, OrderState>> {
  const out = new Map<string, OrderState>();
  const rows = batch
    .map((u, i) => ({ u, eventId: eventIds[i] }))
    .filter(({ u }) => u.plan.order)
    .map(({ u, eventId }) => ({
      project_id: u.call.project.id,
      ...u.plan.order!,
      contact_id: contacts.get(contactKey(u.call.project.id, u.plan.contact.email))!.id,
      event_id: eventId,
      now: u.now,
    }))
    .sort((a, b) => a.project_id - b.project_id || (a.order_id < b.order_id ? -1 : a.order_id > b.order_id ? 1 : 0));
  if (!rows.length) return out;
  const created = await sql<{ project_id: number; order_id: string }>`
    insert into orders (project_id, order_id, cart_type, contact_id, status, course_name, created_event_id, created_at, updated_at)
    select u.p, u.o, u.c, u.contact, 'unpaid', u.n, u.ev, u.t, u.t
    from unnest(${rows.map((r) => r.project_id)}::bigint[], ${rows.map((r) => r.order_id)}::text[], ${rows.map((r) => r.cart_type)}::text[],
      ${rows.map((r) => r.contact_id)}::bigint[], ${rows.map((r) => r.course_name)}::text[], ${rows.map((r) => r.event_id)}::bigint[],
      ${rows.map((r) => r.now)}::bigint[]) with ordinality as u(p, o, c, contact, n, ev, t, ord)
    order by u.ord
    on conflict (project_id, order_id) do nothing
    returning project_id, order_id`.execute(trx);
  for (const o of created.rows) out.set(`${Number(o.project_id)}\n${o.order_id}`, 'created');
  const existing = rows.filter((r) => !out.has(`${r.project_id}\n${r.order_id}`));
  if (existing.length) {
    const found = await sql<{ project_id: number; order_id: string; status: string }>`
      select o.project_id, o.order_id, o.status from orders o
      join unnest(${existing.map((r) => r.project_id)}::bigint[], ${existing.map((r) => r.order_id)}::text[]) as u(p, o) on o.project_id = u.p and o.order_id = u.o`.execute(
      trx,
    );
    for (const o of found.rows)
      out.set(`${Number(o.project_id)}\n${o.order_id}`, o.status === 'paid' ? 'paid' : 'duplicate');
    for (const r of existing)
      if (!out.has(`${r.project_id}\n${r.order_id}`)) out.set(`${r.project_id}\n${r.order_id}`, 'duplicate');
  }
  return out;
}
