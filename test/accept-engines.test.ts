// The one accept executor (services/accept/execute.ts) with each engine's statements
// (repos/acceptStatements.ts):
//   - differential between the engines: the same requests, made together, on SQLite and on PostgreSQL
//     seeded alike, leave the same rows in contacts, orders, events, scheduled e-mails and idempotency
//     records, ids aside, and get the same answers;
//   - on each engine, the same requests one at a time (batches of one) and together (one batch per
//     group) write the same rows;
//   - loud fallback: a batch the database refuses is logged at error and counted, and every request is
//     still answered correctly, each written again in a batch of its own.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { hashKey } from '../src/domain/keys.js';
import { Metrics } from '../src/metrics.js';
import { configSnapshot } from '../src/services/configCache.js';
import type { GatewayCall, Logger } from '../src/services/context.js';
import * as gateway from '../src/services/gateway.js';
import type { Deps } from '../src/services/context.js';
import { createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';

const pg = DIALECTS.find((d) => d.name === 'postgres')!;
const T0 = 1_800_000_000_000;

type Endpoint = 'transactional' | 'order-created' | 'purchase';
interface Req {
  endpoint: Endpoint;
  body: Record<string, unknown>;
}

class CapturingLogger implements Logger {
  readonly errors: { obj: Record<string, any>; msg?: string }[] = [];
  error(obj: object, msg?: string): void {
    this.errors.push({ obj: obj as Record<string, any>, msg });
  }
}

interface Side {
  t: TestApp;
  key: string;
  metrics: Metrics;
  log: CapturingLogger;
  calls: Partial<Record<Endpoint, GatewayCall>>;
}

async function openSide(dialect: 'postgres' | 'sqlite' = 'postgres', extra: Partial<Deps> = {}): Promise<Side> {
  const metrics = new Metrics();
  const log = new CapturingLogger();
  const t = await createTestApp(dialect, {}, { metrics, log, ...extra });
  t.clock.t = T0;
  const { key } = await setupProject(t.app);
  return { t, key, metrics, log, calls: {} };
}

/** The call a gateway route would make, with the configuration already read (so requests made together reach the batch together). */
async function callOf(side: Side, endpoint: Endpoint): Promise<GatewayCall> {
  const config = await configSnapshot(side.t.deps.db);
  const found = (await config.keyByHash(hashKey(side.key)))!;
  return { deps: side.t.deps, project: found.project, key: found.key, endpoint, config };
}

async function send(side: Side, r: Req) {
  const call = (side.calls[r.endpoint] ??= await callOf(side, r.endpoint));
  if (r.endpoint === 'transactional') return gateway.transactional(call, r.body, { respondAsync: true });
  if (r.endpoint === 'order-created') return gateway.orderCreated(call, r.body);
  return gateway.purchase(call, r.body);
}

const tx = (n: number, email: string, extra: Record<string, unknown> = {}): Req => ({
  endpoint: 'transactional',
  body: { event_type: 'contest_results', email, fields: { event_title: 'Contest', work_title: `Work ${n}` }, ...extra },
});
const order = (orderId: string, email: string, extra: Record<string, unknown> = {}): Req => ({
  endpoint: 'order-created',
  body: { cart_type: 'course', order_id: orderId, email, course_name: `Course of ${orderId}`, ...extra },
});

/** State both databases start from: a known contact with an unpaid order, a paid order, a stored key. */
const SEED: Req[] = [
  order('known-order', 'known@example.com', { name: 'Known' }),
  { endpoint: 'purchase', body: { cart_type: 'course', order_id: 'paid-first', email: 'payer@example.com' } },
  tx(0, 'seed@example.com', { name: 'Seed', idempotency_key: 'seed-key' }),
  // Routes are read (and cached) before the groups, so the requests of a group reach the batch together.
  tx(0, 'seed@example.com', { event_type: 'olympiad_results', fields: { event_title: 'Seed olympiad' } }),
];

/** Requests made together; no two in a group touch the same contact, order or key (one batch each). */
const GROUPS: { requests: Req[]; repeatsStoredKey: boolean }[] = [
  {
    repeatsStoredKey: false,
    requests: [
      tx(1, 'new1@example.com', { name: 'New One', idempotency_key: 'k1' }),
      tx(2, ' Known@Example.COM '), // known contact, other spelling, no name: keeps "Known"
      order('o-new', 'buyer@example.com', { name: 'Buyer' }),
      order('known-order', 'other@example.com', { name: 'Other' }), // existing order: nothing scheduled
      order('paid-first', 'payer@example.com', { name: 'Payer' }), // purchase came first; known contact renamed
      tx(3, 'quiet@example.com', { event_type: 'olympiad_results', fields: { event_title: 'Olympiad' } }), // no template
      tx(4, 'seed@example.com', { idempotency_key: 'k4', order_id: 'ref-7' }),
    ],
  },
  {
    repeatsStoredKey: true,
    requests: [
      tx(1, 'new1@example.com', { name: 'New One', idempotency_key: 'k1' }), // repeat: replayed
      tx(5, 'new1@example.com', { name: 'Renamed One', idempotency_key: 'k5' }),
      order('o-new-2', 'buyer2@example.com'),
    ],
  },
  {
    repeatsStoredKey: false,
    requests: [
      tx(6, 'known@example.com', { name: 'Known Renamed', idempotency_key: 'k6' }),
      order('o-new', 'buyer3@example.com', { name: 'Buyer Three' }), // created by group 1: a duplicate now
      order('o-6', 'fresh@example.com', { idempotency_key: 'k-o6' }),
      tx(7, 'NEW1@example.com', { idempotency_key: 'k7' }),
    ],
  },
  {
    repeatsStoredKey: true,
    requests: [
      tx(8, 'someone@example.com', { idempotency_key: 'seed-key' }), // stored key, other body: 422
      tx(9, 'fresh@example.com', { name: 'Fresh', idempotency_key: 'k9' }),
    ],
  },
];

const settle = <T>(p: Promise<T>) => p.then(fulfilledValue, rejectedReason);
const fulfilledValue = <T>(value: T) => ({ ok: true as const, value });
const rejectedReason = (e: any) => ({ ok: false as const, error: String(e?.code ?? e?.message ?? e) });

/** Every row the accept path writes, with ids replaced by what they stand for, in a stable order. */
async function dump(side: Side) {
  const db = side.t.deps.db.db;
  const [contacts, orders, events, emails, records] = await Promise.all([
    db.selectFrom('contacts').selectAll().execute(),
    db.selectFrom('orders').selectAll().execute(),
    db.selectFrom('events').selectAll().execute(),
    db.selectFrom('scheduled_emails').selectAll().execute(),
    db.selectFrom('idempotency').selectAll().execute(),
  ]);
  const contact = new Map(contacts.map((c) => [Number(c.id), `contact ${c.project_id}/${c.email}`]));
  const event = new Map(
    events.map((e) => [
      Number(e.id),
      `event ${e.endpoint} ${e.payload} ${JSON.parse(e.effects).replay_of ? '(replay)' : ''}`,
    ]),
  );
  const email = new Map(emails.map((m) => [Number(m.id), `email of ${event.get(Number(m.event_id))} ${m.chain_step}`]));
  const refs: Record<string, Map<number, string>> = {
    contact_id: contact,
    event_id: event,
    eventId: event,
    replay_of: event,
    original_event_id: event,
    created_event_id: event,
    paid_event_id: event,
    scheduled_email_id: email,
    scheduled_email_ids: email,
  };
  const json = new Set(['effects', 'response_body', 'context']);
  const norm = (v: unknown, key = ''): unknown => {
    if (typeof v === 'number' && refs[key]) return refs[key].get(v) ?? `missing ${key} ${v}`;
    if (typeof v === 'string' && json.has(key)) return norm(JSON.parse(v));
    if (key === 'key_last4') return v === side.key.slice(-4) ? 'the key' : v;
    if (Array.isArray(v)) return v.map((x) => norm(x, key));
    if (v && typeof v === 'object')
      return Object.fromEntries(
        Object.entries(v)
          .filter(([k]) => k !== 'id')
          .map(([k, x]) => [k, norm(x, k)]),
      );
    return v;
  };
  const table = (rows: object[]) => rows.map((r) => JSON.stringify(norm(r))).sort();
  return {
    tables: {
      contacts: table(contacts),
      orders: table(orders),
      events: table(events),
      scheduled_emails: table(emails),
      idempotency: table(records),
    },
    norm,
  };
}

async function metric(m: Metrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const all = await m.registry.getMetricsAsJSON();
  // A histogram's values name their series (…_sum, …_count); a counter's are the metric's own.
  const values = all.flatMap((m) =>
    (m.values as { metricName?: string; value: number; labels: object }[]).map((v) => ({
      ...v,
      name: v.metricName ?? m.name,
    })),
  );
  const hit = values.find(
    (v) => v.name === name && Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x),
  );
  return hit?.value ?? 0;
}

