// Accept-path bench: autocannon at 64 connections against POST /api/scoped/send/transactional (routed
// template, Prefer: respond-async, a unique idempotency key per request) and /api/scoped/events/order-
// created (a new order per request: event, contact, order and a three-step cart chain), on SQLite and
// PostgreSQL, each against the bare-Fastify baseline measured in the same run. The gateway runs as
// `serve` with ROLE=api (the API process of the scale-out topology; the worker is measured by the
// delivery and lag benches). Also against two hand-written servers (bench/handwritten-server.ts) on
// each engine, transactional only. After each run every 200 answer's event_id is looked up: the event row and
// its e-mails must be there (committed before the answer).
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { BEFORE_REF, buildBefore, loadBeforeProject, type BeforeBuild } from './before.js';
import {
  acceptBody,
  freePort,
  freshDatabase,
  handwrittenStore,
  KINDS,
  load,
  loadBenchProject,
  log,
  machine,
  QUICK,
  RUNTIME,
  spawnGateway,
  spawnNode,
  summary,
  type BenchDb,
  type Child,
  type Kind,
  type LoadResult,
} from './lib.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S) || (QUICK ? 3 : 10);
const WARMUP_S = QUICK ? 1 : 3;
const CONNECTIONS = 64;
/** The V8 heap settings docs/performance.md recommends where memory is tight. */
const TUNED = process.env.BENCH_TUNED_NODE_OPTIONS ?? '--max-semi-space-size=4 --max-old-space-size=128';

/** BENCH_TUNED=0 leaves out the runs with the heap capped (shorter iterations). */
const TUNED_RUNS = process.env.BENCH_TUNED !== '0';

type Endpoint = 'transactional' | 'order-created';
/** BENCH_ENDPOINTS=transactional runs one endpoint only (the hand-written servers have only that one). */
const ENDPOINTS = (process.env.BENCH_ENDPOINTS?.split(',') ?? ['transactional', 'order-created']) as Endpoint[];

/** The machine is shared: every figure is printed with the load averages it was measured under. */
const load1 = () =>
  `load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
const PATHS: Record<Endpoint, string> = {
  transactional: '/api/scoped/send/transactional',
  'order-created': '/api/scoped/events/order-created',
};

function bodyFor(endpoint: Endpoint, run: string): (i: number) => string {
  return (i) => JSON.stringify(acceptBody(endpoint, run, i));
}

/**
 * Warm-up, then the measured load. With the server's process given, also its CPU time per answered
 * request (user + system, µs): on a shared machine the least noisy figure of what a request costs.
 */
async function hammer(
  port: number,
  endpoint: Endpoint,
  key: string,
  collect: boolean,
  server?: Child,
): Promise<LoadResult & { cpuUs: number }> {
  const run = randomBytes(4).toString('hex');
  const headers: Record<string, string> = { 'x-api-key': key };
  if (endpoint === 'transactional') headers.prefer = 'respond-async';
  const url = `http://127.0.0.1:${port}${PATHS[endpoint]}`;
  await load({ url, headers, body: bodyFor(endpoint, `warm-${run}`), connections: CONNECTIONS, durationS: WARMUP_S });
  const cpu0 = server?.cpuSeconds() ?? NaN;
  const r = await load({
    url,
    headers,
    body: bodyFor(endpoint, run),
    connections: CONNECTIONS,
    durationS: DURATION_S,
    collectEventIds: collect,
  });
  const cpuUs = (((server?.cpuSeconds() ?? NaN) - cpu0) * 1e6) / Math.max(1, r.requests - r.non2xx);
  return { ...r, cpuUs };
}

/** Every answered 200 names an event that is in the log with its e-mails: nothing answered was lost. */
async function verifyCommitted(
  b: BenchDb,
  endpoint: Endpoint,
  r: LoadResult,
): Promise<{ ok: boolean; missing: number; emailsMissing: number }> {
  const perEvent = endpoint === 'transactional' ? 1 : 3;
  let missing = 0;
  let emailsMissing = 0;
  for (let i = 0; i < r.eventIds.length; i += 1000) {
    const ids = r.eventIds.slice(i, i + 1000);
    const ev = await b.db.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('id', 'in', ids)
      .where('http_status', '=', 200)
      .where('accepted', '=', 1)
      .executeTakeFirstOrThrow();
    const em = await b.db.db
      .selectFrom('scheduled_emails')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('event_id', 'in', ids)
      .executeTakeFirstOrThrow();
    missing += ids.length - Number(ev.n);
    emailsMissing += ids.length * perEvent - Number(em.n);
  }
  const twoHundreds = r.requests - r.non2xx;
  // Every 2xx autocannon counted carried an event id we collected.
  const ok = missing === 0 && emailsMissing === 0 && r.eventIds.length >= twoHundreds;
  return { ok, missing, emailsMissing };
}

