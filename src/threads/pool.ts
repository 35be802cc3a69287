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
// The tasks live in a module of their own (host.ts explains its shape); the pool knows only their names.
import { availableParallelism } from 'node:os';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { threadCpuMs } from './cpu.js';
import type { FromThread, ToThread } from './host.js';

export class BudgetExceeded extends Error {
  constructor(
    readonly budgetMs: number,
    readonly usedMs: number,
  ) {
    super(`used more than its budget of ${budgetMs} ms of CPU`);
    this.name = 'BudgetExceeded';
  }
}

/** An error a task threw, carried over from its thread by name and message. */
export class TaskError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

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
}

interface Slot {
  worker: Worker;
  /** This thread's /proc stat file, once it said so; null: count wall time. */
  stat: string | null;
  ready: boolean;
  job: Job | null;
  cpuAtBegin: number | null;
  wallAtBegin: number;
  timer: NodeJS.Timeout | null;
  /** A replacement thread starting for a task of this key that was stopped: the key is charged for it. */
  chargedTo: string | null;
}

/** URL of a module next to `importMetaUrl` with the same extension (.ts under tsx, .js when built). */
export function siblingModule(importMetaUrl: string, relative: string): string {
  const ext = extname(fileURLToPath(importMetaUrl));
  return new URL(`${relative}${ext}`, importMetaUrl).href;
}

const HOST = siblingModule(import.meta.url, './host');

// A thread gets the process's environment without NODE_TEST_CONTEXT: on Node 24 a thread that inherits
// it from a process started by the test runner sets up a test reporter that keeps the process alive.
function threadEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

function startThread(tasks: string): Worker {
  if (!HOST.endsWith('.ts')) return new Worker(new URL(HOST), { workerData: { module: tasks }, env: threadEnv() });
  const built = devBuild(tasks);
  return new Worker(new URL(built.host), { workerData: { module: built.tasks }, env: threadEnv() });
}

/**
 * Under tsx (tests, `npm run cli`) the thread's TypeScript is compiled once per process by esbuild (the
 * compiler tsx itself uses) into JavaScript: a thread that registered tsx would spend ~2 s of CPU
 * compiling before it is ready, ten times a built thread's start, and each stopped render restarts one.
 * The files go under node_modules/.cache so that the packages (left external) resolve as from src/.
 */
const devBuilds = new Map<string, { host: string; tasks: string }>();
function devBuild(tasks: string): { host: string; tasks: string } {
  const known = devBuilds.get(tasks);
  if (known) return known;
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const outdir = join(root, 'node_modules', '.cache', 'egw-threads', `${process.pid}-${devBuilds.size}`);
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  esbuild.buildSync({
    entryPoints: { host: fileURLToPath(HOST), tasks: fileURLToPath(tasks) },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    logLevel: 'error',
  });
  process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
  const built = {
    host: pathToFileURL(join(outdir, 'host.mjs')).href,
    tasks: pathToFileURL(join(outdir, 'tasks.mjs')).href,
  };
  devBuilds.set(tasks, built);
  return built;
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
  private nextId = 1;
  private closed = false;
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
      const job: Job = { id: this.nextId++, key, task, input, resolve: resolve as (v: unknown) => void, reject };
      const q = this.queues.get(key);
      if (q) q.push(job);
      else {
        this.queues.set(key, [job]);
        this.order.push(key);
      }
      while (this.slots.length < this.size) this.slots.push(this.spawn());
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
    return n + this.slots.filter((s) => s.job).length;
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
      s.job?.reject(err);
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    const worker = startThread(this.opts.tasks);
    const slot: Slot = {
      worker,
      stat: null,
      ready: false,
      job: null,
      cpuAtBegin: null,
      wallAtBegin: 0,
      timer: null,
      chargedTo: null,
    };
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
    const job = slot.job;
    if (!job || job.id !== m.id) return;
    if (m.type === 'begin') {
      if (slot.timer) clearTimeout(slot.timer);
      slot.cpuAtBegin = m.cpuMs;
      slot.wallAtBegin = performance.now();
      this.watch(slot, this.budgetMs);
      return;
    }
    this.finish(slot);
    if (m.ok) job.resolve(m.value);
    else job.reject(new TaskError(m.name, m.message));
    this.dispatch();
  }

  /** Checks the task's CPU when its budget could be spent, and again later while it is not. */
  private watch(slot: Slot, inMs: number): void {
    slot.timer = setTimeout(() => {
      slot.timer = null;
      const job = slot.job;
      if (!job) return;
      const wall = performance.now() - slot.wallAtBegin;
      const now = slot.cpuAtBegin === null ? null : threadCpuMs(slot.stat);
      const used = now === null || slot.cpuAtBegin === null ? wall : now - slot.cpuAtBegin;
      if (used < this.budgetMs && wall < this.ceilingMs)
        return this.watch(slot, Math.max(10, Math.min(this.budgetMs - used, this.ceilingMs - wall)));
      this.opts.onBudgetExceeded?.(job.task, job.key);
      this.lose(slot, new BudgetExceeded(this.budgetMs, Math.round(used)));
    }, inMs);
  }

  private finish(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const job = slot.job;
    if (!job) return;
    slot.job = null;
    this.release(job.key);
    slot.worker.unref();
  }

  private release(key: string): void {
    const n = (this.running.get(key) ?? 1) - 1;
    if (n > 0) this.running.set(key, n);
    else this.running.delete(key);
  }

  /** The slot's thread is stopped (or gone): its task fails with `err`, a new thread takes its place. */
  private lose(slot: Slot, err: Error): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    const job = slot.job;
    this.finish(slot);
    job?.reject(err);
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
    if (job && err instanceof BudgetExceeded) {
      next.chargedTo = job.key;
      this.running.set(job.key, (this.running.get(job.key) ?? 0) + 1);
    }
    this.slots[at] = next;
    this.dispatch();
  }

  /** Gives each idle thread the next job, taking keys in turn and skipping a key at its limit. */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.job) continue;
      const job = this.nextJob();
      if (!job) break;
      slot.job = job;
      slot.cpuAtBegin = null;
      this.running.set(job.key, (this.running.get(job.key) ?? 0) + 1);
      slot.worker.ref();
      // Until the thread says the task began, only the ceiling applies (it may be loading a module).
      slot.wallAtBegin = performance.now();
      this.watch(slot, this.ceilingMs);
      slot.worker.postMessage({ id: job.id, task: job.task, input: job.input } satisfies ToThread);
    }
    this.holdWhileWaited();
  }

  /**
   * An idle thread never keeps the process alive; one still starting does while tasks (or warm()) wait
   * for it: with every thread unref'd, a process awaiting its first render would end with it unsettled.
   */
  private holdWhileWaited(): void {
    const waited = this.order.length > 0 || this.warmed.length > 0;
    for (const s of this.slots) {
      if (s.job) continue;
      if (waited && !s.ready) s.worker.ref();
      else s.worker.unref();
    }
  }

  private nextJob(): Job | null {
    for (let i = 0; i < this.order.length; i++) {
      const key = this.order[i];
      if ((this.running.get(key) ?? 0) >= this.perKeyLimit) continue;
      const q = this.queues.get(key)!;
      const job = q.shift()!;
      // The key served goes to the back of the round; a key with nothing left leaves it.
      this.order.splice(i, 1);
      if (q.length) this.order.push(key);
      else this.queues.delete(key);
      return job;
    }
    return null;
  }
}
