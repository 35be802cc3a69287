// The inside of one pool thread (pool.ts): loads a module of named tasks, then runs the batches of tasks
// it is sent, one task after another, and answers each batch with one message of all its results. Before
// a task's own work starts it writes its thread's CPU time into the mark it shares with the pool
// (mark.ts), so the budget counts the task's CPU only, not module loading (MJML's first import), the
// tasks before it or the wait in line; a message per task would cost more than a planned render.
import { parentPort, workerData } from 'node:worker_threads';
import { ownThreadStat, threadCpuMs } from './cpu.js';
import { ownCpuMs, RUN, WARM, writeMark } from './mark.js';

/** What a task module exports: `tasks`, each with an optional warm-up that the budget does not count. */
export interface TaskEntry<I = never, O = unknown> {
  warm?: (input: I) => Promise<void>;
  run: (input: I) => O | Promise<O>;
}
export type TaskTable = Record<string, TaskEntry>;

export type ToThread = { batch: { id: number; task: string; input: unknown }[] };
export type TaskResult =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; name: string; message: string };
export type FromThread =
  | { type: 'ready'; stat: string | null }
  /** `runMs`: wall time of the tasks' own work (warm-ups left out), for the pool's batch sizes. */
  | { type: 'done'; results: TaskResult[]; runMs: number };

const port = parentPort!;
const { module, mark } = workerData as { module: string; mark: SharedArrayBuffer };
const own = ownThreadStat();
const stat = threadCpuMs(own) === null ? null : own;
const { tasks } = (await import(module)) as { tasks: TaskTable };

port.on('message', (msg: ToThread) => void runBatch(msg.batch));

async function runBatch(batch: ToThread['batch']): Promise<void> {
  const results: TaskResult[] = [];
  let runMs = 0;
  for (let i = 0; i < batch.length; i++) {
    const { id, task, input } = batch[i];
    const entry = tasks[task];
    try {
      writeMark(mark, i + 1, WARM, NaN);
      if (!entry) throw new Error(`no task ${task}`);
      await entry.warm?.(input as never);
      writeMark(mark, i + 1, RUN, ownCpuMs(stat));
      const began = performance.now();
      try {
        results.push({ id, ok: true, value: await entry.run(input as never) });
      } finally {
        runMs += performance.now() - began;
      }
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      results.push({ id, ok: false, name: e.name, message: e.message });
    }
  }
  port.postMessage({ type: 'done', results, runMs } satisfies FromThread);
}

// The pool reads this thread's CPU time from the same file while a task runs (Linux; null elsewhere).
port.postMessage({ type: 'ready', stat } satisfies FromThread);
