// Shared by the benchmarks: databases to run against, the gateway and the baseline as child processes
// (started through the CLI, exactly as an operator would), peak RSS from /proc, the load generator, and
// the one-line summary every bench ends with.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import autocannon from 'autocannon';
import { ensureBuilt } from '../scripts/ensure-build.mjs';
import { loadConfig } from '../src/config.js';
import { dropSchema, openDatabase, schemaUrl, type Db } from '../src/db/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { updateKey } from '../src/repos/keys.js';
import { systemClock } from '../src/services/context.js';
import { loadDemo } from '../src/services/demo.js';
import { cliActor } from '../src/cliAdmin.js';

export const ROOT = resolve(import.meta.dirname, '..');
export const QUICK = process.env.BENCH_QUICK === '1';
export const PG_URL =
  process.env.BENCH_DATABASE_URL?.trim() ||
  process.env.TEST_DATABASE_URL?.trim() ||
  'postgres://postgres@127.0.0.1:5432/test';
export const ADMIN_TOKEN = 'bench-admin-token-0123456789';
/** Where --cpu-prof writes the spawned processes' profiles when BENCH_PROFILE=1 (git-ignored). */
export const PROFILE_DIR = resolve(ROOT, '.bench', 'profiles');
export const PROFILE = process.env.BENCH_PROFILE === '1';
/** BENCH_RUNTIME=tsx runs the gateway from its sources through tsx; by default it runs dist/ as `npm start` does. */
export const RUNTIME = process.env.BENCH_RUNTIME === 'tsx' ? 'tsx' : 'compiled';

export type Kind = 'sqlite' | 'postgres';
/** BENCH_DB=sqlite or postgres runs one engine only. */
export const KINDS: Kind[] = (
  process.env.BENCH_DB ? process.env.BENCH_DB.split(',') : ['sqlite', 'postgres']
) as Kind[];

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function log(...args: unknown[]): void {
  console.log(...args);
}

/** One summary line of name=value pairs, the last line a bench prints. */
export function summary(name: string, pairs: Record<string, string | number | null | undefined>): string {
  const fmt = (v: unknown) =>
    typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 2 : 1)) : String(v);
  return (
    `SUMMARY ${name} ` +
    Object.entries(pairs)
      .map(([k, v]) => `${k}=${fmt(v)}`)
      .join(' ')
  );
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

export interface BenchDb {
  kind: Kind;
  /** DATABASE_URL for child processes (PostgreSQL: the schema travels in the URL's options). */
  url: string;
  db: Db;
  schema?: string;
  cleanup(): Promise<void>;
}

/**
 * A fresh database: a SQLite file in a temp dir, or a PostgreSQL schema of its own. Migrated, unless
 * `migrate` is false (for a gateway of another version, which migrates it itself).
 */
