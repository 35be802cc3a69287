// A pool of worker threads for CPU work that must not block the event loop (SPEC §20: templates run in a
// budget). Three rules:
// - Each task gets `budgetMs` of its thread's CPU (cpu.ts; wall time where /proc is absent). Beyond it
//   the thread is terminated — the only way to stop synchronous JavaScript — and replaced, and the task
//   fails with BudgetExceeded. A wall-clock ceiling catches a thread that hangs without using CPU.
// - Fair per key (a project): each key has its own queue, served round-robin, and one key holds at most
//   `perKeyLimit` threads at once (all but one, when there are several), so one project's heavy work
//   leaves a thread free for everyone else's. A thread being replaced after a stopped task counts as
//   held by the key that stopped it, until the replacement is ready.
// - Threads start on first use and do not keep the process alive while idle.
// A thread is handed its tasks in batches, one message each way per batch (a message per task cost more
// CPU than a planned render). A batch holds one key's tasks, so a thread is held by one key as before;
// the keys still take turns, a batch at a time, and a key whose tasks are slow gets short batches, so
// a thread's turn lasts about as long as a task's could. The thread marks in shared memory which task
// it is running and from what CPU time (mark.ts): the budget is still each task's own. When a thread is
// stopped or dies, the task it was running fails; the other tasks of its batch, whose results never
// came, go back to the front of their queue (tasks are pure: running one again is safe).
// The tasks live in a module of their own (host.ts explains its shape); the pool knows only their names.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { threadCpuMs } from './cpu.js';
import type { FromThread, ToThread } from './host.js';
import { IDLE, newMarkBuffer, readMark, RUN, wallNow, writeMark } from './mark.js';
import { BudgetExceeded, TaskError } from './errors.js';
import { startThread } from './start.js';

export { BudgetExceeded } from './errors.js';
export { siblingModule } from './start.js';

/** Most tasks in one batch. */
const MAX_BATCH = 32;
/**
 * A batch is cut to about this much of its key's recent wall time per task (its turn on the thread):
 * short beside a budget, yet long enough that cheap renders on a loaded machine (1–3 ms of wall time
 * each) still go 32 at a time.
 */
const BATCH_MS = 100;
/** A key's first batch, before its tasks' time is known. */
const FIRST_BATCH = 4;
/** A task sent back to its queue more often than this by threads dying under it fails instead. */
const MAX_REQUEUES = 2;

export interface PoolOptions {
  /** URL of the module of tasks (see siblingModule). */
  tasks: string;
  /** Threads; default: the cores this process may use. */
  size?: number;
  budgetMs: number;
  /** Threads one key may hold at once; default size − 1 (at least 1). */
  perKeyLimit?: number;
  /** Wall-clock ceiling of one task after its start; default 30 × budgetMs, at least 10 s. */
  ceilingMs?: number;
  /** Told each time a task is stopped for its budget (a metric, a log line). */
  onBudgetExceeded?: (task: string, key: string) => void;
}

interface Job {
  id: number;
  key: string;
  task: string;
  input: unknown;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  /** Times a dying thread sent it back to its queue. */
  requeued: number;
}

interface Slot {
  worker: Worker;
  /** Which task of the batch the thread runs, from what CPU time (mark.ts). */
  mark: SharedArrayBuffer;
  /** This thread's /proc stat file, once it said so; null: count wall time. */
  stat: string | null;
  ready: boolean;
  /** The batch the thread is running (all of one key), in its order. */
  batch: Job[] | null;
  /** Wall clock (mark.ts) when the batch was sent. */
  sentAt: number;
  timer: NodeJS.Timeout | null;
  /** A replacement thread starting for a task of this key that was stopped: the key is charged for it. */
  chargedTo: string | null;
}

