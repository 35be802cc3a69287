// The coalescing helper behind group commit, the batch accept, the worker's outcome writes and the
// configuration-version read: what joins a batch, what waits, and who hears which result.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batcher, fulfilled } from '../src/batcher.js';

// Two turns: the first lets a settled batch's continuation schedule the next one, the second runs it.
const tick = async () => {
  await new Promise<void>((r) => setImmediate(r));
  await new Promise<void>((r) => setImmediate(r));
};

/** A run whose batches the test sees and finishes by hand. */
function controlled<I>() {
  const batches: { items: I[]; finish(results?: PromiseSettledResult<string>[]): void; fail(e: unknown): void }[] = [];
  const run = (items: I[]) =>
    new Promise<PromiseSettledResult<string>[]>((resolve, reject) => {
      batches.push({
        items,
        finish: (results) => resolve(results ?? items.map((i) => fulfilled(`done ${String(i)}`))),
        fail: reject,
      });
    });
  return { batches, run };
}

describe('batcher', () => {
  it('calls made in one turn go in one batch; each hears its own result', async () => {
    const c = controlled<number>();
    const call = batcher({ run: c.run });
    const answers = [1, 2, 3].map((i) => call(i));
    assert.equal(c.batches.length, 0, 'nothing runs in the turn the calls are made');
    await tick();
    assert.deepEqual(
      c.batches.map((b) => b.items),
      [[1, 2, 3]],
    );
    c.batches[0].finish();
    assert.deepEqual(await Promise.all(answers), ['done 1', 'done 2', 'done 3']);
  });

  it('one batch at a time: calls made meanwhile form the next, which starts once the first settled', async () => {
    const c = controlled<string>();
    const call = batcher({ run: c.run });
    const first = call('a');
    await tick();
    const later = [call('b'), call('c')];
    await tick();
    assert.equal(c.batches.length, 1, 'the second batch waits for the first');
    c.batches[0].finish();
    await first;
    await tick();
    assert.deepEqual(
      c.batches.map((b) => b.items),
      [['a'], ['b', 'c']],
    );
    c.batches[1].finish();
    assert.deepEqual(await Promise.all(later), ['done b', 'done c']);
  });

  it('overlap: a new batch starts while an earlier one still runs', async () => {
    const c = controlled<string>();
    const call = batcher({ run: c.run, overlap: true });
    const a = call('a');
    await tick();
    const b = call('b');
    await tick();
    assert.equal(c.batches.length, 2);
    c.batches[1].finish();
    assert.equal(await b, 'done b', 'the later batch is not held up by the earlier one');
    c.batches[0].finish();
    assert.equal(await a, 'done a');
  });

  it('maxBatch bounds a batch; the rest keep their order', async () => {
    const c = controlled<number>();
    const call = batcher({ run: c.run, maxBatch: 2 });
    const all = [1, 2, 3, 4, 5].map((i) => call(i));
    for (let i = 0; i < 3; i++) {
      await tick();
      c.batches[i].finish();
    }
    await Promise.all(all);
    assert.deepEqual(
      c.batches.map((b) => b.items),
      [[1, 2], [3, 4], [5]],
    );
  });

  it('admit: refused items wait for a later batch, in their order; the first queued always joins', async () => {
    const c = controlled<string>();
    // At most one item per first letter in a batch; and a test that refuses everything.
    const call = batcher({
      run: c.run,
      admit: () => {
        const seen = new Set<string>();
        return (item) => {
          if (item.startsWith('x')) return false;
          if (seen.has(item[0])) return false;
          seen.add(item[0]);
          return true;
        };
      },
    });
    const all = ['a1', 'b1', 'a2', 'a3', 'b2', 'c1'].map((i) => call(i));
    for (let i = 0; i < 3; i++) {
      await tick();
      c.batches[i].finish();
    }
    await Promise.all(all);
    assert.deepEqual(
      c.batches.map((b) => b.items),
      [['a1', 'b1', 'c1'], ['a2', 'b2'], ['a3']],
    );

    const lonely = call('x1');
    const other = call('x2');
    await tick();
    assert.deepEqual(c.batches[3].items, ['x1'], 'a refused first item still runs, alone');
    c.batches[3].finish();
    await tick();
    c.batches[4].finish();
    assert.deepEqual(await Promise.all([lonely, other]), ['done x1', 'done x2']);
  });

  it('a rejected result fails its call alone; a thrown error fails the whole batch; the next batch runs', async () => {
    const c = controlled<number>();
    const call = batcher({ run: c.run });
    const one = [1, 2, 3].map((i) => call(i));
    await tick();
    const boom = new Error('item 2');
    c.batches[0].finish([fulfilled('ok 1'), { status: 'rejected', reason: boom }, fulfilled('ok 3')]);
    const settled = await Promise.allSettled(one);
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? s.value : s.reason)),
      ['ok 1', boom, 'ok 3'],
    );

    const two = [4, 5].map((i) => call(i));
    await tick();
    const down = new Error('database down');
    c.batches[1].fail(down);
    for (const s of await Promise.allSettled(two)) assert.deepEqual(s, { status: 'rejected', reason: down });

    const three = call(6);
    await tick();
    c.batches[2].finish();
    assert.equal(await three, 'done 6', 'a failed batch does not stop the batcher');
  });

  it('a run that answers too few results fails the calls it left out', async () => {
    const call = batcher<number, number>({ run: async (items) => [fulfilled(items[0])] });
    const [a, b] = await Promise.allSettled([call(1), call(2)]);
    assert.deepEqual(a, { status: 'fulfilled', value: 1 });
    assert.equal(b.status, 'rejected');
    assert.match(String(b.reason), /1 results for 2 items/);
  });
});