/** Both sides wrote the same rows and gave the same answers, and the scenario covers what it says. */
async function assertSameOutcome(alone: Side, other: Side, answersAlone: unknown[], answersOther: unknown[]) {
  const a = await dump(alone);
  const b = await dump(other);
  for (const table of Object.keys(a.tables) as (keyof typeof a.tables)[])
    assert.deepEqual(b.tables[table], a.tables[table], `rows of ${table}`);
  assert.deepEqual(
    answersOther.map((x) => b.norm(x)),
    answersAlone.map((x) => a.norm(x)),
    'answers',
  );

  // The scenario covers what it says it does (on either side, they are equal).
  const answers = answersAlone.map((x) => x as any);
  const all = GROUPS.flatMap((g) => g.requests);
  const at = (i: number) => answers[i];
  assert.deepEqual(
    answers.map((x) => (x.ok ? x.value.status : x.error)),
    all.map((_, i) => (i === all.length - 2 ? 'idempotency_key_reused' : 200)),
  );
  assert.equal(at(7).value.replayed, true, 'the repeat of k1 is replayed');
  assert.equal(at(3).value.body.duplicate, true, 'known-order is a duplicate');
  assert.deepEqual(at(4).value.body.scheduled_email_ids, [], 'paid-first schedules nothing');
  assert.equal(at(2).value.body.scheduled_email_ids.length, 3, 'a new order schedules its chain');
  assert.equal(at(5).value.body.status, 'no_template');
  assert.ok(b.tables.contacts.some((c) => c.includes('"name":"Known Renamed"')));
  assert.ok(b.tables.contacts.some((c) => c.includes('"name":"Renamed One"')));
  assert.ok(b.tables.orders.some((o) => o.includes('"order_id":"paid-first"') && o.includes('"status":"paid"')));
}

