// Coalescing: calls that arrive while a batch is under way wait, and go together in the next batch.
//
// Group commit, the PostgreSQL batch accept, the worker's outcome writes and the configuration-version
// read all trade one round trip (or one fsync) per call for one per batch. In the spirit of
// graphile-worker's batch(), written here because no maintained package offers its two needs together:
// an answer (or an error) per call, and a say over which queued calls may share a batch.
//
// A batch starts on the turn of the event loop after its first call arrived (setImmediate), so calls
// that are ready in the same turn join it. By default batches run one at a time: calls arriving
// meanwhile gather for the next one, which starts as soon as the previous has settled every call.

interface BatcherOptions<I, O> {
  /** Most items per batch (default: no limit); the others wait for a later batch. */
  maxBatch?: number;
  /**
   * Wait this long after the first call before starting a batch (default: the next turn of the event
   * loop), so that a steady stream of small calls becomes a few large batches a second.
   */
  lingerMs?: number;
  /** Start a batch while earlier ones still run (default: one at a time). */
  overlap?: boolean;
  /**
   * Called once per batch: returns the test, asked in queue order, of whether an item may join this
   * batch; refused items keep their place for a later one. The first queued item always joins.
   */
  admit?: () => (item: I) => boolean;
  /**
   * Carries out one batch: one result per item, in order (a rejected one fails that call alone).
   * Throwing fails every call of the batch with that error.
   */
  run(items: I[]): Promise<PromiseSettledResult<O>[]>;
}

/** A result for `run` to give back. */
export const fulfilled = <O>(value: O): PromiseFulfilledResult<O> => ({ status: 'fulfilled', value });

interface Entry<I, O> {
  item: I;
  resolve(v: O): void;
  reject(e: unknown): void;
}

/** Returns the function to call per item; its promise settles when the item's batch has. */
export function batcher<I, O>(opts: BatcherOptions<I, O>): (item: I) => Promise<O> {
  const max = Math.max(1, opts.maxBatch ?? Infinity);
  let queue: Entry<I, O>[] = [];
  let running = 0;
  let scheduled = false;

  function schedule(): void {
    if (scheduled || queue.length === 0 || (running > 0 && !opts.overlap)) return;
    scheduled = true;
    const go = () => {
      scheduled = false;
      void runBatch(take());
    };
    if (opts.lingerMs) setTimeout(go, opts.lingerMs);
    else setImmediate(go);
  }

  function take(): Entry<I, O>[] {
    if (!opts.admit) return queue.splice(0, max);
    const admits = opts.admit();
    const batch: Entry<I, O>[] = [];
    const rest: Entry<I, O>[] = [];
    for (const e of queue) {
      if (batch.length < max && (admits(e.item) || batch.length === 0)) batch.push(e);
      else rest.push(e);
    }
    queue = rest;
    return batch;
  }

  async function runBatch(batch: Entry<I, O>[]): Promise<void> {
    running++;
    try {
      let results: PromiseSettledResult<O>[];
      try {
        results = await opts.run(batch.map((e) => e.item));
      } catch (err) {
        for (const e of batch) e.reject(err);
        return;
      }
      batch.forEach((e, i) => {
        const r = results[i];
        if (!r) e.reject(new Error(`the batch gave ${results.length} results for ${batch.length} items`));
        else if (r.status === 'fulfilled') e.resolve(r.value);
        else e.reject(r.reason);
      });
    } finally {
      running--;
      schedule();
    }
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      schedule();
    });
}
