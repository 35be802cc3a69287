// One tenant's trouble is its own (SPEC §20, issue 34): project A's relay accepts TCP connections and never
// answers, with a backlog of A's e-mails due before anything else; project B's transactional e-mails,
// accepted one by one meanwhile, reach B's own real SMTP relay within 2 s (p99) of being accepted. Also:
// the worker holds at most RELAY_CONCURRENCY connections to A's relay, and A's e-mails are not lost (they
// stay pending, no attempt counted against them while they only waited). The old code claimed A's backlog
// first and let its hung sends fill every delivery slot (B waited p90 12.3 s, max 26 s).
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { DeliveryRouter } from '../src/delivery/router.js';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { cliActor } from '../src/cliAdmin.js';
import { putDelivery } from '../src/services/delivery.js';
import { secretBox } from '../src/services/secrets.js';
import { claimDue } from '../src/repos/outbox.js';
import {
  PG_URL,
  PUBLIC_URL,
  SECRET,
  addContact,
  addEmail,
  openTestDb,
  seedProject,
  startSmtp,
  type TestDb,
  type TestSmtp,
} from './fixtures/delivery-support.js';

const BACKLOG = 300;
const B_EMAILS = 40;
/** SPEC §20: another project's transactional e-mail reaches its relay within 2 s (p99) of acceptance. */
const P99_BOUND_MS = 2000;

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(
    `a hung relay delays no other project (${dialect})`,
    { skip: dialect === 'postgres' && !PG_URL ? 'no TEST_DATABASE_URL' : false },
    () => {
      let t: TestDb;
      let relayB: TestSmtp;
      let worker: Worker | undefined;
      let router: DeliveryRouter | undefined;
      const hung = new Set<Socket>();
      let hungConnections = 0;
      let maxOpen = 0;
      const silent = createServer((s) => {
        hungConnections++;
        hung.add(s);
        maxOpen = Math.max(maxOpen, hung.size);
        s.on('close', () => hung.delete(s));
        s.on('error', () => {});
      });
      const arrived = new Map<string, number>();

      before(async () => {
        t = await openTestDb(dialect);
        await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
        relayB = await startSmtp({
          onData: (_n, raw) => {
            const to = /^To: .*?<?([^\s<>]+@[^\s<>]+)>?\s*$/im.exec(raw.toString())?.[1];
            if (to) arrived.set(to.toLowerCase(), Date.now());
            return undefined;
          },
        });
      });
      after(async () => {
        await worker?.stop();
        for (const s of hung) s.destroy();
        await router?.close();
        await new Promise<void>((r) => silent.close(() => r()));
        await relayB?.close();
        await t?.cleanup();
      });

      it('one claim takes every project’s oldest e-mails in turn: a backlog does not fill the batch', async () => {
        const x = await seedProject(t.db, { siteKey: 'backlog-x', fromEmail: 'noreply@x.example' });
        const y = await seedProject(t.db, { siteKey: 'few-y', fromEmail: 'noreply@y.example' });
        const now = Date.now();
        const ids = { x: [] as number[], y: [] as number[] };
        for (let i = 0; i < 40; i++) {
          const to = `x${i}@example.org`;
          const contactId = await addContact(t.db, x.projectId, to);
          ids.x.push(await addEmail(t.db, { ...x, contactId, to, dueAt: now - 3_600_000 + i }));
        }
        for (let i = 0; i < 3; i++) {
          const to = `y${i}@example.org`;
          const contactId = await addContact(t.db, y.projectId, to);
          ids.y.push(await addEmail(t.db, { ...y, contactId, to, dueAt: now - i }));
        }
        const claimed = await claimDue(t.db.db, t.db.dialect, { workerId: 'fair', now, leaseMs: 60_000, limit: 10 });
        const got = new Set(claimed.map((r) => r.id));
        assert.equal(claimed.length, 10);
        assert.ok(
          ids.y.every((id) => got.has(id)),
          'all three of y’s e-mails are in the batch, though x’s are older',
        );
        assert.deepEqual(
          ids.x.filter((id) => got.has(id)),
          ids.x.slice(0, 7),
          'x gets the rest of the batch, oldest first',
        );
        // A project whose relay is full is left out, the rest still claimed.
        const next = await claimDue(t.db.db, t.db.dialect, {
          workerId: 'fair',
          now,
          leaseMs: 60_000,
          limit: 10,
          skipProjects: [x.projectId],
        });
        assert.equal(next.length, 0, 'only x had due e-mails left');
        await t.db.db.deleteFrom('scheduled_emails').execute();
      });

      it('B reaches its relay within 2 s p99 while A hangs; A holds at most RELAY_CONCURRENCY connections', async () => {
        const deps = {
          db: t.db,
          config: loadConfig({ SEND_WAIT_MS: '0', RELAYS_ALLOW_PRIVATE: 'true' }),
          clock: { now: () => Date.now() },
          secret: SECRET,
        };
        const a = await seedProject(t.db, { siteKey: 'hung-school', fromEmail: 'noreply@hung.example' });
        const b = await seedProject(t.db, { siteKey: 'fine-school', fromEmail: 'noreply@fine.example' });
        const port = (silent.address() as { port: number }).port;
        // Pools as large as a project may ask: RELAY_CONCURRENCY is what bounds them.
        await putDelivery(deps, cliActor(), 'hung-school', {
          primary: { smtp_url: `smtp://127.0.0.1:${port}`, pool_size: 20 },
        });
        await putDelivery(deps, cliActor(), 'fine-school', { primary: { smtp_url: relayB.url } });

        // A's backlog, all due a minute ago: before any of B's e-mails in due order.
        const due = Date.now() - 60_000;
        for (let i = 0; i < BACKLOG; i++) {
          const to = `a${i}@example.org`;
          const contactId = await addContact(t.db, a.projectId, to);
          await addEmail(t.db, { ...a, contactId, to, dueAt: due });
        }
        const bContacts: { id: number; to: string }[] = [];
        for (let i = 0; i < B_EMAILS; i++) {
          const to = `b${i}@example.org`;
          bContacts.push({ id: await addContact(t.db, b.projectId, to), to });
        }

        // The defaults a `serve` process runs with: 30 s SMTP timeout, RELAY_CONCURRENCY 5, batches of 200.
        const config = loadConfig({});
        assert.equal(config.relayConcurrency, 5, 'RELAY_CONCURRENCY defaults to 5');
        router = new DeliveryRouter({
          installation: createCaptureTransport(),
          box: secretBox(SECRET),
          smtpTimeoutMs: config.smtpTimeoutMs,
          relayConcurrency: config.relayConcurrency,
        });
        worker = createWorker({
          db: t.db,
          transport: createCaptureTransport(),
          router,
          publicUrl: PUBLIC_URL,
          secret: SECRET,
          relayConcurrency: config.relayConcurrency,
        });
        worker.start();
        // Let A's backlog be claimed and its relay's slots fill with hung sends.
        const hungBy = Date.now() + 20_000;
        while (hungConnections < config.relayConcurrency && Date.now() < hungBy) await sleep(50);
        assert.equal(hungConnections, config.relayConcurrency, 'A hung the relay slots it may have');
        await sleep(500);

        // B's e-mails, accepted one at a time (written, then the worker woken, as the API does).
        const accepted = new Map<string, number>();
        for (const c of bContacts) {
          await addEmail(t.db, { ...b, contactId: c.id, to: c.to });
          accepted.set(c.to, Date.now());
          worker.wake();
          await sleep(100);
        }
        // Generous: well past the bound, well short of A's 30 s timeout.
        const by = Date.now() + 15_000;
        while (arrived.size < B_EMAILS && Date.now() < by) await sleep(50);
        const latencies = [...accepted].map(([to, at]) => (arrived.get(to) ?? Infinity) - at).sort((x, y) => x - y);
        const p99 = latencies[Math.ceil(0.99 * latencies.length) - 1];
        const p50 = latencies[Math.floor(latencies.length / 2)];
        console.log(`# ${dialect}: B acceptance → B's relay: p50 ${p50} ms, p99 ${p99} ms, max ${latencies.at(-1)} ms`);
        assert.equal(arrived.size, B_EMAILS, 'every one of B’s e-mails reached its relay');
        assert.ok(p99 <= P99_BOUND_MS, `p99 ${p99} ms is within ${P99_BOUND_MS} ms`);

        // A's relay never had more than RELAY_CONCURRENCY connections of this worker open at once.
        assert.ok(maxOpen <= config.relayConcurrency, `at most ${config.relayConcurrency} open (saw ${maxOpen})`);
        assert.ok(hungConnections <= config.relayConcurrency, `no more connections tried (${hungConnections})`);
        // Nothing of A's was lost or failed meanwhile: all pending or in the hung sends.
        const aRows = await t.db.db
          .selectFrom('scheduled_emails')
          .select(['status', 'attempts'])
          .where('project_id', '=', a.projectId)
          .execute();
        assert.equal(aRows.length, BACKLOG);
        assert.ok(aRows.every((r) => ['scheduled', 'queued', 'sending'].includes(r.status)));
        assert.equal(
          aRows.reduce((n, r) => n + r.attempts, 0),
          0,
          'waiting for a slot is no attempt',
        );
      });
    },
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