/** The groups sent to both sides, one at a time on `alone` and together on `together`. */
async function sendGroups(alone: Side, together: Side) {
  const answersAlone = [];
  const answersTogether = [];
  for (const [i, g] of GROUPS.entries()) {
    // Later groups later: updated_at tells a rename from a row left alone.
    alone.t.clock.t = together.t.clock.t = T0 + (i + 1) * 60_000;
    // One at a time on `alone` unless it is the other engine's side of the comparison.
    if (alone.t.deps.db.dialect === together.t.deps.db.dialect)
      for (const r of g.requests) answersAlone.push(await settle(send(alone, r)));
    else answersAlone.push(...(await Promise.all(g.requests.map((r) => settle(send(alone, r))))));
    answersTogether.push(...(await Promise.all(g.requests.map((r) => settle(send(together, r))))));
  }
  return { answersAlone, answersTogether };
}

/** Each group without a stored key was one batch; the others fell back, silently. */
async function assertBatched(side: Side) {
  const batchedGroups = GROUPS.filter((g) => !g.repeatsStoredKey);
  assert.equal(
    await metric(side.metrics, 'egw_accept_batch_size_count'),
    batchedGroups.length,
    'each group without a stored key was one batch',
  );
  assert.equal(
    await metric(side.metrics, 'egw_accept_batch_size_sum'),
    batchedGroups.reduce((n, g) => n + g.requests.length, 0),
  );
  const fallbacks = (reason: string) => metric(side.metrics, 'egw_accept_batch_fallbacks_total', { reason });
  assert.equal(await fallbacks('idempotency_key_stored'), GROUPS.length - batchedGroups.length);
  assert.equal(await fallbacks('database_error'), 0);
  assert.equal(await fallbacks('other_error'), 0);
  assert.deepEqual(side.log.errors, [], 'a repeated key falls back without an error in the log');
}

