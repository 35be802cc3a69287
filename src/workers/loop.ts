// The one loop every outbox worker runs on (e-mail delivery, site webhooks, tracking hits, erasures).
//
// Shaped after graphile-worker: work sits in a table; a worker claims a batch under a lease (one
// statement, FOR UPDATE SKIP LOCKED on PostgreSQL, so concurrent workers take disjoint rows without
// waiting; SQLite's single writer makes the statement atomic), works on it, and every later write is
// guarded by the lease. A worker that dies simply stops renewing: once its lease expires the claim
// statements take the rows again (crash recovery lives in the claim, not in any bookkeeping here).
//
// This file owns only the timing: when to claim, how many, how many run at once, waking at once when
// this process enqueued something (wake), otherwise polling, backing off after errors, renewing the
// leases of what it holds, handing back unstarted work and waiting for the rest on stop.

export interface WorkerLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const noopLogger: WorkerLogger = { info() {}, warn() {}, error() {} };

export interface LeaseLoopOptions<T> {
  /**
   * Claims up to `limit` items under this worker's lease. Must also take items whose lease expired:
   * that is how work of a crashed worker is recovered.
   */
  claim(limit: number): Promise<T[]>;
  /**
   * Works on what was claimed: `each` one item at a time (up to `concurrency` at once; `free` gives the
   * slot to the next item early, e.g. while an outcome waits for a batched write), or `all` the batch of
   * one claim as one task (one transaction for the lot).
   */
  work: { each(item: T, free: () => void): Promise<void> } | { all(items: T[]): Promise<void> };
  /** Most items held (claimed and not finished) at once. */
  batchSize: number;
  /** Tasks at once (items for `each`, claims for `all`); default 1. */
  concurrency?: number;
  /** Claim again once this much room is free (default: half the batch), so large claims stay large. */
  refillAt?: number;
  /** Longest idle sleep between claims when not woken. */
  pollMs: number;
  /** How long to sleep when a claim found less than asked (e.g. until the next due time); default pollMs. */
  idleMs?(): Promise<number>;
  /**
   * Milliseconds to hold back the next claim (0: claim now): a worker sharing its process with the API
   * yields while requests wait for the writer.
   */
  holdBack?(): number;
  /**
   * Held items that wait on something outside the worker (an e-mail waiting for its relay's slot): they
   * do not count against `batchSize`, so a slow destination never stops the claims for the others.
   */
  parked?(): number;
  /** Leases of held items are renewed every `leaseMs / 3` when given (long tasks outlive one lease). */
  leaseMs?: number;
  renew?(held: T[]): Promise<void>;
  /** Hands back claimed items no task started, at stop (otherwise they wait for their lease to expire). */
  release?(unstarted: T[]): Promise<void>;
  onError(err: unknown, what: 'claim' | 'task' | 'renew' | 'release'): void;
}

export interface LeaseLoop {
  start(): void;
  /** Stops claiming, hands back unstarted items, waits for tasks under way. False when it was not running. */
  stop(): Promise<boolean>;
  /** Something was enqueued in this process: claim now instead of at the next poll. */
  wake(): void;
  /** One claim of up to `batchSize`, worked through to the end, without the loop (CLI, tests). */
  runOnce(): Promise<number>;
  /** Items claimed and not finished. */
  readonly held: number;
}

/** Sleeps after consecutive failed claims: pollMs, doubled each time, at most this long. */
const MAX_ERROR_BACKOFF_MS = 5_000;

interface Task<T> {
  items: T[];
  run(free: () => void): Promise<void>;
}

