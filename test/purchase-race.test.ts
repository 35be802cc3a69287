// Issue 30, measured in time: hundreds of purchases race their own due cart e-mails, through real
// processes (PostgreSQL: 2 API + 2 worker processes; SQLite: one `serve`), delivering into an SMTP server
// in this process that notes when each message arrived. No cart e-mail may arrive after its order's
// purchase was answered unless that answer reported it `in_flight`. The in-flight case itself, made
// certain by a relay that takes 2 s to answer DATA, is in purchase-inflight.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { cliActor } from '../src/cliAdmin.js';
import { loadConfig } from '../src/config.js';
import { dropSchema, openDatabase, schemaUrl, type Db } from '../src/db/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/services/context.js';
import { loadDemo } from '../src/services/demo.js';
import { freePort } from './fixtures/delivery-support.js';
import { PG_URL } from './support/harness.js';
import { healthy, pool, startProcess, stopProcess, type Proc } from './support/processes.js';

const ADMIN = 'purchase-race-admin-token-0123456789';
const ORDERS = { postgres: 300, sqlite: 200 } as const;
type Engine = keyof typeof ORDERS;
/**
 * The pause between an order and its purchase. On SQLite one process accepts the 32 concurrent orders
 * and sends their e-mails on the same event loop (rendering in its thread pool): on a loaded CI machine
 * its first e-mails reached the relay later than 400 ms, so every purchase won and the race the last
 * assertion asks for never happened (CI: 0 before, 2 in flight, 398 stopped). There, half the purchases
 * follow at once (stopped even on a fast machine) and half within 2 s (sent first even on a slow one).
 */
const PURCHASE_AFTER_MS = { postgres: 400, sqlite: 2_000 } as const;
const purchaseAfter = (engine: Engine) =>
  engine === 'sqlite' && Math.random() < 0.5 ? 0 : Math.random() * PURCHASE_AFTER_MS[engine];

interface Arrival {
  at: number;
  count: number;
}

async function startRelay() {
  const arrivals = new Map<string, Arrival>(); // Message-ID -> first arrival, times received
  const smtp = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    maxClients: 100,
    onData(stream, _s, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        // The moment the relay has the whole message: before it answers, so before the worker knows.
        const at = Date.now();
        const raw = Buffer.concat(chunks).toString('latin1');
        const id = /^Message-ID:\s*(<[^>\r\n]+>)/im.exec(raw.slice(0, raw.indexOf('\r\n\r\n')))?.[1] ?? '(none)';
        const seen = arrivals.get(id);
        arrivals.set(id, seen ? { ...seen, count: seen.count + 1 } : { at, count: 1 });
        cb(null);
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  return {
    arrivals,
    url: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => smtp.close(() => r())),
  };
}

