// End-to-end bench (issue 29): what a site owner cares about, events accepted → e-mails accepted by the
// relay. N transactional events (a new recipient each, `Prefer: respond-async`) are posted by 64
// connections; every e-mail goes to an SMTP sink in its own process (bench/e2e-sink.ts, which notes when
// it answered 250 to each recipient). Per contender:
//   accept req/s     the posting phase's rate;
//   e2e mails/s      N / (last 250 − first request);
//   drain/s          e-mails accepted by the sink after the last answer, per second, until the last one;
//   p50/p99 ms       from the gateway's answer to the sink's 250 for the same recipient;
//   CPU ms/event     CPU time of the contender's processes over the run, per event;
//   SMTP conns       connections the sink saw; peak RSS of the largest process.
// Then a steady load at half the measured e2e rate (BENCH_E2E_STEADY_S seconds) gives the p99 a
// site sees when the gateway is not saturated (target: at most 1 s).
// Contenders, in the same run: the gateway's `npm start` on SQLite (API and worker in one process) and
// 1 API + 1 worker on PostgreSQL, each against a hand-written pipeline on the same engine
// (bench/handwritten-server.ts with SMTP_URL: better-sqlite3 + 50 ms poller + nodemailer;
// pg + graphile-worker + nodemailer).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { dropSchema } from '../src/db/index.js';
import {
  fmt,
  freePort,
  freshDatabase,
  handwrittenStore,
  KINDS,
  loadBenchProject,
  log,
  machine,
  percentile,
  PG_URL,
  QUICK,
  sleep,
  spawnGateway,
  spawnNode,
  type Child,
  type Kind,
} from './lib.js';

const N = Number(process.env.BENCH_E2E_EVENTS) || (QUICK ? 3000 : 20_000);
const STEADY_S = Number(process.env.BENCH_E2E_STEADY_S) || (QUICK ? 4 : 10);
const CONNECTIONS = 64;
/** BENCH_E2E_GATEWAY_ONLY=1: the gateway alone, no hand-written baseline (for before/after runs of a change). */
const GATEWAY_ONLY = process.env.BENCH_E2E_GATEWAY_ONLY === '1';
const DRAIN_TIMEOUT_MS = 300_000;

interface Sink {
  url: string;
  status(after?: number): Promise<{ received: number; connections: number; last: number; after: number }>;
  /** Stops the sink and returns recipient → epoch ms of its 250. */
  stop(): Promise<Map<string, number>>;
}

async function startSink(): Promise<Sink> {
  const port = await freePort();
  const statusPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'egw-e2e-sink-'));
  const out = join(dir, 'arrivals.tsv');
  const child = await spawnNode(
    'bench/e2e-sink.ts',
    [],
    { PORT: String(port), STATUS_PORT: String(statusPort), OUT: out },
    { name: 'e2e-sink', port: statusPort, healthPath: '/' },
  );
  return {
    url: `smtp://127.0.0.1:${port}`,
    status: async (after) => (await fetch(`http://127.0.0.1:${statusPort}/?after=${after ?? ''}`)).json() as any,
    async stop() {
      await child.stop();
      // The sink writes its arrivals when it is stopped: no file means it had died before.
      if (!existsSync(out)) throw new Error(`the SMTP sink wrote no arrivals; its output:\n${child.output()}`);
      const map = new Map<string, number>();
      for (const line of readFileSync(out, 'utf8').split('\n')) {
        const [rcpt, t] = line.split('\t');
        if (rcpt) map.set(rcpt, Number(t));
      }
      rmSync(dir, { recursive: true, force: true });
      return map;
    },
  };
}

function body(run: string, i: number): string {
  return JSON.stringify({
    event_type: 'contest_results',
    email: `${run}-${i}@example.com`,
    name: `Участник ${i}`,
    idempotency_key: `${run}-${i}`,
    fields: { event_title: 'Весенний конкурс', work_title: `Работа номер ${i}`, place: '1' },
  });
}