export async function freshDatabase(kind: Kind, migrate = true): Promise<BenchDb> {
  if (kind === 'postgres') {
    const schema = `bench_${randomBytes(4).toString('hex')}`;
    const url = schemaUrl(PG_URL, schema);
    const db = await openDatabase(PG_URL, { schema, poolSize: 4 });
    if (migrate) await migrateToLatest(db);
    return {
      kind,
      url,
      db,
      schema,
      cleanup: async () => {
        await db.close();
        await dropSchema(PG_URL, schema);
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'egw-bench-'));
  const url = `sqlite:${join(dir, 'bench.db')}`;
  const db = await openDatabase(url);
  if (migrate) await migrateToLatest(db);
  return {
    kind,
    url,
    db,
    cleanup: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Where a hand-written contender (bench/handwritten-server.ts) keeps its data, as its environment, and
 * how to remove it: a SQLite file in a temp dir, or a schema and a graphile-worker schema of its own. */
export function handwrittenStore(kind: Kind): { env: Record<string, string>; cleanup(): Promise<void> } {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'egw-handwritten-'));
    return {
      env: { ENGINE: kind, SQLITE_PATH: join(dir, 'hand.db') },
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const tag = randomBytes(4).toString('hex');
  const env = { ENGINE: kind, DATABASE_URL: PG_URL, SCHEMA: `hand_${tag}`, WORKER_SCHEMA: `hand_gw_${tag}` };
  return {
    env,
    cleanup: async () => {
      await dropSchema(PG_URL, env.SCHEMA);
      await dropSchema(PG_URL, env.WORKER_SCHEMA);
    },
  };
}

export interface Demo {
  siteKey: string;
  projectId: number;
  /** "transactional + carts": both endpoints; its rate limit is raised so the bench measures the path, not 429s. */
  key: string;
}

/** The example project (routed templates, cart chains) with one key whose rate limit is out of the way. */
export async function loadBenchProject(b: BenchDb): Promise<Demo> {
  const deps = { db: b.db, config: loadConfig({ DATABASE_URL: b.url }), clock: systemClock };
  const r = await loadDemo(deps, cliActor());
  const k = r.keys.find((x) => x.name.startsWith('site backend'))!;
  const row = await b.db.db
    .selectFrom('api_keys')
    .select(['id', 'project_id'])
    .where('last4', '=', k.last4)
    .executeTakeFirstOrThrow();
  await updateKey(b.db.db, row.id, { rate_limit: { per_second: 10_000_000, burst: 10_000_000 } }, Date.now());
  return { siteKey: r.site_key, projectId: row.project_id, key: k.key! };
}

export interface Child {
  pid: number;
  port: number;
  proc: ChildProcess;
  output(): string;
  /** Peak resident set (VmHWM) so far, in MiB; read while the process lives. */
  peakRssMb(): number;
  /** Resident set now (VmRSS), in MiB. */
  rssMb(): number;
  /** CPU time (user + system) the process has used so far, in seconds. */
  cpuSeconds(): number;
  /** SIGTERM, wait for exit; returns the last peak RSS seen. */
  stop(): Promise<number>;
}

export function cpuSecondsOf(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces): utime is the 12th, stime the 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

export function vmHwmKb(pid: number, field: 'VmHWM' | 'VmRSS' = 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * Starts a node process (`node --import tsx <script> ...args`; plain `node` for a compiled .js) and,
 * when `port` is given, waits for /healthz. With BENCH_PROFILE=1 it runs under --cpu-prof, written to
 * bench/profiles/ at exit.
 */
export async function spawnNode(
  script: string,
  args: string[],
  env: Record<string, string>,
  opts: { port?: number; name: string; healthPath?: string },
): Promise<Child> {
  const flags = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  if (PROFILE) {
    // One directory per process: the main thread's profile is the big one (tsx's loader thread writes
    // a small one beside it).
    const dir = join(PROFILE_DIR, `${opts.name}-${Date.now()}`);
    mkdirSync(dir, { recursive: true });
    flags.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
  }
  const proc = spawn(process.execPath, [...flags, script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (c: Buffer) => {
    out += String(c);
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  proc.stdout.on('data', keep);
  proc.stderr.on('data', keep);
  let exited = false;
  const exit = new Promise<void>((r) =>
    proc.once('exit', () => {
      exited = true;
      r();
    }),
  );
  let peak = 0;
  const sample = setInterval(() => {
    if (!exited) peak = Math.max(peak, vmHwmKb(proc.pid!));
  }, 200);
  const child: Child = {
    pid: proc.pid!,
    port: opts.port ?? 0,
    proc,
    output: () => out,
    cpuSeconds: () => cpuSecondsOf(proc.pid!),
    rssMb: () => vmHwmKb(proc.pid!, 'VmRSS') / 1024,
    peakRssMb: () => {
      if (!exited) peak = Math.max(peak, vmHwmKb(proc.pid!));
      return peak / 1024;
    },
    async stop() {
      const p = child.peakRssMb();
      clearInterval(sample);
      if (!exited) proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exit;
      clearTimeout(t);
      return p;
    },
  };
  if (opts.port) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (exited) throw new Error(`${opts.name} exited early:\n${out}`);
      try {
        const res = await fetch(`http://127.0.0.1:${opts.port}${opts.healthPath ?? '/healthz'}`);
        if (res.ok) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) {
        await child.stop();
        throw new Error(`${opts.name} did not become healthy:\n${out}`);
      }
      await sleep(100);
    }
  }
  return child;
}

/** The gateway through its CLI: `serve` (ROLE from env) or `worker`. */
export async function spawnGateway(
  command: 'serve' | 'worker',
  env: Record<string, string>,
  name: string,
  /** Another build's compiled CLI (bench/before.ts); this checkout's by default. */
  cli?: string,
): Promise<Child> {
  const port = command === 'serve' ? await freePort() : undefined;
  return spawnNode(
    cli ?? (RUNTIME === 'tsx' ? 'src/cli.ts' : relative(ROOT, ensureBuilt())),
    [command],
    {
      ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      ...(port ? { PORT: String(port) } : {}),
      ...env,
    },
    { port, name },
  );
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** event_id of every 200 answer, when collected. */
  eventIds: number[];
  durationS: number;
}

export interface LoadOptions {
  url: string;
  method?: 'POST' | 'GET';
  headers?: Record<string, string>;
  /** Body of request i (a fresh one each request: unique idempotency keys and order ids). */
  body?: (i: number) => string;
  connections?: number;
  durationS: number;
  /** Requests per second over all connections (lag measurement at a steady rate). */
  overallRate?: number;
  collectEventIds?: boolean;
}

let seq = 0;
const EVENT_ID = /"event_id":(\d+)/;

export async function load(o: LoadOptions): Promise<LoadResult> {
  const eventIds: number[] = [];
  const started = Date.now();
  const result = await autocannon({
    url: o.url,
    connections: o.connections ?? 64,
    duration: o.durationS,
    ...(o.overallRate ? { overallRate: o.overallRate } : {}),
    timeout: 30,
    requests: [
      {
        method: o.method ?? 'POST',
        headers: { 'content-type': 'application/json', ...(o.headers ?? {}) },
        ...(o.body ? { setupRequest: (req: any) => ({ ...req, body: o.body!(seq++) }) } : {}),
        ...(o.collectEventIds
          ? {
              onResponse: (status: number, body: string) => {
                if (status === 200) {
                  const m = EVENT_ID.exec(body);
                  if (m) eventIds.push(Number(m[1]));
                }
              },
            }
          : {}),
      },
    ],
  });
  return {
    requests: result.requests.total,
    rps: result.requests.total / ((Date.now() - started) / 1000),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    eventIds,
    durationS: (Date.now() - started) / 1000,
  };
}

/**
 * The body of the i-th request of a run on the accept path (bench/accept.ts sends it over HTTP): 20 000 recurring contacts, a new key or order each time.
 */
export function acceptBody(endpoint: 'transactional' | 'order-created', run: string, i: number) {
  if (endpoint === 'transactional')
    return {
      event_type: 'contest_results',
      email: `user${i % 20000}@example.com`,
      name: `User ${i % 20000}`,
      idempotency_key: `${run}-${i}`,
      fields: { event_title: 'Spring contest', work_title: `Work number ${i}`, place: '1' },
    };
  return {
    cart_type: 'course',
    email: `buyer${i % 20000}@example.com`,
    name: `Buyer ${i % 20000}`,
    order_id: `${run}-${i}`,
    course_name: 'Inclusive education',
    fields: { pay_url: `https://site.example/pay/${run}-${i}` },
  };
}

export const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : String(n));

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** Machine facts printed with every bench (the figures mean little without them). */
export function machine(): string {
  const cpu = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  const mem = /MemTotal:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1];
  const cores = readFileSync('/proc/cpuinfo', 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('processor')).length;
  return `machine: ${cores} cores (${cpu}), ${mem ? Math.round(Number(mem) / 1024) : '?'} MiB RAM, node ${process.version}`;
}