/** A hand-written server (bench/handwritten-server.ts) on one engine, loaded like the gateway. */
async function handwritten(kind: Kind): Promise<LoadResult & { rssMb: number; cpuUs: number }> {
  const port = await freePort();
  const { env: store, cleanup } = handwrittenStore(kind);
  const env = { ...store, PORT: String(port) };
  try {
    const srv = await spawnNode('bench/handwritten-server.ts', [], env, { port, name: `handwritten-${kind}` });
    const r = await hammer(port, 'transactional', 'none', false, srv);
    const rssMb = await srv.stop();
    return { ...r, rssMb };
  } finally {
    await cleanup();
  }
}

const HANDWRITTEN: Record<Kind, string> = {
  sqlite: 'hand-written better-sqlite3 (WAL, synchronous=FULL), event + outbox row',
  postgres: 'hand-written pg, event row + graphile-worker add_job',
};

const prefixed = (p: string, o: Record<string, string | number>) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [p + k, v]));

/**
 * The gateway's `serve` (ROLE=api) under the load, endpoint by endpoint, each answer checked as
 * committed: this checkout's build, or another commit's (`before`, bench/before.ts).
 */
async function measureGateway(
  kind: Kind,
  before: BeforeBuild | null,
  baseline: Record<Endpoint, LoadResult>,
  hand: LoadResult,
): Promise<{ figures: Record<string, string | number>; rps: Record<Endpoint, number>; committed: boolean }> {
  const figures: Record<string, string | number> = {};
  const rps = {} as Record<Endpoint, number>;
  let committed = true;
  const label = before ? `${kind} at ${before.sha}` : kind;
  const b = await freshDatabase(kind, !before);
  try {
    const key = before ? await loadBeforeProject(before, b) : (await loadBenchProject(b)).key;
    const gw = await spawnGateway('serve', { DATABASE_URL: b.url, ROLE: 'api' }, `accept-${kind}`, before?.cli);
    const idle = gw.rssMb();
    figures.idle_rss_mb = Math.round(idle);
    log(`${label.padEnd(9)} serve (ROLE=api, ${RUNTIME}) idle RSS ${idle.toFixed(0)} MiB after start`);
    try {
      for (const e of ENDPOINTS) {
        const r = await hammer(gw.port, e, key, true, gw);
        const v = await verifyCommitted(b, e, r);
        committed &&= v.ok;
        rps[e] = r.rps;
        const ratio = r.rps / baseline[e].rps;
        const vsHand = e === 'transactional' ? r.rps / hand.rps : NaN;
        log(
          `${label.padEnd(9)} ${e.padEnd(14)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  ratio ${ratio.toFixed(2)}  ` +
            (e === 'transactional' ? `vs hand-written ${vsHand.toFixed(2)}  ` : '') +
            `CPU ${r.cpuUs.toFixed(0)} us/req  ` +
            `non-2xx ${r.non2xx} errors ${r.errors}  committed: ${v.ok ? 'all' : `MISSING events ${v.missing} e-mails ${v.emailsMissing}`} (${r.eventIds.length} checked)  (${load1()})`,
        );
        const short = e === 'transactional' ? 'tx' : 'order';
        figures[`${short}_rps`] = Math.round(r.rps);
        figures[`${short}_p50_ms`] = r.p50;
        figures[`${short}_p99_ms`] = r.p99;
        figures[`${short}_ratio`] = Number(ratio.toFixed(2));
        figures[`${short}_cpu_us`] = Math.round(r.cpuUs);
        if (e === 'transactional') figures.tx_vs_hand = Number(vsHand.toFixed(2));
        figures[`${short}_non2xx`] = r.non2xx;
      }
    } finally {
      const rss = await gw.stop();
      figures.peak_rss_mb = Math.round(rss);
      log(`${label.padEnd(9)} serve (ROLE=api, ${RUNTIME}) peak RSS ${rss.toFixed(0)} MiB`);
    }
  } finally {
    await b.cleanup();
  }
  return { figures, rps, committed };
}