export class ThreadPool {
  readonly size: number;
  readonly budgetMs: number;
  private readonly perKeyLimit: number;
  private readonly ceilingMs: number;
  private readonly slots: Slot[] = [];
  /** Waiting jobs per key; `order` is the round-robin of keys that have any. */
  private readonly queues = new Map<string, Job[]>();
  private order: string[] = [];
  private readonly running = new Map<string, number>();
  /** Each key's recent wall time per task on a thread, which sizes its batches. */
  private readonly taskMs = new Map<string, number>();
  private nextId = 1;
  private closed = false;
  private dispatchScheduled = false;
  /** Threads that died before they were ready, in a row: a broken task module, not a heavy task. */
  private startFailures = 0;
  /** Callers of warm() waiting for every thread to be ready. */
  private warmed: (() => void)[] = [];

  constructor(private readonly opts: PoolOptions) {
    this.size = Math.max(1, opts.size ?? availableParallelism());
    this.budgetMs = opts.budgetMs;
    this.perKeyLimit = Math.max(1, opts.perKeyLimit ?? this.size - 1);
    this.ceilingMs = opts.ceilingMs ?? Math.max(10_000, 30 * opts.budgetMs);
  }

  /** Runs `task` with `input` for `key`; rejects with BudgetExceeded or the task's own TaskError. */
  run<T>(key: string, task: string, input: unknown): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the thread pool is closed'));
    return new Promise<T>((resolve, reject) => {
      const job: Job = {
        id: this.nextId++,
        key,
        task,
        input,
        resolve: resolve as (v: unknown) => void,
        reject,
        requeued: 0,
      };
      this.enqueue(job, 'back');
      while (this.slots.length < this.size) this.slots.push(this.spawn());
      this.dispatchSoon();
    });
  }

  /**
   * Dispatches once the tasks asked for in this turn of the event loop are in line (a claimed batch's
   * e-mails; the callers whose tasks just finished and who ask for the next), so they go out together.
   */
  private dispatchSoon(): void {
    if (this.dispatchScheduled) return;
    this.dispatchScheduled = true;
    setImmediate(() => {
      this.dispatchScheduled = false;
      this.dispatch();
    });
  }

  /** Starts the threads (a process does at start, so its first renders do not wait for them). */
  warm(): Promise<void> {
    if (this.closed) return Promise.resolve();
    while (this.slots.length < this.size) this.slots.push(this.spawn());
    if (this.slots.every((s) => s.ready)) return Promise.resolve();
    return new Promise((resolve) => {
      this.warmed.push(resolve);
      this.holdWhileWaited();
    });
  }

  /** Waiting and running tasks (for tests and a gauge). */
  get pending(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    for (const s of this.slots) n += s.batch?.length ?? 0;
    return n;
  }

  async close(): Promise<void> {
    this.closed = true;
    const err = new Error('the thread pool is closed');
    for (const q of this.queues.values()) for (const j of q) j.reject(err);
    this.queues.clear();
    this.order = [];
    const slots = this.slots.splice(0);
    for (const s of slots) {
      if (s.timer) clearTimeout(s.timer);
      for (const j of s.batch ?? []) j.reject(err);
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    const mark = newMarkBuffer();
    const worker = startThread(this.opts.tasks, mark);
    const slot: Slot = { worker, mark, stat: null, ready: false, batch: null, sentAt: 0, timer: null, chargedTo: null };
    worker.on('message', (m: FromThread) => this.onMessage(slot, m));
    // A thread that dies on its own (out of memory, a crash in a module) fails its task, never the process.
    worker.on('error', (err) => this.lose(slot, new TaskError('ThreadError', err.message)));
    worker.on('exit', () => this.lose(slot, new TaskError('ThreadError', 'the render thread exited')));
    // After the listeners: adding a 'message' listener refs the thread's port again (Node's worker), and a
    // thread that never ran a task would then keep the process alive (the benches did not exit).
    worker.unref();
    return slot;
  }

  private onMessage(slot: Slot, m: FromThread): void {
    if (m.type === 'ready') {
      slot.ready = true;
      this.startFailures = 0;
      if (slot.chargedTo !== null) this.release(slot.chargedTo);
      slot.chargedTo = null;
      if (this.slots.length === this.size && this.slots.every((s) => s.ready))
        for (const resolve of this.warmed.splice(0)) resolve();
      slot.stat = m.stat;
      this.dispatch();
      return;
    }
    const batch = slot.batch;
    if (!batch) return;
    this.learn(batch[0].key, m.runMs / batch.length);
    this.finish(slot);
    batch.forEach((job, i) => {
      const r = m.results[i];
      // Not expected (a thread answers each task it is sent, in order), but a task left unanswered would hang.
      if (r?.id !== job.id) job.reject(new TaskError('ThreadError', 'the thread did not answer the task'));
      else if (r.ok) job.resolve(r.value);
      else job.reject(new TaskError(r.name, r.message));
    });
    this.dispatchSoon();
  }

  private learn(key: string, ms: number): void {
    const known = this.taskMs.get(key);
    this.taskMs.set(key, known === undefined ? ms : (known + ms) / 2);
  }

  /** Checks the running task's CPU when its budget could be spent, and again later while it is not. */
  private watch(slot: Slot, inMs: number): void {
    slot.timer = setTimeout(() => this.check(slot), inMs);
  }

  private check(slot: Slot): void {
    slot.timer = null;
    const batch = slot.batch;
    if (!batch) return;
    const mark = readMark(slot.mark);
    if (!mark) return this.watch(slot, 10);
    const started = mark.phase !== IDLE;
    const job = (started && batch[mark.index - 1]) || batch[0];
    // Until a task's own work starts (the batch not begun, a module loading) only the ceiling applies.
    const wall = wallNow() - (started ? mark.wallMs : slot.sentAt);
    const cpu = mark.phase === RUN && !Number.isNaN(mark.cpuMs) ? threadCpuMs(slot.stat) : null;
    const used = cpu === null ? wall : cpu - mark.cpuMs;
    const spent = mark.phase === RUN ? used : 0;
    if (spent < this.budgetMs && wall < this.ceilingMs)
      return this.watch(slot, Math.max(10, Math.min(this.budgetMs - spent, this.ceilingMs - wall)));
    this.opts.onBudgetExceeded?.(job.task, job.key);
    // Its next tasks go one at a time until they prove quicker.
    this.taskMs.set(job.key, this.budgetMs);
    this.lose(slot, new BudgetExceeded(this.budgetMs, Math.round(used)), job);
  }

  private finish(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const batch = slot.batch;
    if (!batch) return;
    slot.batch = null;
    this.release(batch[0].key);
    slot.worker.unref();
  }

  private release(key: string): void {
    const n = (this.running.get(key) ?? 1) - 1;
    if (n > 0) this.running.set(key, n);
    else this.running.delete(key);
  }

  /**
   * The slot's thread is stopped (or gone): the task it was running (`culprit`, else the one its mark
   * names) fails with `err`, the rest of its batch goes back in line, a new thread takes its place.
   */
  private lose(slot: Slot, err: Error, culprit?: Job): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    const batch = slot.batch ?? [];
    if (!culprit && batch.length) {
      const mark = readMark(slot.mark);
      culprit = mark && mark.phase !== IDLE ? batch[mark.index - 1] : undefined;
    }
    this.finish(slot);
    culprit?.reject(err);
    // A stopped task is known for certain; a thread that died may have died of any task it was sent, so
    // those are sent back a bounded number of times (an input that crashes its thread cannot loop).
    this.requeue(
      batch.filter((j) => j !== culprit),
      err instanceof BudgetExceeded ? null : err,
    );
    if (slot.chargedTo !== null) this.release(slot.chargedTo);
    slot.worker.removeAllListeners('exit');
    slot.worker.on('error', () => {});
    void slot.worker.terminate();
    if (this.closed) return;
    if (!slot.ready && ++this.startFailures >= 3) {
      // Starting again would fail again: the waiting tasks fail now; the next run() tries afresh.
      this.slots.splice(at, 1);
      this.startFailures = 0;
      for (const q of this.queues.values()) for (const j of q) j.reject(err);
      this.queues.clear();
      this.order = [];
      this.holdWhileWaited();
      return;
    }
    const next = this.spawn();
    // The key whose task was stopped holds the thread it broke until the new one is ready: its next
    // heavy task waits for that, instead of taking the thread the other projects are using meanwhile.
    if (culprit && err instanceof BudgetExceeded) {
      next.chargedTo = culprit.key;
      this.running.set(culprit.key, (this.running.get(culprit.key) ?? 0) + 1);
    }
    this.slots[at] = next;
    this.dispatch();
  }

  /** Puts `jobs` back at the front of their queues, in their order; with `counted`, at most MAX_REQUEUES times. */
  private requeue(jobs: Job[], counted: Error | null): void {
    for (let i = jobs.length - 1; i >= 0; i--) {
      const job = jobs[i];
      if (counted && ++job.requeued > MAX_REQUEUES) {
        job.reject(counted);
        continue;
      }
      this.enqueue(job, 'front');
    }
  }

  /** Puts a job in its key's queue; a key that had none joins the end of the round. */
  private enqueue(job: Job, end: 'front' | 'back'): void {
    const q = this.queues.get(job.key);
    if (!q) {
      this.queues.set(job.key, [job]);
      this.order.push(job.key);
    } else if (end === 'front') q.unshift(job);
    else q.push(job);
  }

  /**
   * An idle thread never keeps the process alive; one still starting does while tasks (or warm()) wait
   * for it: with every thread unref'd, a process awaiting its first render would end with it unsettled.
   */
  private holdWhileWaited(): void {
    const waited = this.order.length > 0 || this.warmed.length > 0;
    for (const s of this.slots) {
      if (s.batch) continue;
      if (waited && !s.ready) s.worker.ref();
      else s.worker.unref();
    }
  }

  /** Gives each idle thread the next batch, taking keys in turn and skipping a key at its limit. */
  private dispatch(): void {
    let idle = this.slots.filter((s) => s.ready && !s.batch).length;
    for (const slot of this.slots) {
      if (!slot.ready || slot.batch) continue;
      const batch = this.nextBatch(idle--);
      if (!batch) break;
      slot.batch = batch;
      const key = batch[0].key;
      this.running.set(key, (this.running.get(key) ?? 0) + 1);
      slot.worker.ref();
      writeMark(slot.mark, 0, IDLE, NaN);
      slot.sentAt = wallNow();
      this.watch(slot, Math.min(this.budgetMs, this.ceilingMs));
      // One message: an object several tasks share (a template's source) is cloned once.
      const tasks = batch.map((j) => ({ id: j.id, task: j.task, input: j.input }));
      try {
        slot.worker.postMessage({ batch: tasks } satisfies ToThread);
      } catch (err) {
        this.unsendable(slot, err as Error);
      }
    }
    this.holdWhileWaited();
  }

  /** A batch that could not be cloned: the tasks whose input cannot be fail, the others go back in line. */
  private unsendable(slot: Slot, err: Error): void {
    const batch = slot.batch ?? [];
    this.finish(slot);
    const rest = batch.filter((job) => {
      try {
        structuredClone(job.input);
        return true;
      } catch {
        job.reject(err);
        return false;
      }
    });
    // Every input clones on its own: the fault is not theirs, and sending them again could fail forever.
    if (rest.length === batch.length) for (const job of rest) job.reject(err);
    else if (rest.length) {
      this.requeue(rest, null);
      this.dispatchSoon();
    }
  }

  /** The next key's batch: its waiting tasks shared among the idle threads it may take, cut to BATCH_MS. */
  private nextBatch(idle: number): Job[] | null {
    for (let i = 0; i < this.order.length; i++) {
      const key = this.order[i];
      const held = this.running.get(key) ?? 0;
      if (held >= this.perKeyLimit) continue;
      const q = this.queues.get(key)!;
      const threads = Math.max(1, Math.min(idle, this.perKeyLimit - held));
      const ms = this.taskMs.get(key);
      const most = ms === undefined ? FIRST_BATCH : Math.max(1, Math.min(MAX_BATCH, Math.floor(BATCH_MS / ms)));
      const batch = q.splice(0, Math.min(most, Math.ceil(q.length / threads)));
      // The key served goes to the back of the round; a key with nothing left leaves it.
      this.order.splice(i, 1);
      if (q.length) this.order.push(key);
      else this.queues.delete(key);
      return batch;
    }
    return null;
  }
}