/** Every e-mail and order names its own event, which exists. */
async function assertLinked(side: Side) {
  const db = side.t.deps.db.db;
  const orphans = await db
    .selectFrom('scheduled_emails')
    .leftJoin('events', 'events.id', 'scheduled_emails.event_id')
    .select('scheduled_emails.id')
    .where('events.id', 'is', null)
    .execute();
  assert.deepEqual(orphans, [], 'every e-mail names an event that exists');
  const orders = await db
    .selectFrom('orders')
    .innerJoin('events', 'events.id', 'orders.created_event_id')
    .select(['orders.order_id', 'events.order_id as event_order'])
    .execute();
  for (const o of orders) assert.equal(o.event_order, o.order_id, 'an order names its own event');
}

describe('the accept executor on SQLite and PostgreSQL (differential)', { skip: pg.skip }, () => {
  let sqlite: Side;
  let postgres: Side;
  before(async () => {
    sqlite = await openSide('sqlite');
    postgres = await openSide('postgres');
    for (const side of [sqlite, postgres]) for (const r of SEED) await send(side, r);
  });
  after(async () => {
    await sqlite?.t.close();
    await postgres?.t.close();
  });

  it('the same rows in contacts, orders, events, e-mails and idempotency records, and the same answers', async () => {
    const { answersAlone, answersTogether } = await sendGroups(sqlite, postgres);
    for (const side of [sqlite, postgres]) await assertBatched(side);
    await assertSameOutcome(sqlite, postgres, answersAlone, answersTogether);
    for (const side of [sqlite, postgres]) await assertLinked(side);
  });
});

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`one at a time and together on ${dialect}`, { skip: dialect === 'postgres' && pg.skip }, () => {
    let alone: Side;
    let together: Side;
    before(async () => {
      alone = await openSide(dialect);
      together = await openSide(dialect);
      for (const side of [alone, together]) for (const r of SEED) await send(side, r);
    });
    after(async () => {
      await alone?.t.close();
      await together?.t.close();
    });

    it('write the same rows and give the same answers', async () => {
      const { answersAlone, answersTogether } = await sendGroups(alone, together);
      assert.equal(await metric(alone.metrics, 'egw_accept_batch_size_count'), 0, 'nothing was batched one by one');
      await assertBatched(together);
      await assertSameOutcome(alone, together, answersAlone, answersTogether);
      await assertLinked(together);
    });
  });
}