/** Posts `amount` events (or for `durationS` at `rate`/s); returns the answer time of every recipient. */
async function post(
  port: number,
  key: string | null,
  run: string,
  o: { amount?: number; durationS?: number; rate?: number },
) {
  const answered = new Map<string, number>();
  let seq = 0;
  let non2xx = 0;
  const started = Date.now();
  await autocannon({
    url: `http://127.0.0.1:${port}/api/scoped/send/transactional`,
    connections: o.rate ? Math.min(CONNECTIONS, Math.max(4, Math.ceil(o.rate / 50))) : CONNECTIONS,
    ...(o.amount ? { amount: o.amount } : { duration: o.durationS }),
    ...(o.rate ? { overallRate: o.rate } : {}),
    timeout: 30,
    requests: [
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          prefer: 'respond-async',
          ...(key ? { 'x-api-key': key } : {}),
        },
        setupRequest: (req: any) => ({ ...req, body: body(run, seq++) }),
        onResponse: (status: number, b: string) => {
          const m = /"email":"([^"]+)"/.exec(b);
          if (status === 200 && m) answered.set(m[1], Date.now());
          else non2xx++;
        },
      },
    ],
  });
  return { answered, started, ended: Date.now(), non2xx };
}

async function waitFor(sink: Sink, n: number): Promise<boolean> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if ((await sink.status()).received >= n) return true;
    await sleep(50);
  }
  return false;
}

interface Contender {
  name: string;
  start(sinkUrl: string): Promise<{ port: number; key: string | null; procs: Child[]; cleanup(): Promise<void> }>;
}

function gateway(kind: Kind): Contender {
  return {
    name: kind === 'sqlite' ? 'gateway npm start, SQLite' : 'gateway 1 API + 1 worker, PostgreSQL',
    async start(sinkUrl) {
      const b = await freshDatabase(kind);
      const demo = await loadBenchProject(b);
      await b.db.close();
      const env = { DATABASE_URL: b.url, SMTP_URL: sinkUrl };
      const procs =
        kind === 'sqlite'
          ? [await spawnGateway('serve', env, 'e2e-gateway')]
          : [
              await spawnGateway('serve', { ...env, ROLE: 'api' }, 'e2e-api'),
              await spawnGateway('worker', env, 'e2e-worker'),
            ];
      return {
        port: procs[0].port,
        key: demo.key,
        procs,
        cleanup: async () => {
          if (b.schema) await dropSchema(PG_URL, b.schema);
          else await b.cleanup().catch(() => {});
        },
      };
    },
  };
}

function handwritten(kind: Kind): Contender {
  return {
    name:
      kind === 'sqlite'
        ? 'hand-written better-sqlite3 + 50 ms poller + nodemailer'
        : 'hand-written pg + graphile-worker + nodemailer',
    async start(sinkUrl) {
      const port = await freePort();
      const { env: store, cleanup } = handwrittenStore(kind);
      const env = { ...store, PORT: String(port), SMTP_URL: sinkUrl };
      const srv = await spawnNode('bench/handwritten-server.ts', [], env, { port, name: `e2e-hand-${kind}` });
      return { port, key: null, procs: [srv], cleanup };
    },
  };
}

interface E2eResult {
  acceptRps: number;
  e2eRate: number;
  drainRate: number;
  p50: number;
  p99: number;
  steadyRate: number;
  steadyP99: number;
  cpuMsPerEvent: number;
  connections: number;
  peakRssMb: number;
  lost: number;
}

function latencies(answered: Map<string, number>, arrived: Map<string, number>): number[] {
  const out: number[] = [];
  for (const [rcpt, t] of answered) {
    const a = arrived.get(rcpt);
    if (a !== undefined) out.push(a - t);
  }
  return out.sort((x, y) => x - y);
}

