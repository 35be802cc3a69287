// The one worker loop (src/workers/loop.ts), tested once on the real outbox and its real claim
// (repos/outbox.ts): wake-up on an in-process nudge, lease renewal and expiry, crash recovery (a worker
// that stops working while holding leases loses them to another), a clean stop, backoff after failed
// claims, and two loops sharing one outbox without working on anything twice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claimDue, finishes, finishMany, releaseClaims, renewLease } from '../src/repos/outbox.js';
import type { EmailRow } from '../src/db/schema.js';
import type { Db } from '../src/db/index.js';
import { leaseLoop, type LeaseLoopOptions } from '../src/workers/loop.js';
import {
  PG_URL,
  addContact,
  addEmail,
  openTestDb,
  seedProject,
  until,
  type TestDb,
} from './fixtures/delivery-support.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function outbox(kind: 'sqlite' | 'postgres') {
  const t = await openTestDb(kind);
  const s = await seedProject(t.db);
  const contactId = await addContact(t.db, s.projectId, 'anna@example.org');
  const add = async (n: number) => {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) ids.push(await addEmail(t.db, { ...s, contactId, to: 'anna@example.org' }));
    return ids;
  };
  return { t, add };
}

/** A loop over the e-mail outbox whose work is `handle`; `sent` records what each worker finished. */
function emailLoop(
  t: { db: Db },
  workerId: string,
  handle: (row: EmailRow) => Promise<void>,
  over: Partial<LeaseLoopOptions<EmailRow>> = {},
) {
  const leaseMs = over.leaseMs ?? 60_000;
  const finished: number[] = [];
  const errors: unknown[] = [];
  /** When (the `now` of the claim statement) each e-mail was claimed by this worker. */
  const claimedAt = new Map<number, number>();
  const loop = leaseLoop<EmailRow>({
    claim: async (limit) => {
      const now = Date.now();
      const rows = await claimDue(t.db.db, t.db.dialect, { workerId, now, leaseMs, limit });
      for (const r of rows) claimedAt.set(r.id, now);
      return rows;
    },
    work: {
      each: async (row) => {
        await handle(row);
        const written = await finishMany(t.db.db, workerId, [finishes.sent(row.id, { now: Date.now() })]);
        if (written.has(row.id)) finished.push(row.id);
      },
    },
    batchSize: 10,
    concurrency: 4,
    pollMs: 50,
    onError: (err) => errors.push(err),
    ...over,
  });
  return { loop, finished, errors, claimedAt };
}

