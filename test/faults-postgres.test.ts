// Issue 34 / SPEC §20, "the database goes away", for real: a PostgreSQL cluster of this test's own (its
// own port, so it may be restarted) under an API process and a worker process spawned through the CLI
// as an operator starts them. `pg_ctl restart -m fast` while 50 clients send: both processes stay up,
// no request is answered 500 or refused at the socket (503 service_unavailable with Retry-After while
// the database is away), every request answered 2xx is stored and sent exactly once, and nothing stays
// `sending`. Then the cluster stopped while idle: 503 with Retry-After on gateway and admin routes,
// /readyz 503, /healthz 200, and everything resumes by itself once it is started again.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { cliActor } from '../src/cliAdmin.js';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Db } from '../src/db/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/services/context.js';
import { loadDemo } from '../src/services/demo.js';
import { freePort } from './fixtures/delivery-support.js';
import { callGateway, ok, summary, type Answer } from './support/faultAnswers.js';
import { ownPostgresUnavailable, startOwnPostgres, type OwnPostgres } from './support/ownServices.js';
import { assertAlive, healthy, startProcess, stopProcess, type Proc } from './support/processes.js';

const ADMIN = 'faults-admin-token-0123456789abcdef';
const SKIP = ownPostgresUnavailable();
if (SKIP) console.log(`faults-postgres skipped: ${SKIP}`);

const CLIENTS = 50;
/** SPEC §20: the processes resume by themselves within 10 s. */
const RESUME_MS = 10_000;
/** The worker's lease (delivery/worker.ts): a claim taken before the loss comes back no later. */
const LEASE_MS = 60_000;