async function measure(c: Contender): Promise<E2eResult> {
  const sink = await startSink();
  // A failed run stops its sink too (it is a process of its own and would outlive the bench).
  let sinkStopped = false;
  const started = await c.start(sink.url).catch(async (err: unknown) => {
    await sink.stop().catch(() => {});
    throw err;
  });
  const cpu0 = started.procs.reduce((s, p) => s + p.cpuSeconds(), 0);
  try {
    const run = `e2e${randomBytes(3).toString('hex')}`;
    const burst = await post(started.port, started.key, run, { amount: N });
    const accepted = burst.answered.size;
    const complete = await waitFor(sink, accepted);
    const cpu = started.procs.reduce((s, p) => s + p.cpuSeconds(), 0) - cpu0;
    const s = await sink.status(burst.ended);
    const connections = s.connections;
    const arrivedSoFar = s.received;
    const e2eRate = accepted / ((s.last - burst.started) / 1000);
    const drainRate = s.last > burst.ended ? s.after / ((s.last - burst.ended) / 1000) : NaN;
    // Steady phase at half the e2e rate just measured (the p99 a site sees below saturation).
    const steadyRate = Math.max(10, Math.round(e2eRate / 2));
    const steady = await post(started.port, started.key, `${run}s`, { durationS: STEADY_S, rate: steadyRate });
    await waitFor(sink, arrivedSoFar + steady.answered.size);
    const peakRssMb = Math.max(...started.procs.map((p) => p.peakRssMb()));
    for (const p of started.procs) await p.stop();
    sinkStopped = true;
    const arrived = await sink.stop();
    const lat = latencies(burst.answered, arrived);
    const steadyLat = latencies(steady.answered, arrived);
    return {
      acceptRps: accepted / ((burst.ended - burst.started) / 1000),
      e2eRate,
      drainRate,
      p50: percentile(lat, 50),
      p99: percentile(lat, 99),
      steadyRate: steady.answered.size / STEADY_S,
      steadyP99: percentile(steadyLat, 99),
      cpuMsPerEvent: (cpu * 1000) / accepted,
      connections,
      peakRssMb,
      lost: complete ? 0 : accepted - arrived.size,
    };
  } finally {
    for (const p of started.procs) await p.stop().catch(() => {});
    if (!sinkStopped) await sink.stop().catch(() => {});
    await started.cleanup();
  }
}

export async function runE2e(kinds: Kind[] = KINDS): Promise<Record<string, string | number>> {
  log(
    `== end to end: ${N} events by ${CONNECTIONS} connections, then ${STEADY_S} s at half the e2e rate; ${machine()}`,
  );
  const out: Record<string, string | number> = {};
  const header =
    'contender'.padEnd(58) +
    'accept/s  e2e/s  drain/s  p50 ms  p99 ms | steady/s  p99 ms | CPU ms/ev  SMTP conns  RSS MiB  lost';
  log(header);
  for (const kind of kinds) {
    const results: E2eResult[] = [];
    for (const c of GATEWAY_ONLY ? [gateway(kind)] : [handwritten(kind), gateway(kind)]) {
      const r = await measure(c);
      results.push(r);
      log(
        `${c.name.padEnd(58)}${fmt(r.acceptRps, 0).padStart(8)} ${fmt(r.e2eRate, 0).padStart(6)} ${fmt(r.drainRate, 0).padStart(8)} ${fmt(r.p50, 0).padStart(7)} ${fmt(r.p99, 0).padStart(7)} | ${fmt(r.steadyRate, 0).padStart(8)} ${fmt(r.steadyP99, 0).padStart(7)} | ${fmt(r.cpuMsPerEvent, 2).padStart(9)} ${String(r.connections).padStart(11)} ${fmt(r.peakRssMb, 0).padStart(8)} ${String(r.lost).padStart(5)}`,
      );
    }
    const tag = kind === 'sqlite' ? 'sqlite' : 'pg';
    if (GATEWAY_ONLY) {
      const [only] = results;
      out[`${tag}_e2e_per_s`] = Math.round(only.e2eRate);
      out[`${tag}_cpu_us_per_event`] = Math.round(only.cpuMsPerEvent * 1000);
      out[`${tag}_rss_mb`] = Math.round(only.peakRssMb);
      out[`${tag}_lost`] = only.lost;
      continue;
    }
    const [hand, gw] = results;
    out[`${tag}_e2e_per_s`] = Math.round(gw.e2eRate);
    out[`${tag}_hand_e2e_per_s`] = Math.round(hand.e2eRate);
    out[`${tag}_e2e_x`] = Number((gw.e2eRate / hand.e2eRate).toFixed(2));
    out[`${tag}_accept_x`] = Number((gw.acceptRps / hand.acceptRps).toFixed(2));
    out[`${tag}_p99_ms`] = Math.round(gw.p99);
    out[`${tag}_steady_p99_ms`] = Math.round(gw.steadyP99);
    out[`${tag}_rss_mb`] = Math.round(gw.peakRssMb);
    out[`${tag}_lost`] = gw.lost;
  }
  return out;
}
