// A transport's rate cap (messages per second) holds across worker processes: two `worker` processes
// spawned through the CLI over one PostgreSQL schema and one Redis send one project's e-mails through
// its relay, and the relay sees them no faster than the cap, however the two share them. In one process
// without Redis the cap holds too. The bound checked is a lower one (load only makes sending slower).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { dropSchema, openDatabase, schemaUrl, type Db } from '../src/db/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { MemoryRateCap } from '../src/delivery/rateCap.js';
import { DeliveryRouter } from '../src/delivery/router.js';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { systemClock } from '../src/services/context.js';
import { cliActor } from '../src/cliAdmin.js';
import { putDelivery } from '../src/services/delivery.js';
import { secretBox } from '../src/services/secrets.js';
import {
  PUBLIC_URL,
  SECRET,
  addContact,
  addEmail,
  freePort,
  openTestDb,
  seedProject,
  startSmtp,
  until,
  type TestSmtp,
} from './fixtures/delivery-support.js';
import { hasExited } from './support/processes.js';

const PG_URL = process.env.TEST_DATABASE_URL?.trim() || null;
const REDIS_URL = process.env.TEST_REDIS_URL?.trim() || null;

/** When the relay finished reading each message (ms). */
function timedRelay() {
  const at: number[] = [];
  return {
    at,
    start: () =>
      startSmtp({
        onData: () => {
          at.push(Date.now());
          return undefined;
        },
      }),
  };
}

describe('rate cap in one process (memory)', () => {
  it('spaces the sends of one transport by 1/rate', async () => {
    const t = await openTestDb('sqlite');
    const timed = timedRelay();
    const relay = await timed.start();
    try {
      const s = await seedProject(t.db, { siteKey: 'capped' });
      const deps = {
        db: t.db,
        config: loadConfig({ RELAYS_ALLOW_PRIVATE: 'true' }),
        clock: systemClock,
        secret: SECRET,
      };
      await putDelivery(deps, cliActor(), 'capped', { primary: { smtp_url: relay.url, rate_per_second: 20 } });
      for (let i = 0; i < 11; i++) {
        const c = await addContact(t.db, s.projectId, `m${i}@example.org`);
        await addEmail(t.db, {
          projectId: s.projectId,
          templateId: s.templateId,
          contactId: c,
          to: `m${i}@example.org`,
        });
      }
      const router = new DeliveryRouter({
        installation: createCaptureTransport(),
        box: secretBox(SECRET),
        rateCap: new MemoryRateCap(),
      });
      const worker = createWorker({
        db: t.db,
        transport: createCaptureTransport(),
        router,
        publicUrl: PUBLIC_URL,
        secret: SECRET,
        concurrency: 10,
      });
      const started = Date.now();
      await worker.runOnce();
      await router.close();
      assert.equal(timed.at.length, 11);
      // 11 sends at 20/s: the first slot at once, the last 10 slots (500 ms) later.
      const span = Math.max(...timed.at) - started;
      assert.ok(span >= 450, `11 messages at 20/s took ${span} ms`);
    } finally {
      await relay.close();
      await t.cleanup();
    }
  });
});

describe(
  'rate cap across two worker processes (PostgreSQL + Redis)',
  { skip: !PG_URL || !REDIS_URL ? 'TEST_DATABASE_URL and TEST_REDIS_URL are needed' : false },
  () => {
    const schema = `rcap_${randomBytes(5).toString('hex')}`;
    let db: Db;
    let relay: TestSmtp;
    const timed = timedRelay();
    const procs: { child: ChildProcess; port: number; out: () => string }[] = [];
    const RATE = 10;
    const N = 30;

    before(async () => {
      db = await openDatabase(PG_URL!, { schema, poolSize: 3 });
      await migrateToLatest(db);
      relay = await timed.start();
    });
    after(async () => {
      for (const p of procs) {
        if (hasExited(p.child)) continue;
        const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
        p.child.kill('SIGCONT'); // a failure may leave one paused
        p.child.kill('SIGTERM');
        await exited;
      }
      await db?.close();
      await relay?.close();
      await dropSchema(PG_URL!, schema);
    });

    it(`sends ${N} e-mails at most ${RATE} per second in total`, async () => {
      const s = await seedProject(db, { siteKey: 'capped' });
      const deps = { db, config: loadConfig({ RELAYS_ALLOW_PRIVATE: 'true' }), clock: systemClock, secret: SECRET };
      await putDelivery(deps, cliActor(), 'capped', { primary: { smtp_url: relay.url, rate_per_second: RATE } });
      for (const i of [1, 2]) {
        const port = await freePort();
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'worker'], {
          env: {
            ...process.env,
            DATABASE_URL: schemaUrl(PG_URL!, schema),
            REDIS_URL: REDIS_URL!,
            SECRET_KEY: SECRET,
            LOG_LEVEL: 'warn',
            METRICS_PORT: String(port),
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (c) => (out = (out + String(c)).slice(-10_000)));
        child.stderr.on('data', (c) => (out = (out + String(c)).slice(-10_000)));
        procs.push({ child, port, out: () => `worker${i}: ${out}` });
      }
      const up = async (port: number) => {
        try {
          return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
        } catch {
          return false;
        }
      };
      for (const p of procs) await until(() => up(p.port), 60_000, `healthy worker (${p.out()})`);
      // Each worker is made to claim half of the e-mails (the other one paused with SIGSTOP meanwhile), so
      // both then send at once through the shared cap, whatever the timing of their polls.
      const unclaimed = async () =>
        Number(
          (
            await db.db
              .selectFrom('scheduled_emails')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('status', 'in', ['scheduled', 'queued'])
              .executeTakeFirstOrThrow()
          ).n,
        );
      const started = Date.now();
      let made = 0;
      for (const [claimer, paused] of [
        [procs[1], procs[0]],
        [procs[0], procs[1]],
      ]) {
        paused.child.kill('SIGSTOP');
        claimer.child.kill('SIGCONT');
        for (const end = made + N / 2; made < end; made++) {
          const c = await addContact(db, s.projectId, `r${made}@example.org`);
          await addEmail(db, {
            projectId: s.projectId,
            templateId: s.templateId,
            contactId: c,
            to: `r${made}@example.org`,
          });
        }
        await until(async () => (await unclaimed()) === 0, 30_000, `claim by one worker (${claimer.out()})`);
      }
      procs[1].child.kill('SIGCONT');
      await until(() => timed.at.length >= N, 120_000, `${N} messages (${procs.map((p) => p.out()).join('\n')})`);
      const workers = await db.db
        .selectFrom('scheduled_emails')
        .select('locked_by')
        .distinct()
        .where('status', '=', 'sent')
        .execute();
      assert.equal(workers.length, 2, 'both worker processes sent');
      const metrics = await Promise.all(
        procs.map(async (p) => (await fetch(`http://127.0.0.1:${p.port}/metrics`)).text()),
      );
      for (const m of metrics) assert.match(m, /egw_delivery_breaker_state\{transport="capped\/primary"\} 0/);
      const span = Math.max(...timed.at) - started;
      // N sends at RATE/s: at least N-1 intervals of 1/RATE s between the first and the last.
      assert.ok(span >= ((N - 1) * 1000) / RATE - 50, `${N} messages at ${RATE}/s took ${span} ms`);
    });
  },
);
