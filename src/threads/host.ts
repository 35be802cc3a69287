// The inside of one pool thread (pool.ts): loads a module of named tasks, then runs one task at a time on
// the messages it is sent. Before a task's own work starts it tells the pool its thread's CPU time, so
// the budget counts the task's CPU only, not module loading (MJML's first import) or the wait in line.
import { parentPort, workerData } from 'node:worker_threads';
import { ownThreadStat, threadCpuMs } from './cpu.js';

/** What a task module exports: `tasks`, each with an optional warm-up that the budget does not count. */
export interface TaskEntry<I = never, O = unknown> {
  warm?: (input: I) => Promise<void>;
  run: (input: I) => O | Promise<O>;
}
export type TaskTable = Record<string, TaskEntry>;

export type ToThread = { id: number; task: string; input: unknown };
export type FromThread =
  | { type: 'ready'; stat: string | null }
  | { type: 'begin'; id: number; cpuMs: number | null }
  | { type: 'done'; id: number; ok: true; value: unknown }
  | { type: 'done'; id: number; ok: false; name: string; message: string };

const port = parentPort!;
const stat = ownThreadStat();
const { tasks } = (await import((workerData as { module: string }).module)) as { tasks: TaskTable };

port.on('message', (msg: ToThread) => {
  void (async () => {
    const entry = tasks[msg.task];
    try {
      if (!entry) throw new Error(`no task ${msg.task}`);
      await entry.warm?.(msg.input as never);
      port.postMessage({ type: 'begin', id: msg.id, cpuMs: threadCpuMs(stat) } satisfies FromThread);
      const value = await entry.run(msg.input as never);
      port.postMessage({ type: 'done', id: msg.id, ok: true, value } satisfies FromThread);
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      port.postMessage({ type: 'done', id: msg.id, ok: false, name: e.name, message: e.message } satisfies FromThread);
    }
  })();
});

// The pool reads this thread's CPU time from the same file while a task runs (Linux; null elsewhere).
port.postMessage({ type: 'ready', stat: threadCpuMs(stat) === null ? null : stat } satisfies FromThread);
