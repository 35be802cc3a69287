// The thread pool (src/threads/pool.ts) hands its threads batches of tasks: a task stopped at its budget
// or a thread that dies fails only the task it was running (each task has the whole budget, whatever ran
// before it in the batch), the other tasks of its batch run again and resolve; an error a task throws is
// its own; and the keys still share the threads fairly.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BudgetExceeded, ThreadPool, type PoolOptions } from '../src/threads/pool.js';

const TASKS = new URL('./fixtures/pool-tasks.ts', import.meta.url).href;
type Echo = { input: unknown; thread: number };

async function withPool(opts: Omit<PoolOptions, 'tasks'>, body: (pool: ThreadPool) => Promise<void>) {
  const pool = new ThreadPool({ tasks: TASKS, ...opts });
  try {
    await pool.warm();
    await body(pool);
    assert.equal(pool.pending, 0);
  } finally {
    await pool.close();
  }
}

/** Runs quick tasks for `key` until the pool knows they are quick: its next tasks go in one batch. */
const teach = (pool: ThreadPool, key: string) =>
  Promise.all(Array.from({ length: 8 }, (_, i) => pool.run<Echo>(key, 'echo', i)));

describe('thread pool', () => {
  it('a task that never ends fails alone with BudgetExceeded; the tasks before and after it resolve', async () => {
    const stopped: string[] = [];
    await withPool(
      { size: 1, budgetMs: 200, onBudgetExceeded: (task, key) => stopped.push(`${task} ${key}`) },
      async (pool) => {
        const first = (await teach(pool, 'k'))[0].thread;
        // One tick: one batch on the one thread, the endless task in the middle.
        const before = [1, 2, 3].map((i) => pool.run<Echo>('k', 'echo', i));
        const spin = pool.run('k', 'spin', null);
        const failing = pool.run('k', 'fail', null);
        const after = [4, 5, 6].map((i) => pool.run<Echo>('k', 'echo', i));
        await assert.rejects(spin, (err) => {
          assert.ok(err instanceof BudgetExceeded, String(err));
          assert.equal(err.budgetMs, 200);
          assert.ok(err.usedMs >= 200, `used ${err.usedMs} ms`);
          return true;
        });
        await assert.rejects(failing, { name: 'RangeError', message: 'no such thing' });
        const done = await Promise.all([...before, ...after]);
        assert.deepEqual(
          done.map((r) => r.input),
          [1, 2, 3, 4, 5, 6],
        );
        // The tasks before it had run on the stopped thread, but their results went with it: they ran again.
        for (const r of done) assert.notEqual(r.thread, first);
        assert.deepEqual(stopped, ['spin k']);
        // The replacement thread serves the key as before.
        assert.equal((await pool.run<Echo>('k', 'echo', 7)).input, 7);
      },
    );
  });

  it('each task of a batch has the whole budget: the tasks before it do not count', async () => {
    await withPool({ size: 1, budgetMs: 200 }, async (pool) => {
      const first = (await teach(pool, 'k'))[0].thread;
      // 3 × 120 ms in one batch: 360 ms on the thread, 120 ms each.
      const done = await Promise.all([1, 2, 3].map(() => pool.run<Echo>('k', 'busy', 120)));
      for (const r of done) assert.equal(r.thread, first, 'no task was stopped (the thread is the same)');
    });
  });

  it('a thread that dies fails the task it was running; the rest of its batch resolves', async () => {
    await withPool({ size: 1, budgetMs: 1000 }, async (pool) => {
      await teach(pool, 'k');
      const before = [1, 2].map((i) => pool.run<Echo>('k', 'echo', i));
      const crash = pool.run('k', 'crash', null);
      const after = [3, 4].map((i) => pool.run<Echo>('k', 'echo', i));
      await assert.rejects(crash, { name: 'ThreadError' });
      assert.deepEqual(
        (await Promise.all([...before, ...after])).map((r) => r.input),
        [1, 2, 3, 4],
      );
    });
  });

  it('a thread that dies before it starts a batch blames no task: the batch runs on the next thread', async () => {
    await withPool({ size: 1, budgetMs: 1000 }, async (pool) => {
      await teach(pool, 'k');
      const armed = await pool.run<Echo>('k', 'dieOnNextBatch', null);
      const done = await Promise.all([1, 2, 3].map((i) => pool.run<Echo>('k', 'echo', i)));
      assert.deepEqual(
        done.map((r) => r.input),
        [1, 2, 3],
      );
      for (const r of done) assert.notEqual(r.thread, armed.thread, 'ran on the thread that replaced it');
    });
  });

  it('an input that cannot be sent to a thread fails alone', async () => {
    await withPool({ size: 1, budgetMs: 1000 }, async (pool) => {
      await teach(pool, 'k');
      const good = [1, 2].map((i) => pool.run<Echo>('k', 'echo', i));
      const bad = pool.run('k', 'echo', { f: () => 1 });
      await assert.rejects(bad, { name: 'DataCloneError' });
      assert.deepEqual(
        (await Promise.all(good)).map((r) => r.input),
        [1, 2],
      );
    });
  });

  it('keys take turns on one thread: a batch at a time, not a key at a time', async () => {
    await withPool({ size: 1, budgetMs: 1000 }, async (pool) => {
      const order: string[] = [];
      const heavy = Array.from({ length: 12 }, (_, i) => pool.run('a', 'busy', 10).then(() => order.push(`a${i}`)));
      const light = pool.run('b', 'echo', 0).then(() => order.push('b'));
      await Promise.all([...heavy, light]);
      assert.ok(order.indexOf('b') <= 6, order.join(' '));
    });
  });

  it('a key holds at most all threads but one: another key is served beside it at once', async () => {
    await withPool({ size: 2, budgetMs: 1000 }, async (pool) => {
      let heavyDone = 0;
      const heavy = Array.from({ length: 10 }, () => pool.run('a', 'busy', 40).then(() => heavyDone++));
      const light = await Promise.all([1, 2, 3].map((i) => pool.run<Echo>('b', 'echo', i)));
      assert.deepEqual(
        light.map((r) => r.input),
        [1, 2, 3],
      );
      assert.ok(heavyDone <= 4, `${heavyDone} of the other key's 10 tasks were done first`);
      await Promise.all(heavy);
    });
  });
});