describe('PostgreSQL goes away under an API and a worker process (issue 34)', { skip: SKIP || false }, () => {
  let pg: OwnPostgres;
  let db: Db;
  let smtp: SMTPServer;
  const received = new Map<string, number>(); // Message-ID -> times received
  let api: Proc;
  let worker: Proc;
  let key = '';

  before(async () => {
    pg = await startOwnPostgres();
    db = await openDatabase(pg.url, { poolSize: 3 });
    await migrateToLatest(db);
    const demo = await loadDemo({ db, config: loadConfig({ DATABASE_URL: pg.url }), clock: systemClock }, cliActor());
    key = demo.keys.find((k) => k.name.startsWith('site backend'))!.key!;
    // The load must not meet the key's rate limit.
    await db.db
      .updateTable('api_keys')
      .set({ rate_per_second: 100_000, rate_burst: 100_000 })
      .where('name', 'like', 'site backend%')
      .execute();

    smtp = new SMTPServer({
      logger: false,
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      maxClients: 100,
      onData(stream, _s, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('latin1');
          const id = /^Message-ID:\s*(<[^>\r\n]+>)/im.exec(raw)?.[1] ?? '(none)';
          received.set(id, (received.get(id) ?? 0) + 1);
          cb(null);
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    const smtpPort = (smtp.server.address() as AddressInfo).port;

    const common = { DATABASE_URL: pg.url, ADMIN_TOKEN: ADMIN, PUBLIC_URL: 'https://mail.example.test' };
    const apiPort = await freePort();
    api = startProcess('api', 'serve', { ...common, ROLE: 'api', PORT: String(apiPort) }, apiPort);
    const workerPort = await freePort();
    worker = startProcess(
      'worker',
      'worker',
      { ...common, SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, METRICS_PORT: String(workerPort) },
      workerPort,
    );
    await Promise.all([healthy(api), healthy(worker)]);
  });

  after(async () => {
    await Promise.all([api, worker].filter(Boolean).map(stopProcess));
    await db?.close();
    if (smtp) await new Promise<void>((r) => smtp.close(() => r()));
    await pg?.destroy();
  });

  const alive = () => {
    for (const p of [api, worker]) assertAlive(p);
  };

  const call = callGateway;
  let seq = 0;
  const send = () =>
    call(
      api.port,
      'POST',
      '/api/scoped/send/transactional',
      {
        event_type: 'contest_results',
        email: `reader${seq % 300}@example.com`,
        name: 'Reader',
        idempotency_key: `pgfault-${seq++}`,
        fields: { event_title: 'Spring contest', work_title: `Work ${seq}`, place: '1' },
      },
      { 'x-api-key': key, prefer: 'respond-async' },
    );

  const statusOf = async (ids: number[]) =>
    db.db.selectFrom('scheduled_emails').select(['id', 'status']).where('id', 'in', ids).execute();

  /** Waits (bounded) until none of `ids` is pending or sending any more; returns the rows then. */
  const settle = async (ids: number[], ms: number) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const rows = await statusOf(ids).catch(() => null);
      if (
        rows &&
        rows.length === ids.length &&
        rows.every((r) => !['scheduled', 'queued', 'sending'].includes(r.status))
      )
        return rows;
      if (Date.now() > deadline) return rows ?? [];
      await new Promise((r) => setTimeout(r, 500));
    }
  };

  it(
    '`pg_ctl restart -m fast` during 50 concurrent sends: no process dies, no 500, nothing lost or sent twice',
    {
      timeout: 240_000,
    },
    async () => {
      const answers: Answer[] = [];
      let sending = true;
      const clients = Array.from({ length: CLIENTS }, async () => {
        while (sending) answers.push(await send());
      });
      // Load first, then the restart in the middle of it, then load on the restarted server.
      await new Promise((r) => setTimeout(r, 3_000));
      const before = answers.length;
      await pg.restart();
      const restartedAt = Date.now();
      // Well past the 10 s in which everything must have resumed: the tail of the run must be all 2xx.
      await new Promise((r) => setTimeout(r, RESUME_MS + 5_000));
      const tailFrom = answers.length;
      await new Promise((r) => setTimeout(r, 3_000));
      sending = false;
      await Promise.all(clients);
      alive();

      const by = (s: Answer['status']) => answers.filter((a) => a.status === s);
      const said = summary(answers);
      console.log(`# ${answers.length} requests (${before} before the restart): ${said}`);
      assert.equal(by('refused').length, 0, `refused at the socket: ${by('refused')[0]?.error} (${said})`);
      assert.equal(by(500).length, 0, `answered 500 (${said})`);
      for (const a of answers.filter((x) => !ok(x))) {
        assert.equal(a.status, 503, said);
        assert.equal(a.code, 'service_unavailable', said);
        assert.ok(Number(a.retryAfter) >= 1, 'a 503 carries Retry-After');
      }
      const tail = answers.slice(tailFrom);
      assert.ok(tail.length > 0 && tail.every(ok), `resumed after the restart (${said})`);
      console.log(
        `# resumed: every request of the last 3 s answered 2xx; the restart was ${((Date.now() - restartedAt) / 1000).toFixed(0)} s before the end`,
      );

      // Every request answered 2xx is stored, and is delivered exactly once. A claim taken before the
      // restart comes back no later than the lease.
      const ids = [...new Set(answers.filter(ok).map((a) => a.id!))];
      assert.ok(ids.length > 100, `enough load went through (${ids.length})`);
      const rows = await settle(ids, LEASE_MS + 60_000);
      assert.equal(rows.length, ids.length, 'every e-mail answered 2xx is stored');
      const stuck = rows.filter((r) => r.status !== 'sent');
      assert.deepEqual(stuck, [], 'every e-mail is sent (none stays sending or queued)');
      alive();
      const ours = await db.db.selectFrom('scheduled_emails').select('message_id').where('id', 'in', ids).execute();
      const twice = ours.filter((r) => (received.get(r.message_id!) ?? 0) > 1);
      const never = ours.filter((r) => !received.get(r.message_id!));
      console.log(`# ${ids.length} e-mails stored and sent; ${twice.length} received twice`);
      assert.equal(never.length, 0, 'every sent e-mail reached the relay');
      // Nothing crashed: the worker kept every outcome the relay gave until the database took it.
      assert.equal(twice.length, 0, 'no e-mail was sent twice');
    },
  );

  it(
    'PostgreSQL stopped while idle: 503 with Retry-After, /readyz 503, /healthz 200; back by itself',
    {
      timeout: 120_000,
    },
    async () => {
      await pg.stop();
      try {
        const sent = await send();
        assert.equal(sent.status, 503, JSON.stringify(sent));
        assert.equal(sent.code, 'service_unavailable');
        assert.ok(Number(sent.retryAfter) >= 1, 'Retry-After on a gateway 503');
        const admin = await call(api.port, 'GET', '/api/admin/projects', undefined, {
          authorization: `Bearer ${ADMIN}`,
        });
        assert.equal(admin.status, 503, JSON.stringify(admin));
        assert.equal(admin.code, 'service_unavailable');
        assert.ok(Number(admin.retryAfter) >= 1, 'Retry-After on an admin 503');
        for (const p of [api, worker]) {
          assert.equal((await call(p.port, 'GET', '/readyz')).status, 503, `${p.name} /readyz`);
          assert.equal((await call(p.port, 'GET', '/healthz')).status, 200, `${p.name} /healthz`);
        }
        const metrics = await (await fetch(`http://127.0.0.1:${api.port}/metrics`)).text();
        const counted = Number(/^edu_gateway_db_unavailable_total (\d+)/m.exec(metrics)?.[1]);
        assert.ok(counted >= 2, `edu_gateway_db_unavailable_total counts the refused requests (${counted})`);
        // Idle for a while with the database away: the worker backs off and stays up.
        await new Promise((r) => setTimeout(r, 3_000));
        alive();
      } finally {
        await pg.start();
      }
      const upAt = Date.now();
      let first: Answer | null = null;
      while (Date.now() - upAt < RESUME_MS) {
        const a = await send();
        if (ok(a)) {
          first = a;
          break;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.ok(first, `the API answers 2xx within ${RESUME_MS / 1000} s of the database being back`);
      // /readyz stays 503 for a few seconds after the last refused write (db/unavailable.ts): poll it.
      let ready: number | string = 0;
      while (Date.now() - upAt < RESUME_MS + 10_000) {
        ready = (await call(api.port, 'GET', '/readyz')).status;
        if (ready === 200) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(ready, 200, '/readyz is 200 again once the database is back');
      const [row] = await settle([first.id!], RESUME_MS + 20_000);
      assert.equal(row?.status, 'sent', 'the worker resumed by itself');
      alive();
    },
  );
});