const rowsOf = (t: TestDb) =>
  t.db.db.selectFrom('scheduled_emails').select(['id', 'status', 'locked_by', 'attempts']).orderBy('id').execute();

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`worker loop [${kind}]`, { skip: kind === 'postgres' && !PG_URL && 'TEST_DATABASE_URL is not set' }, () => {
    it('sleeps through a long poll and claims at once when woken', async () => {
      const { t, add } = await outbox(kind);
      const w = emailLoop(t, 'w1', async () => {}, { pollMs: 60_000, idleMs: async () => 60_000 });
      w.loop.start();
      try {
        await sleep(150); // the first claim found nothing: the loop sleeps for a minute
        const [id] = await add(1);
        await sleep(300);
        assert.deepEqual(w.finished, [], 'nothing is claimed before the next poll without a wake');
        const woken = Date.now();
        w.loop.wake();
        await until(async () => w.finished.length === 1, 5_000, 'the woken loop to finish the e-mail');
        assert.ok(Date.now() - woken < 2_000, `woken after ${Date.now() - woken} ms`);
        assert.deepEqual(w.finished, [id]);
      } finally {
        await w.loop.stop();
        await t.cleanup();
      }
    });

    it('a worker that stops working while holding leases loses them once they expire, and only then', async () => {
      const { t, add } = await outbox(kind);
      const leaseMs = 600;
      // The dead worker: its tasks never end (a hung process), it renews nothing and claims no more.
      let revive!: () => void;
      const hung = new Promise<void>((r) => (revive = r));
      const dead = emailLoop(t, 'dead', () => hung, { leaseMs, batchSize: 3 });
      const survivor = emailLoop(t, 'survivor', async () => {}, { leaseMs });
      const ids = await add(3);
      dead.loop.start();
      try {
        await until(async () => dead.loop.held === 3, 5_000, 'the dead worker to hold all three');
        survivor.loop.start();
        await until(async () => survivor.finished.length === 3, 10_000, 'the survivor to take over all three');
        assert.deepEqual(
          [...survivor.finished].sort((a, b) => a - b),
          ids,
        );
        for (const id of ids) {
          // Taken over only once the dead worker's lease had expired, though the survivor polled all along.
          const after = survivor.claimedAt.get(id)! - dead.claimedAt.get(id)!;
          assert.ok(after > leaseMs, `e-mail ${id} taken over ${after} ms after it was claimed`);
        }
        const rows = await rowsOf(t);
        // Two attempts each: the interrupted one counts (an e-mail that kills every worker still reaches
        // the limit), and the survivor's.
        assert.deepEqual(
          rows.map((r) => [r.status, r.locked_by, r.attempts]),
          ids.map(() => ['sent', 'survivor', 2]),
        );
        // The dead worker comes back: its late writes are fenced off by the lease it lost.
        revive();
        await dead.loop.stop();
        assert.deepEqual(dead.finished, [], 'a lost lease writes nothing');
        assert.deepEqual(
          (await rowsOf(t)).map((r) => r.locked_by),
          ['survivor', 'survivor', 'survivor'],
        );
      } finally {
        revive();
        await dead.loop.stop();
        await survivor.loop.stop();
        await t.cleanup();
      }
    });

    it('a live worker renews its leases: a long task is not taken by another worker', async () => {
      const { t, add } = await outbox(kind);
      const leaseMs = 1000; // renewed every third of it: slack for a loaded machine
      const [id] = await add(1);
      let slowRuns = 0;
      const slow = emailLoop(
        t,
        'slow',
        async () => {
          slowRuns++;
          await sleep(leaseMs * 2.5);
        },
        {
          leaseMs,
          renew: (rows) =>
            renewLease(
              t.db.db,
              'slow',
              rows.map((r) => r.id),
              Date.now(),
              leaseMs,
            ).then(() => {}),
        },
      );
      const other = emailLoop(t, 'other', async () => {}, { leaseMs });
      slow.loop.start();
      try {
        await until(async () => slow.loop.held === 1, 5_000, 'the slow worker to claim');
        other.loop.start();
        await until(async () => slow.finished.length === 1, 10_000, 'the slow worker to finish');
        assert.equal(slowRuns, 1);
        assert.deepEqual(other.finished, [], 'the renewed lease kept the e-mail with its worker');
        assert.deepEqual(await rowsOf(t), [{ id, status: 'sent', locked_by: 'slow', attempts: 1 }]);
      } finally {
        await slow.loop.stop();
        await other.loop.stop();
        await t.cleanup();
      }
    });

    it('stop hands back claimed e-mails no task started and waits for those under way', async () => {
      const { t, add } = await outbox(kind);
      const ids = await add(6);
      let started = 0;
      const w = emailLoop(
        t,
        'stopper',
        async () => {
          started++;
          await sleep(300);
        },
        {
          concurrency: 1,
          release: (rows) =>
            releaseClaims(
              t.db.db,
              'stopper',
              rows.map((r) => r.id),
              Date.now(),
            ).then(() => {}),
        },
      );
      w.loop.start();
      await until(async () => started === 1, 5_000, 'the first task to start');
      await w.loop.stop();
      assert.equal(started, 1);
      assert.equal(w.finished.length, 1, 'the task under way was finished before stop returned');
      assert.equal(w.loop.held, 0);
      const rows = await rowsOf(t);
      assert.deepEqual(
        rows.filter((r) => r.id !== w.finished[0]).map((r) => [r.status, r.locked_by, r.attempts]),
        ids.slice(1).map(() => ['scheduled', null, 0]),
      );
      await t.cleanup();
    });

    it('backs off after failed claims and goes on once the database answers', async () => {
      const { t, add } = await outbox(kind);
      await add(2);
      let calls = 0;
      const at: number[] = [];
      const w = emailLoop(t, 'flaky', async () => {}, { pollMs: 40 });
      const real = leaseLoop<EmailRow>({
        claim: async (limit) => {
          at.push(Date.now());
          if (++calls <= 3) throw new Error('database went away');
          return claimDue(t.db.db, t.db.dialect, { workerId: 'flaky', now: Date.now(), leaseMs: 60_000, limit });
        },
        work: { each: async (row) => void w.finished.push(row.id) },
        batchSize: 10,
        pollMs: 40,
        onError: (err) => w.errors.push(err),
      });
      real.start();
      try {
        await until(async () => w.finished.length === 2, 5_000, 'the loop to recover');
        assert.equal(w.errors.length, 3);
        const gaps = at.slice(1, 4).map((x, i) => x - at[i]);
        // At least 40, 80, 160 ms: each failure waits twice as long as the one before (a loaded machine
        // only makes timers later).
        assert.ok(gaps[0] >= 38 && gaps[1] >= 78 && gaps[2] >= 158, `gaps ${gaps.join(', ')}`);
      } finally {
        await real.stop();
        await t.cleanup();
      }
    });

    it('two loops sharing one outbox work on every e-mail exactly once', async () => {
      const { t, add } = await outbox(kind);
      const ids = await add(150);
      const seen = new Map<number, string[]>();
      const handler = (who: string) => async (row: EmailRow) => {
        seen.set(row.id, [...(seen.get(row.id) ?? []), who]);
        await sleep(Math.random() * 5);
      };
      // The second loop has its own connection (pool), as a second process would.
      const second = await t.reopen();
      const a = emailLoop(t, 'a', handler('a'), { batchSize: 20, concurrency: 5 });
      const b = emailLoop({ db: second }, 'b', handler('b'), { batchSize: 20, concurrency: 5 });
      a.loop.start();
      b.loop.start();
      try {
        await until(async () => a.finished.length + b.finished.length === ids.length, 30_000, 'all 150 finished');
        assert.deepEqual(
          [...seen.entries()].filter(([, who]) => who.length !== 1),
          [],
          'no e-mail was worked on twice',
        );
        assert.deepEqual(
          [...a.finished, ...b.finished].sort((x, y) => x - y),
          ids,
        );
        assert.deepEqual(a.errors.concat(b.errors), []);
        if (kind === 'postgres') assert.ok(a.finished.length > 0 && b.finished.length > 0, 'both loops took work');
      } finally {
        await a.loop.stop();
        await b.loop.stop();
        await second.close();
        await t.cleanup();
      }
    });
  });
}