async function openEngine(engine: Engine) {
  if (engine === 'postgres') {
    const schema = `race_${randomBytes(5).toString('hex')}`;
    const db = await openDatabase(PG_URL!, { schema, poolSize: 3 });
    return { db, url: schemaUrl(PG_URL!, schema), cleanup: () => dropSchema(PG_URL!, schema) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'egw-race-'));
  const url = `sqlite:${join(dir, 'gateway.db')}`;
  return { db: await openDatabase(url), url, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function call(port: number, method: string, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : null;
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
  return parsed;
}

async function race(engine: Engine) {
  const e = await openEngine(engine);
  const relay = await startRelay();
  const procs: Proc[] = [];
  let db: Db | null = e.db;
  try {
    await migrateToLatest(db);
    const demo = await loadDemo({ db, config: loadConfig({ DATABASE_URL: e.url }), clock: systemClock }, cliActor());
    const siteKey = demo.site_key;
    const key = demo.keys.find((k) => k.name.startsWith('site backend'))!.key!;
    const project = await db.db
      .selectFrom('projects')
      .select('id')
      .where('site_key', '=', siteKey)
      .executeTakeFirstOrThrow();
    const tpl = async (name: string) =>
      (
        await db!.db
          .selectFrom('templates')
          .select('id')
          .where('project_id', '=', project.id)
          .where('name', '=', name)
          .executeTakeFirstOrThrow()
      ).id;
    const keyRow = await db.db
      .selectFrom('api_keys')
      .select('id')
      .where('project_id', '=', project.id)
      .where('name', 'like', 'site backend%')
      .executeTakeFirstOrThrow();
    const steps = [
      { template_id: await tpl('course_abandoned_cart_1h'), delay_minutes: 0 },
      { template_id: await tpl('course_abandoned_cart_1d'), delay_minutes: 0 },
      { template_id: await tpl('course_abandoned_cart_3d'), delay_minutes: 1440 },
    ];

    const common = {
      DATABASE_URL: e.url,
      PUBLIC_URL: 'https://mail.example.test',
      ADMIN_TOKEN: ADMIN,
      SMTP_URL: relay.url,
    };
    if (engine === 'postgres') {
      for (const i of [1, 2]) {
        const port = await freePort();
        procs.push(startProcess(`api${i}`, 'serve', { ...common, ROLE: 'api', PORT: String(port) }, port));
      }
      for (const i of [1, 2]) {
        const port = await freePort();
        procs.push(startProcess(`worker${i}`, 'worker', { ...common, METRICS_PORT: String(port) }, port));
      }
    } else {
      // SQLite: one process, API and worker together; this process only reads the file afterwards.
      await db.close();
      db = null;
      const port = await freePort();
      procs.push(startProcess('serve', 'serve', { ...common, PORT: String(port) }, port));
    }
    await Promise.all(procs.map(healthy));
    const apis = procs.filter((p) => p.name !== 'worker1' && p.name !== 'worker2').map((p) => p.port);
    const admin = { authorization: `Bearer ${ADMIN}` };
    const seq = await call(apis[0], 'POST', '/api/sequences', { site_key: siteKey, name: 'due at once', steps }, admin);
    await call(
      apis[0],
      'PUT',
      `/api/admin/projects/${siteKey}/cart-chains`,
      { chains: { course: seq.sequence_id } },
      admin,
    );
    await call(
      apis.at(-1)!,
      'PATCH',
      `/api/admin/keys/${keyRow.id}`,
      { rate_limit: { per_second: 100_000, burst: 100_000 } },
      admin,
    );

    // Each order: order-created through one API process, then, after purchaseAfter() (workers poll every
    // 200 ms), its purchase through the other.
    const h = { 'x-api-key': key };
    const run = randomBytes(3).toString('hex');
    const answered = new Map<string, { at: number; inFlight: Map<number, string> }>();
    let n = 0;
    await pool(
      32,
      Array.from({ length: ORDERS[engine] }, (_, i) => async () => {
        const id = `${run}-${i}`;
        const [a, b] = [apis[n++ % apis.length], apis[n++ % apis.length]];
        const body = { cart_type: 'course', email: `buyer${i}@example.com`, order_id: id };
        await call(a, 'POST', '/api/scoped/events/order-created', { ...body, course_name: 'Inclusive education' }, h);
        await new Promise((r) => setTimeout(r, purchaseAfter(engine)));
        const p = await call(b, 'POST', '/api/scoped/events/purchase', { ...body, amount: 2500, currency: 'RUB' }, h);
        const at = Date.now();
        const inFlight = new Map<number, string>();
        for (const entry of p.plan as { scheduled_email_id: number; reason: string; send_started_at?: string }[])
          if (entry.reason === 'in_flight') inFlight.set(entry.scheduled_email_id, entry.send_started_at!);
        answered.set(id, { at, inFlight });
      }),
    );

    // Settle: nothing due or being sent, and the relay has every message the workers recorded as sent.
    const reader = db ?? (await openDatabase(e.url));
    db = reader;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const busy = await reader.db
        .selectFrom('scheduled_emails')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where((eb) =>
          eb.or([
            eb('status', 'in', ['queued', 'sending']),
            eb.and([eb('status', '=', 'scheduled'), eb('due_at', '<=', Date.now())]),
          ]),
        )
        .executeTakeFirstOrThrow();
      const sent = await reader.db
        .selectFrom('scheduled_emails')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', 'sent')
        .executeTakeFirstOrThrow();
      if (Number(busy.n) === 0 && relay.arrivals.size >= Number(sent.n)) break;
      assert.ok(
        Date.now() < deadline,
        `still ${busy.n} due or sending, ${sent.n} sent, ${relay.arrivals.size} arrived`,
      );
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 300)); // a duplicate, if any, would arrive now

    const rows = await reader.db
      .selectFrom('scheduled_emails')
      .select(['id', 'status', 'order_id', 'chain_step', 'message_id', 'in_flight_event_id', 'send_started_at'])
      .where('kind', '=', 'cart')
      .execute();
    const cancelledIds = new Set(rows.filter((r) => r.status === 'cancelled').map((r) => r.message_id));
    const late: string[] = [];
    let inFlight = 0;
    let inFlightAfter = 0;
    let onTime = 0;
    for (const r of rows) {
      const a = answered.get(r.order_id!)!;
      const arrival = r.message_id ? relay.arrivals.get(r.message_id) : undefined;
      if (r.status === 'cancelled') {
        assert.ok(!a.inFlight.has(r.id), `e-mail ${r.id} reported in flight was cancelled`);
        continue;
      }
      assert.equal(r.status, 'sent', `e-mail ${r.id} (${r.chain_step}) is ${r.status}`);
      assert.notEqual(r.chain_step, 'step3', 'the step due a day later never goes');
      assert.equal(arrival?.count, 1, `e-mail ${r.id} arrived ${arrival?.count ?? 0} times`);
      if (a.inFlight.has(r.id)) {
        inFlight++;
        if (arrival.at > a.at) inFlightAfter++;
        // The record says so too, with the time the answer gave.
        assert.notEqual(r.in_flight_event_id, null);
        assert.equal(new Date(Number(r.send_started_at)).toISOString(), a.inFlight.get(r.id));
        assert.ok(Number(r.send_started_at) <= a.at);
      } else if (arrival.at > a.at) late.push(`e-mail ${r.id} arrived ${arrival.at - a.at} ms after its purchase`);
      else onTime++;
    }
    for (const [id] of relay.arrivals) assert.ok(!cancelledIds.has(id), `cancelled e-mail ${id} reached the relay`);
    const stopped = rows.filter((r) => r.status === 'cancelled' && r.chain_step !== 'step3').length;
    const due = rows.filter((r) => r.chain_step !== 'step3').length;
    console.log(
      `# ${engine}: ${ORDERS[engine]} purchases racing ${due} due cart e-mails: ${onTime} arrived before the purchase was answered, ` +
        `${stopped} were stopped, ${inFlight} were in flight (reported; ${inFlightAfter} of them arrived after the answer), ${late.length} arrived late unreported`,
    );
    assert.deepEqual(late.slice(0, 10), [], `${late.length} cart e-mails reached the relay after their purchase`);
    // The race was real: some e-mails went before their purchase and some were stopped.
    assert.ok(onTime + inFlight > 0 && stopped > 0, 'both outcomes of the race occurred');
  } finally {
    await Promise.all(procs.map(stopProcess));
    await db?.close();
    await relay.close();
    await e.cleanup();
  }
}

describe('a purchase stops every cart e-mail not yet handed to the relay (issue 30)', () => {
  it(
    'PostgreSQL, 2 API + 2 worker processes',
    { skip: PG_URL ? false : 'TEST_DATABASE_URL is not set', timeout: 120_000 },
    () => race('postgres'),
  );
  it('SQLite, one process', { timeout: 120_000 }, () => race('sqlite'));
});
