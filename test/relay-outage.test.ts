// Relay outages keep mail, not attempts (SPEC §20, issue 34): a real relay that answers 421 to everything,
// and one that accepts TCP and never answers, for far longer than the old give-up time (8 attempts, 8–14
// minutes). Time is a manual clock shared by the worker and the router's breaker, moved to each e-mail's
// next due time, so 72 hours of retries take a few seconds. Asserted: nothing fails before
// SEND_GIVE_UP_AFTER; `attempts` equals the connections the relay saw (breaker skips are not attempts);
// then `failed`, reason `expired`, the last reply kept; and an e-mail is delivered once the relay is back.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { DeliveryRouter } from '../src/delivery/router.js';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import type { Deps } from '../src/services/context.js';
import { cliActor } from '../src/cliAdmin.js';
import { putDelivery } from '../src/services/delivery.js';
import { email } from '../src/services/emails.js';
import { secretBox } from '../src/services/secrets.js';
import {
  PG_URL,
  PUBLIC_URL,
  SECRET,
  TestClock,
  addContact,
  addEmail,
  emailRow,
  openTestDb,
  seedProject,
  startSmtp,
  type TestDb,
} from './fixtures/delivery-support.js';

const HOUR = 3_600_000;

/** A deterministic stand-in for Math.random (the backoff's jitter), so every run takes the same path. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A relay that accepts TCP connections and never says a word (not even the greeting). */
async function silentRelay(): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let n = 0;
  const server: Server = createServer((s) => {
    n++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    connections: () => n,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(
    `relay outages keep mail, not attempts (${dialect})`,
    { skip: dialect === 'postgres' && !PG_URL ? 'no TEST_DATABASE_URL' : false },
    () => {
      let t: TestDb;
      let deps: Deps;
      let sites = 0;
      const closers: (() => Promise<void>)[] = [];

      before(async () => {
        t = await openTestDb(dialect);
        deps = {
          db: t.db,
          config: loadConfig({ SEND_WAIT_MS: '0', RELAYS_ALLOW_PRIVATE: 'true' }),
          clock: { now: () => Date.now() },
          secret: SECRET,
        };
      });
      after(async () => {
        for (const c of closers.splice(0).reverse()) await c();
        await t?.cleanup();
      });

      /** A project of its own whose only relay is `url`, and a worker on a manual clock. */
      async function setUp(url: string, o: { giveUpAfterMs: number; smtpTimeoutMs?: number; stepMs: number }) {
        const siteKey = `outage${++sites}`;
        const project = await seedProject(t.db, { siteKey, fromEmail: `noreply@${siteKey}.example` });
        await putDelivery(deps, cliActor(), siteKey, { primary: { smtp_url: url } });
        const clock = new TestClock();
        // The breaker as configured by default (5 failures in a row, 60 s cool-down), on the same clock.
        const router = new DeliveryRouter({
          installation: createCaptureTransport(),
          box: secretBox(SECRET),
          clock,
          smtpTimeoutMs: o.smtpTimeoutMs ?? 5_000,
        });
        const worker: Worker = createWorker({
          db: t.db,
          transport: createCaptureTransport(),
          router,
          clock,
          publicUrl: PUBLIC_URL,
          secret: SECRET,
          concurrency: 1,
          leaseMs: 10 * 60_000,
          // The defaults but the give-up time: 30 s doubling to 1 h, full jitter, no attempt ceiling.
          retry: { giveUpAfterMs: o.giveUpAfterMs },
          random: seeded(sites * 7919),
        });
        closers.push(() => router.close());
        let made = 0;
        const add = async (n: number) => {
          const ids: number[] = [];
          for (let i = 0; i < n; i++) {
            const to = `${siteKey}-${++made}@example.org`;
            const contactId = await addContact(t.db, project.projectId, to);
            ids.push(await addEmail(t.db, { ...project, contactId, to, dueAt: clock.now() }));
          }
          return ids;
        };
        const rows = (ids: number[]) => Promise.all(ids.map((id) => emailRow(t.db, id)));
        /**
         * Runs the worker at each next due time until `stop` says so; returns the deliveries it made
         * (claims taken to an outcome, relay reached or not).
         */
        const runUntil = async (ids: number[], stop: (now: number) => boolean, each?: () => Promise<void>) => {
          let deliveries = 0;
          for (let guard = 0; guard < 5_000; guard++) {
            deliveries += await worker.runOnce();
            await each?.();
            const pending = (await rows(ids)).filter((r) => ['queued', 'scheduled'].includes(r.status));
            if (stop(clock.now()) || pending.length === 0) {
              if (process.env.DEBUG_OUTAGE) console.log('rounds', guard, deliveries);
              return deliveries;
            }
            // To the next due time, and a little past it, so e-mails due close together go in one batch
            // (fewer rounds; one after another, so the breaker opens and skips the next ones).
            clock.t = Math.max(clock.t + 1, Math.min(...pending.map((r) => Number(r.due_at))) + o.stepMs);
          }
          throw new Error('the worker never finished');
        };
        return { clock, add, rows, runUntil };
      }

      it('421 to everything: retried for 72 h, attempts = relay contacts, then expired with the last reply; delivered once the relay is back', async () => {
        let answer: 'refuse' | 'accept' = 'refuse';
        const relay = await startSmtp({
          onConnect: () => (answer === 'refuse' ? { code: 421, message: '4.3.2 Service shutting down' } : undefined),
        });
        closers.push(() => relay.close());
        const s = await setUp(relay.url, { giveUpAfterMs: loadConfig({}).retry.giveUpAfterMs, stepMs: 45 * 60_000 });
        assert.equal(loadConfig({}).retry.giveUpAfterMs, 72 * HOUR, 'SEND_GIVE_UP_AFTER defaults to 72h');
        const start = s.clock.now();
        const ids = await s.add(4);
        // Everything the relay sees until 1 h before the give-up time: nothing fails, nothing is lost.
        const deliveries = await s.runUntil(ids, (now) => now >= start + 71 * HOUR);
        let rows = await s.rows(ids);
        assert.deepEqual(
          rows.map((r) => r.status),
          ids.map(() => 'scheduled'),
          'no e-mail failed in 71 hours of 421 (the old code gave up after 8 attempts)',
        );
        const attempts = rows.reduce((n, r) => n + r.attempts, 0);
        assert.equal(attempts, relay.connections, 'every attempt counted is a connection the relay saw');
        assert.ok(deliveries > attempts, `breaker skips happened (${deliveries} deliveries, ${attempts} attempts)`);
        if (process.env.DEBUG_OUTAGE) console.log(rows.map((r) => r.attempts));
        for (const r of rows) assert.equal(Number(r.waiting_since), start, 'waiting since the first failure');
        const detail = await email(deps, ids[0]);
        assert.equal(detail.waiting_since, new Date(start).toISOString(), 'the admin sees since when it waits');
        assert.equal(detail.attempts_log.filter((a) => /circuit open/.test(a.reply ?? '')).length, 0);

        // Past SEND_GIVE_UP_AFTER: each ends failed, reason expired, the relay's last reply kept.
        await s.runUntil(ids, () => false);
        rows = await s.rows(ids);
        for (const r of rows) {
          assert.equal(r.status, 'failed');
          assert.ok(Number(r.updated_at) >= start + 72 * HOUR, 'not failed before SEND_GIVE_UP_AFTER');
          assert.ok(Number(r.updated_at) < start + 74 * HOUR, 'given up soon after it');
          assert.match(r.last_error ?? '', /^expired: .*72h.*last reply: .*421 4\.3\.2 Service shutting down/);
        }
        assert.equal(
          rows.reduce((n, r) => n + r.attempts, 0),
          relay.connections,
        );
        const expired = await email(deps, ids[0]);
        assert.equal(expired.reason, 'expired');
        assert.equal(expired.waiting_since, null);
        assert.match(expired.attempts_log.at(-1)?.reply ?? '', /421/);

        // A new e-mail waits through 5 hours of 421 (far past the old give-up time), then the relay is back.
        const [late] = await s.add(1);
        const seenBefore = relay.connections;
        const t0 = s.clock.now();
        await s.runUntil([late], (now) => now >= t0 + 5 * HOUR);
        const waiting = await emailRow(t.db, late);
        assert.equal(waiting.status, 'scheduled');
        answer = 'accept';
        await s.runUntil([late], () => false);
        const sent = await emailRow(t.db, late);
        assert.equal(sent.status, 'sent');
        assert.equal(relay.accepted.length, 1);
        assert.equal(sent.attempts, relay.connections - seenBefore, 'attempts = relay contacts, the last one accepted');
        assert.equal(sent.waiting_since, null);
        assert.equal((await email(deps, late)).reason, null);
      });

      it('a relay that accepts TCP and never answers: kept until SEND_GIVE_UP_AFTER, then expired with the timeout', async () => {
        const relay = await silentRelay();
        closers.push(() => relay.close());
        const s = await setUp(relay.url, { giveUpAfterMs: 6 * HOUR, smtpTimeoutMs: 150, stepMs: 0 });
        const start = s.clock.now();
        const ids = await s.add(2);
        await s.runUntil(ids, (now) => now >= start + 5 * HOUR);
        let rows = await s.rows(ids);
        assert.deepEqual(
          rows.map((r) => r.status),
          ['scheduled', 'scheduled'],
          'waiting, not failed, 5 h into the outage',
        );
        assert.equal(
          rows.reduce((n, r) => n + r.attempts, 0),
          relay.connections(),
          'attempts = connections',
        );
        await s.runUntil(ids, () => false);
        rows = await s.rows(ids);
        for (const r of rows) {
          assert.equal(r.status, 'failed');
          assert.ok(Number(r.updated_at) >= start + 6 * HOUR);
          assert.match(
            r.last_error ?? '',
            /^expired: .*6h.*last reply: .*(timeout|Greeting never received|ETIMEDOUT)/i,
          );
        }
        assert.equal(
          rows.reduce((n, r) => n + r.attempts, 0),
          relay.connections(),
        );
        assert.equal((await email(deps, ids[1])).reason, 'expired');
      });
    },
  );
}
