// The outbox repository on both dialects: what is claimable, leases, and the guard that keeps a worker
// which lost its lease from writing an outcome.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  claimDue,
  finishes,
  finishMany,
  nextDueAt,
  releaseClaims,
  renewLease,
  type Finish,
} from '../src/repos/outbox.js';
import {
  PG_URL,
  addContact,
  addEmail,
  emailRow,
  openTestDb,
  seedProject,
  type TestDb,
} from './fixtures/delivery-support.js';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(
    `outbox on ${dialect}`,
    { skip: dialect === 'postgres' && !PG_URL ? 'TEST_DATABASE_URL is not set' : false },
    () => {
      let t: TestDb;
      let base: { projectId: number; templateId: number; contactId: number; to: string };
      const now = 1_800_000_000_000;

      before(async () => {
        t = await openTestDb(dialect);
        const s = await seedProject(t.db);
        base = { ...s, contactId: await addContact(t.db, s.projectId, 'anna@example.org'), to: 'anna@example.org' };
      });
      after(async () => t?.cleanup());

      const reset = () => t.db.db.deleteFrom('scheduled_emails').execute();
      // One outcome written as the worker writes it (its batches go through finishMany too).
      const finish = async (workerId: string, f: Finish) => (await finishMany(t.db.db, workerId, [f])).has(f.id);

      it('claims due pending rows and expired leases, not future rows, live leases or finished ones', async () => {
        await reset();
        const dueScheduled = await addEmail(t.db, { ...base, status: 'scheduled', dueAt: now - 1000 });
        const dueQueued = await addEmail(t.db, { ...base, status: 'queued', dueAt: now });
        const future = await addEmail(t.db, { ...base, status: 'scheduled', dueAt: now + 1 });
        const crashed = await addEmail(t.db, { ...base, status: 'sending', dueAt: now - 5000 });
        await t.db.db
          .updateTable('scheduled_emails')
          .set({ locked_by: 'dead', locked_until: now - 1, attempts: 2 })
          .where('id', '=', crashed)
          .execute();
        const live = await addEmail(t.db, { ...base, status: 'sending', dueAt: now - 5000 });
        await t.db.db
          .updateTable('scheduled_emails')
          .set({ locked_by: 'alive', locked_until: now + 30_000 })
          .where('id', '=', live)
          .execute();
        for (const status of ['sent', 'failed', 'cancelled', 'suppressed'] as const)
          await addEmail(t.db, { ...base, status, dueAt: now - 1000 });

        const rows = await claimDue(t.db.db, t.db.dialect, { workerId: 'w1', now, leaseMs: 60_000, limit: 50 });
        assert.deepEqual(
          rows.map((r) => r.id).sort((a, b) => a - b),
          [dueScheduled, dueQueued, crashed].sort((a, b) => a - b),
        );
        for (const r of rows) {
          assert.equal(r.status, 'sending');
          assert.equal(r.locked_by, 'w1');
          assert.equal(Number(r.locked_until), now + 60_000);
        }
        const reclaimed = rows.find((r) => r.id === crashed)!;
        assert.equal(reclaimed.attempts, 3, 'the interrupted attempt is counted');
        assert.match(reclaimed.last_error ?? '', /lease expired/);
        assert.equal(rows.find((r) => r.id === dueScheduled)!.attempts, 0);
        assert.equal((await emailRow(t.db, future)).status, 'scheduled');
        assert.equal((await emailRow(t.db, live)).locked_by, 'alive');

        const again = await claimDue(t.db.db, t.db.dialect, { workerId: 'w2', now, leaseMs: 60_000, limit: 50 });
        assert.deepEqual(again, [], 'claimed rows are not claimable by another worker');
      });

      it('respects the limit and takes the oldest due first', async () => {
        await reset();
        const ids = [];
        for (let i = 0; i < 5; i++)
          ids.push(await addEmail(t.db, { ...base, status: 'scheduled', dueAt: now - 100 + i }));
        const first = await claimDue(t.db.db, t.db.dialect, { workerId: 'w1', now, leaseMs: 1000, limit: 2 });
        assert.deepEqual(
          first.map((r) => r.id).sort((a, b) => a - b),
          ids.slice(0, 2),
        );
        const rest = await claimDue(t.db.db, t.db.dialect, { workerId: 'w1', now, leaseMs: 1000, limit: 10 });
        assert.equal(rest.length, 3);
      });

      it('writes outcomes only for the lease holder', async () => {
        await reset();
        const id = await addEmail(t.db, { ...base, dueAt: now });
        await claimDue(t.db.db, t.db.dialect, { workerId: 'w1', now, leaseMs: 1000, limit: 1 });
        // The lease expires and w2 takes over; w1 comes back late.
        const [taken] = await claimDue(t.db.db, t.db.dialect, {
          workerId: 'w2',
          now: now + 1001,
          leaseMs: 1000,
          limit: 1,
        });
        assert.equal(taken.id, id);
        assert.equal(
          await finish('w1', finishes.sent(id, { now: now + 1002, messageId: '<late@x>', rendered: '{}' })),
          false,
        );
        assert.equal(await finish('w1', finishes.failed(id, { now: now + 1002, error: 'late' })), false);
        assert.equal(await finish('w1', finishes.suppressed(id, { now: now + 1002, reason: 'late' })), false);
        assert.equal(await renewLease(t.db.db, 'w1', [id], now + 1002, 1000), 0);
        assert.equal((await emailRow(t.db, id)).locked_by, 'w2');

        assert.equal(await renewLease(t.db.db, 'w2', [id], now + 1500, 1000), 1);
        assert.equal(Number((await emailRow(t.db, id)).locked_until), now + 2500);
        assert.equal(
          await finish('w2', finishes.sent(id, { now: now + 1600, messageId: '<m@x>', rendered: '{"subject":"s"}' })),
          true,
        );
        const row = await emailRow(t.db, id);
        assert.deepEqual(
          [row.status, row.attempts, Number(row.sent_at), row.message_id, row.locked_until, row.last_error],
          ['sent', 2, now + 1600, '<m@x>', null, null],
        );
        assert.equal(
          await finish('w2', finishes.sent(id, { now: now + 1700 })),
          false,
          'a finished e-mail is not written twice',
        );
      });

      it('schedules a retry with the lock cleared, and hands back unstarted claims', async () => {
        await reset();
        const id = await addEmail(t.db, { ...base, dueAt: now });
        await claimDue(t.db.db, t.db.dialect, { workerId: 'w1', now, leaseMs: 1000, limit: 1 });
        assert.equal(
          await finish('w1', finishes.retry(id, { now, dueAt: now + 30_000, error: '451 try later' })),
          true,
        );
        let row = await emailRow(t.db, id);
        assert.deepEqual(
          [row.status, row.attempts, Number(row.due_at), row.locked_by, row.locked_until, row.last_error],
          ['scheduled', 1, now + 30_000, null, null, '451 try later'],
        );
        assert.equal(await nextDueAt(t.db.db), now + 30_000);
        assert.deepEqual(
          await claimDue(t.db.db, t.db.dialect, { workerId: 'w1', now: now + 29_999, leaseMs: 1000, limit: 1 }),
          [],
        );

        await claimDue(t.db.db, t.db.dialect, { workerId: 'w1', now: now + 30_000, leaseMs: 1000, limit: 1 });
        assert.equal(await releaseClaims(t.db.db, 'w1', [id], now + 30_001), 1);
        row = await emailRow(t.db, id);
        assert.deepEqual([row.status, row.locked_by, row.attempts], ['scheduled', null, 1]);
      });

      it('reports when the worker next has work', async () => {
        await reset();
        assert.equal(await nextDueAt(t.db.db), null);
        await addEmail(t.db, { ...base, status: 'scheduled', dueAt: now + 5000 });
        const s = await addEmail(t.db, { ...base, status: 'sending', dueAt: now });
        await t.db.db
          .updateTable('scheduled_emails')
          .set({ locked_by: 'x', locked_until: now + 2000 })
          .where('id', '=', s)
          .execute();
        assert.equal(await nextDueAt(t.db.db), now + 2000);
      });
    },
  );
}
