// Where a pool thread (host.ts) tells the pool (pool.ts) which task of its batch it is running and the
// thread's CPU time when that task's own work began: a few numbers in memory both threads share, written
// by the thread and read by the pool's budget timer, instead of a message per task. A sequence number
// around each write (odd while writing) lets the reader see a whole record, never half of two.
import { threadCpuMs } from './cpu.js';

/** The batch has not started (or the mark was just reset for a new batch). */
export const IDLE = 0;
/** The task's warm-up (loading a module): only the wall-clock ceiling applies. */
export const WARM = 1;
/** The task's own work: its budget counts from `cpuMs`. */
export const RUN = 2;
type Phase = typeof IDLE | typeof WARM | typeof RUN;

export interface Mark {
  /** 1-based position of the task in the batch; 0 before the first. */
  index: number;
  phase: Phase;
  /** The thread's CPU milliseconds when the task's work began; NaN when not known. */
  cpuMs: number;
  /** Wall clock (performance.timeOrigin + now, the same in every thread) when the phase began. */
  wallMs: number;
}

/** The shared memory of one thread's mark. */
export const newMarkBuffer = (): SharedArrayBuffer => new SharedArrayBuffer(8 + 4 * 8);

export const wallNow = (): number => performance.timeOrigin + performance.now();

export function writeMark(buffer: SharedArrayBuffer, index: number, phase: Phase, cpuMs: number): void {
  const seq = new Int32Array(buffer, 0, 1);
  const f = new Float64Array(buffer, 8, 4);
  Atomics.add(seq, 0, 1);
  f[0] = index;
  f[1] = phase;
  f[2] = cpuMs;
  f[3] = wallNow();
  Atomics.add(seq, 0, 1);
}

/** The record last written, or null when the writer was busy each time it was looked at (try later). */
export function readMark(buffer: SharedArrayBuffer): Mark | null {
  const seq = new Int32Array(buffer, 0, 1);
  const f = new Float64Array(buffer, 8, 4);
  for (let tries = 0; tries < 100; tries++) {
    const before = Atomics.load(seq, 0);
    if (before & 1) continue;
    const mark: Mark = { index: f[0], phase: f[1] as Phase, cpuMs: f[2], wallMs: f[3] };
    if (Atomics.load(seq, 0) === before) return mark;
  }
  return null;
}

type ThreadCpu = () => { user: number; system: number };
const threadCpuUsage = (process as unknown as { threadCpuUsage?: ThreadCpu }).threadCpuUsage;

/**
 * The calling thread's CPU milliseconds as the pool reads them from `stat` (/proc, whole 10 ms ticks of
 * user and of system time), or NaN without /proc. process.threadCpuUsage (Node ≥ 22.19) asks the kernel
 * for the same counters in ~2 µs where reading /proc takes ~40 µs; each is cut to whole ticks as /proc
 * does, so the pool's difference of the two is the task's CPU.
 */
export function ownCpuMs(stat: string | null): number {
  if (stat === null) return NaN;
  if (threadCpuUsage) {
    const { user, system } = threadCpuUsage.call(process);
    return (Math.floor(user / 10_000) + Math.floor(system / 10_000)) * 10;
  }
  return threadCpuMs(stat) ?? NaN;
}
