// The heap sizes a long-running process (`serve`, `worker`) sets for itself (issue 38). V8 sizes the young
// generation from the machine's memory: on a host with 24 GB each isolate (the main thread and every
// render thread) may grow it to 128 MiB, and the old generation fills with garbage before a full GC is
// due, so `npm start` peaked above 600 MiB under the end-to-end bench while it held ~65 MiB of live
// objects. The young generation's size can only be chosen when the process starts, so the process
// replaces itself once (process.execve: same pid, same stdio, same signals) with node started with the
// flags below; the render threads inherit them. Semi-spaces of 8 MiB (young generation 16–24 MiB) and a
// heap that grows by 20 % over what a full GC kept (instead of V8's factor of up to 4) keep the peak
// near the live set; no ceiling is set, so an unexpected peak is slower, never a crash. An operator's own heap flags (in the command line or
// NODE_OPTIONS) win: nothing is changed then. Node without process.execve (before 22.15) runs as started.
const FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=20'];
const OWN_FLAGS = /--(max|min)-semi-space-size|--max-old-space-size|--max-heap-size|--heap-growing-percent/;
const MARK = 'EGW_HEAP_FLAGS_SET';

// Node 22.15 / 23.11 and later; the installed @types/node does not know it yet.
type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;
const execve = (process as unknown as { execve?: Execve }).execve?.bind(process);

export function setHeapFlags(): void {
  const cmd = process.argv[2];
  if (cmd !== 'serve' && cmd !== 'worker') return;
  if (process.env[MARK] === '1' || !execve) return;
  if (OWN_FLAGS.test(process.execArgv.join(' ')) || OWN_FLAGS.test(process.env.NODE_OPTIONS ?? '')) return;
  const flags = process.env.EGW_HEAP_FLAGS_TRY?.split(' ').filter(Boolean) ?? FLAGS;
  execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], {
    ...process.env,
    [MARK]: '1',
  });
}

setHeapFlags();