describe('a PostgreSQL batch', { skip: pg.skip }, () => {
  describe('a batch the database refuses', () => {
    let side: Side;
    before(async () => {
      side = await openSide();
      // A fault only the set-based path meets: the database refuses any statement inserting more than
      // one event (the per-request path inserts one at a time).
      await sql`
        create function refuse_set_based_events() returns trigger language plpgsql as $$
        begin
          if (select count(*) from inserted) > 1 then raise exception 'test fault: set-based insert refused'; end if;
          return null;
        end $$`.execute(side.t.deps.db.db);
      await sql`
        create trigger refuse_set_based_events after insert on events referencing new table as inserted
        for each statement execute function refuse_set_based_events()`.execute(side.t.deps.db.db);
    });
    after(async () => side?.t.close());

    it('is logged at error with its size and counted, and every request is still answered correctly', async () => {
      const requests: Req[] = [
        ...Array.from({ length: 14 }, (_, i) =>
          tx(i, `loud${i}@example.com`, { name: `Loud ${i}`, idempotency_key: `loud-${i}` }),
        ),
        ...Array.from({ length: 6 }, (_, i) => order(`loud-order-${i}`, `buyer${i}@example.com`)),
        tx(99, 'twice@example.com', { idempotency_key: 'twice' }),
        tx(99, 'twice@example.com', { idempotency_key: 'twice' }),
      ];
      const paths = {
        transactional: '/api/scoped/send/transactional',
        'order-created': '/api/scoped/events/order-created',
      };
      const res = await Promise.all(
        requests.map((r) =>
          keyCall(side.t.app, side.key, 'POST', paths[r.endpoint as keyof typeof paths], r.body, {
            prefer: 'respond-async',
          }),
        ),
      );

      // Every request answered as the per-request path answers it.
      for (const r of res) assert.equal(r.status, 200, JSON.stringify(r.body));
      const twice = res.slice(-2);
      assert.deepEqual(twice.map((r) => r.headers['idempotent-replayed'] === 'true').sort(), [false, true]);
      assert.equal(twice[0].body.scheduled_email_id, twice[1].body.scheduled_email_id);
      const db = side.t.deps.db.db;
      for (const [i, r] of res.entries()) {
        const ev = await db
          .selectFrom('events')
          .selectAll()
          .where('id', '=', r.body.event_id)
          .executeTakeFirstOrThrow();
        if (r.headers['idempotent-replayed'] === 'true') continue;
        const effects = JSON.parse(ev.effects);
        const ids: number[] =
          requests[i].endpoint === 'transactional' ? [r.body.scheduled_email_id] : r.body.scheduled_email_ids;
        assert.equal(ids.length, requests[i].endpoint === 'transactional' ? 1 : 3);
        assert.deepEqual(effects.scheduled_email_ids, ids);
        const rows = await db
          .selectFrom('scheduled_emails')
          .select(['event_id', 'to_email'])
          .where('id', 'in', ids)
          .execute();
        assert.deepEqual(
          rows.map((m) => [m.event_id, m.to_email]),
          ids.map(() => [r.body.event_id, String(requests[i].body.email)]),
        );
      }
      const stored = await db.selectFrom('idempotency').select('idempotency_key').execute();
      assert.equal(stored.length, 15, 'one record per key');

      // And the fault was seen: logged at error with the batch size, counted by reason, on /metrics.
      assert.ok(side.log.errors.length >= 1, 'the failed batch is logged');
      for (const e of side.log.errors) {
        assert.equal(e.obj.reason, 'database_error');
        assert.ok(e.obj.batch_size >= 2);
        assert.match(String(e.obj.err?.message), /test fault/);
        assert.match(String(e.msg), /rolled back/);
      }
      const counted = await metric(side.metrics, 'egw_accept_batch_fallbacks_total', { reason: 'database_error' });
      assert.equal(counted, side.log.errors.length);
      const scraped = await keyCall(side.t.app, null, 'GET', '/metrics');
      assert.match(
        String(scraped.body),
        new RegExp(`egw_accept_batch_fallbacks_total\\{reason="database_error"\\} ${counted}`),
      );
      assert.equal(await metric(side.metrics, 'egw_accept_batch_size_count'), 0, 'no batch was written set-based');
    });
  });
});