export async function runAccept(kinds: Kind[] = KINDS): Promise<Record<string, string | number>> {
  log(`== accept path: ${CONNECTIONS} connections, ${DURATION_S} s per run (+${WARMUP_S} s warm-up); ${machine()}`);
  const out: Record<string, string | number> = {};

  // Baseline: bare Fastify parsing the same bodies, same machine, same run.
  const port = await freePort();
  const base = await spawnNode('bench/baseline-server.ts', [], { PORT: String(port) }, { port, name: 'baseline' });
  const baseline = {} as Record<Endpoint, LoadResult>;
  for (const e of ENDPOINTS) {
    const r = await hammer(port, e, 'none', false, base);
    baseline[e] = r;
    log(
      `baseline  ${e.padEnd(14)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  CPU ${r.cpuUs.toFixed(0)} us/req  non-2xx ${r.non2xx}  (${load1()})`,
    );
  }
  const baseRss = await base.stop();
  log(`baseline  peak RSS ${baseRss.toFixed(0)} MiB`);
  if (baseline.transactional) out.baseline_tx_rps = Math.round(baseline.transactional.rps);
  if (baseline['order-created']) out.baseline_order_rps = Math.round(baseline['order-created'].rps);

  // The hand-written alternatives, transactional send only (the table of issue 18).
  const hand = {} as Record<Kind, LoadResult & { cpuUs: number }>;
  for (const kind of kinds) {
    const r = await handwritten(kind);
    hand[kind] = r;
    const tag = kind === 'sqlite' ? 'sqlite' : 'pg';
    log(
      `hand-written ${kind.padEnd(8)} transactional ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  ` +
        `CPU ${r.cpuUs.toFixed(0)} us/req  non-2xx ${r.non2xx} errors ${r.errors}  peak RSS ${r.rssMb.toFixed(0)} MiB  [${HANDWRITTEN[kind]}]  (${load1()})`,
    );
    out[`hand_${tag}_tx_rps`] = Math.round(r.rps);
    out[`hand_${tag}_tx_p99_ms`] = r.p99;
    out[`hand_${tag}_tx_cpu_us`] = Math.round(r.cpuUs);
  }

  let allCommitted = true;
  const before = BEFORE_REF ? buildBefore(BEFORE_REF) : null;
  for (const kind of kinds) {
    const tag = kind === 'sqlite' ? 'sqlite' : 'pg';
    const after = await measureGateway(kind, null, baseline, hand[kind]);
    allCommitted &&= after.committed;
    Object.assign(out, prefixed(`${tag}_`, after.figures));
    if (!before) continue;
    // The same load on the gateway as it was at BENCH_BEFORE, right after, on the same machine.
    const was = await measureGateway(kind, before, baseline, hand[kind]);
    allCommitted &&= was.committed;
    Object.assign(out, prefixed(`${tag}_before_`, was.figures));
    for (const e of ENDPOINTS) {
      const short = e === 'transactional' ? 'tx' : 'order';
      out[`${tag}_${short}_vs_before`] = Number((after.rps[e] / was.rps[e]).toFixed(2));
      log(
        `${kind.padEnd(9)} ${e.padEnd(14)} this checkout / ${before.sha}: ${(after.rps[e] / was.rps[e]).toFixed(2)}×`,
      );
    }
  }
  out.load_avg = loadavg()[0].toFixed(2);
  // Peak RSS is mostly V8 letting the heap grow under a high allocation rate (the live heap after a
  // full GC is ~30 MB). The same load with the heap capped as docs/performance.md recommends:
  for (const kind of TUNED_RUNS ? kinds : []) {
    const b = await freshDatabase(kind);
    try {
      const demo = await loadBenchProject(b);
      const gw = await spawnGateway(
        'serve',
        { DATABASE_URL: b.url, ROLE: 'api', NODE_OPTIONS: TUNED },
        `accept-${kind}-tuned`,
      );
      const tag = kind === 'sqlite' ? 'sqlite' : 'pg';
      try {
        const r = await hammer(gw.port, 'transactional', demo.key, false);
        log(`${kind.padEnd(9)} transactional with NODE_OPTIONS="${TUNED}": ${r.rps.toFixed(0)} req/s  p99 ${r.p99} ms`);
        out[`${tag}_tuned_tx_rps`] = Math.round(r.rps);
      } finally {
        const rss = await gw.stop();
        out[`${tag}_tuned_peak_rss_mb`] = Math.round(rss);
        log(`${kind.padEnd(9)} serve (ROLE=api) peak RSS with the heap capped ${rss.toFixed(0)} MiB`);
      }
    } finally {
      await b.cleanup();
    }
  }
  out.all_committed = allCommitted ? 'yes' : 'NO';
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await runAccept();
  log(summary('accept', figures));
}
