// A PostgreSQL cluster and a Redis server of the test's own, on their own ports, for the fault tests of
// issue 34: restarting or killing them disturbs no other test (the shared 5432 and 6379 are never
// touched). PostgreSQL is initialised in a temporary directory as the `postgres` user (initdb refuses
// root); both are skipped with a message where the binaries or that user are missing.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../fixtures/delivery-support.js';
import { hasExited } from './processes.js';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Why a cluster of the test's own cannot be made here, or null when it can. */
export function ownPostgresUnavailable(): string | null {
  if (!existsSync(join(PG_BIN, 'initdb'))) return `no initdb in ${PG_BIN} (set PG_BIN)`;
  if (process.getuid?.() !== 0) return 'not root: cannot run initdb as the postgres user';
  try {
    execFileSync('id', ['postgres'], { stdio: 'ignore' });
  } catch {
    return 'no postgres user';
  }
  return null;
}

export interface OwnPostgres {
  url: string;
  port: number;
  /** `pg_ctl restart -m fast`: every connection is cut, the server is back when this resolves. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and removes its directory. */
  destroy(): Promise<void>;
}

const asPostgres = (args: string[]) =>
  new Promise<void>((resolve, reject) => {
    const cmd = args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('su', ['postgres', '-c', cmd], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += String(c)));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${args[0]} exited ${code}: ${err}`))));
  });

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'egw-pg-'));
  chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), 0);
  const data = join(dir, 'data');
  const port = await freePort();
  await asPostgres([join(PG_BIN, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  // fsync off: the cluster lives for one test; a restart is what is tested, not a power cut.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const ctl = (...a: string[]) => asPostgres([join(PG_BIN, 'pg_ctl'), '-D', data, '-w', '-t', '60', ...a]);
  const start = () => ctl('-o', options, '-l', join(dir, 'log'), 'start');
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    restart: () => ctl('-m', 'fast', '-o', options, 'restart'),
    stop: () => ctl('-m', 'fast', 'stop'),
    start,
    async destroy() {
      await ctl('-m', 'immediate', 'stop').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function ownRedisUnavailable(): string | null {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return null;
  } catch {
    return 'no redis-server on PATH';
  }
}

export interface OwnRedis {
  url: string;
  port: number;
  /** SIGKILL: the server is gone at once, as in a crash. */
  kill(): Promise<void>;
  start(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    // Ready when it answers PING.
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'pipe' });
        return;
      } catch {
        if (Date.now() > deadline) throw new Error('own redis-server did not start');
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    async kill() {
      const c = child;
      // Already killed (by the test, before it failed): its 'exit' has been emitted, waiting would hang.
      if (!c || hasExited(c)) return;
      const exited = new Promise<void>((r) => c.once('exit', () => r()));
      c.kill('SIGKILL');
      await exited;
    },
  };
}