export function leaseLoop<T>(o: LeaseLoopOptions<T>): LeaseLoop {
  const batchSize = Math.max(1, o.batchSize);
  const concurrency = Math.max(1, o.concurrency ?? 1);
  const refillAt = Math.min(batchSize, Math.max(1, o.refillAt ?? Math.ceil(batchSize / 2)));
  const held = new Set<T>();
  const queue: Task<T>[] = [];
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let done: Promise<void> | null = null;
  let heartbeat: NodeJS.Timeout | null = null;
  let active = 0;

  // A wake that arrives while the loop is busy is kept, so the next sleep returns at once.
  let wakeUp: (() => void) | null = null;
  let pending = false;
  const wake = () => {
    if (wakeUp) wakeUp();
    else pending = true;
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (pending || !running) {
        pending = false;
        return resolve();
      }
      const end = () => {
        clearTimeout(t);
        wakeUp = null;
        resolve();
      };
      const t = setTimeout(end, Math.max(0, ms));
      wakeUp = end;
    });

  const tasksOf = (items: T[]): Task<T>[] => {
    const w = o.work;
    return 'each' in w
      ? items.map((item) => ({ items: [item], run: (free) => w.each(item, free) }))
      : items.length
        ? [{ items, run: () => w.all(items) }]
        : [];
  };

  const runTask = (task: Task<T>): Promise<void> => {
    active++;
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      active--;
      pump();
    };
    const p = Promise.resolve()
      .then(() => task.run(free))
      .catch((err: unknown) => o.onError(err, 'task'))
      .finally(() => {
        free();
        inFlight.delete(p);
        for (const item of task.items) held.delete(item);
        pump();
        wake(); // room for the next claim
      });
    inFlight.add(p);
    return p;
  };

  function pump(): void {
    while (running && active < concurrency && queue.length) void runTask(queue.shift()!);
  }

  async function claim(limit: number): Promise<T[]> {
    const items = await o.claim(limit);
    for (const item of items) held.add(item);
    return items;
  }

  async function loop(): Promise<void> {
    let failures = 0;
    while (running) {
      try {
        const wait = o.holdBack?.() ?? 0;
        if (wait > 0) {
          await sleep(wait);
          continue;
        }
        const room = batchSize - held.size + (o.parked?.() ?? 0);
        let claimed = 0;
        if (room >= refillAt) {
          const items = await claim(room);
          failures = 0;
          claimed = items.length;
          queue.push(...tasksOf(items));
          pump();
          if (claimed === room) continue; // more may be waiting: claim again as soon as there is room
        }
        // Busy: the end of a task wakes the loop. Idle: sleep until something may be due.
        if (held.size > 0) await sleep(o.pollMs);
        else await sleep(o.idleMs ? await o.idleMs() : o.pollMs);
      } catch (err) {
        failures++;
        o.onError(err, 'claim');
        await sleep(Math.min(Math.max(o.pollMs, MAX_ERROR_BACKOFF_MS), o.pollMs * 2 ** (failures - 1)));
      }
    }
  }

  async function renew(): Promise<void> {
    if (!o.renew || held.size === 0) return;
    try {
      await o.renew([...held]);
    } catch (err) {
      o.onError(err, 'renew');
    }
  }

  return {
    get held() {
      return held.size;
    },
    start() {
      if (running) return;
      running = true;
      if (o.renew && o.leaseMs) {
        heartbeat = setInterval(() => void renew(), Math.max(50, Math.floor(o.leaseMs / 3)));
        heartbeat.unref();
      }
      done = loop();
    },
    async stop() {
      if (!running) {
        await done;
        return false;
      }
      running = false;
      wake();
      await done;
      const unstarted = queue.splice(0).flatMap((t) => t.items);
      for (const item of unstarted) held.delete(item);
      if (unstarted.length && o.release) await o.release(unstarted).catch((err: unknown) => o.onError(err, 'release'));
      await Promise.all([...inFlight]);
      if (heartbeat) clearInterval(heartbeat);
      heartbeat = null;
      return true;
    },
    wake,
    async runOnce() {
      const items = await claim(batchSize);
      const tasks = tasksOf(items);
      let next = 0;
      const lane = async () => {
        while (next < tasks.length) {
          const task = tasks[next++];
          try {
            await task.run(() => {});
          } catch (err) {
            o.onError(err, 'task');
          } finally {
            for (const item of task.items) held.delete(item);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, lane));
      return items.length;
    },
  };
}
