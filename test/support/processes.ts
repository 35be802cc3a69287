// Real gateway processes for the scale-out tests: `serve` or `worker` through the CLI as an operator
// starts them, their output kept for the failure message, health awaited, and a SIGTERM stop.
import { spawn, type ChildProcess } from 'node:child_process';

export interface Proc {
  name: string;
  child: ChildProcess;
  port: number;
  out(): string;
}

export function startProcess(
  name: string,
  command: 'serve' | 'worker',
  env: Record<string, string>,
  port: number,
  adminToken: string,
): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', command], {
    env: { ...process.env, ...env, LOG_LEVEL: 'warn', ADMIN_TOKEN: adminToken },
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

export async function healthy(p: Proc): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (p.child.exitCode !== null) throw new Error(`${p.name} exited early:\n${p.out()}`);
    try {
      if ((await fetch(`http://127.0.0.1:${p.port}/healthz`)).ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`${p.name} did not become healthy:\n${p.out()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function stop(p: Proc): Promise<void> {
  if (p.child.exitCode !== null) return;
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
  p.child.kill('SIGTERM');
  const t = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(t);
}
