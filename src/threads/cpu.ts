// CPU time of one thread, read from Linux's /proc (utime + stime of the thread's own stat file), so a
// pool can hold a task to a budget of CPU rather than of wall time: on a loaded machine a thread that
// waits for a core is not using its budget. Null where /proc is absent (the pool then counts wall time).
import { readFileSync, readlinkSync } from 'node:fs';

/** Clock ticks per second of /proc's times (USER_HZ): 100 on every Linux the gateway runs on. */
const TICKS_PER_SECOND = 100;

/** The calling thread's own stat file under a path that other threads of the process can read too. */
export function ownThreadStat(): string | null {
  try {
    // /proc/thread-self → "<pid>/task/<tid>"; the absolute form names this thread from any thread.
    return `/proc/${readlinkSync('/proc/thread-self')}/stat`;
  } catch {
    return null;
  }
}

/** CPU milliseconds the thread of `statPath` has used so far, or null when it cannot be read. */
export function threadCpuMs(statPath: string | null): number | null {
  if (!statPath) return null;
  try {
    const stat = readFileSync(statPath, 'latin1');
    // Fields after the command name (which may hold spaces) start after its closing parenthesis;
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}
