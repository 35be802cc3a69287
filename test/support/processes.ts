// Real gateway processes for the multi-process tests: `serve` or `worker` spawned through the CLI as an
// operator would start them, a health wait, a clean stop, and a bounded pool for the load they are given.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';

export interface Proc {
  name: string;
  child: ChildProcess;
  port: number;
  out(): string;
}

/** `port` is where the process answers /healthz (PORT for serve, METRICS_PORT for worker). */
export function startProcess(
  name: string,
  command: 'serve' | 'worker',
  env: Record<string, string>,
  port: number,
): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', command], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (c: Buffer) => {
    out = (out + String(c)).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return { name, child, port, out: () => out };
}

/**
 * Whether the child has ended. A child killed by a signal keeps `exitCode` null (its `signalCode` is set
 * instead), and its 'exit' has already been emitted: waiting for it then never ends.
 */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Fails the test, with the end of the process's output, when the process has exited. */
export function assertAlive(p: Proc): void {
  assert.ok(
    !hasExited(p.child),
    `${p.name} died (exit ${p.child.exitCode ?? p.child.signalCode}):\n${p.out().slice(-4000)}`,
  );
}

export async function healthy(p: Proc): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (hasExited(p.child)) throw new Error(`${p.name} exited early:\n${p.out()}`);
    try {
      if ((await fetch(`http://127.0.0.1:${p.port}/healthz`)).ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`${p.name} did not become healthy:\n${p.out()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function stopProcess(p: Proc): Promise<void> {
  if (hasExited(p.child)) return;
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
  p.child.kill('SIGTERM');
  const t = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(t);
}

/** Runs `tasks` with at most `n` in flight. */
export async function pool<T>(n: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]();
      }
    }),
  );
  return results;
}

/** Runs one CLI command as an operator would (through tsx): its exit code and output. */
export function runCli(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', ...args],
      { env: { ...process.env, ...env } },
      (err, out, errOut) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out, err: errOut }),
    );
  });
}
