// Lag bench: how late e-mails that are due now leave (sent_at − due_at) while the accept path is under
// load. One `serve` process with the default role (API and worker together, capture transport) takes
// transactional sends with Prefer: respond-async:
//   saturated  64 connections as fast as the server answers (the accept bench's load), for D seconds;
//   steady     a fixed rate (BENCH_LAG_RATE, default 500 requests/s) for D seconds: normal load.
// After each phase the bench waits until every e-mail of the phase has left, then reads the lags.
// Baseline in the same run: the lag the worker alone achieves for the same number of e-mails made due
// at once with no HTTP load (what the worker's polling and batching cost by themselves).
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import {
  freshDatabase,
  KINDS,
  load,
  loadBenchProject,
  log,
  machine,
  percentile,
  QUICK,
  sleep,
  spawnGateway,
  summary,
  type BenchDb,
  type Kind,
} from './lib.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S) || (QUICK ? 3 : 10);
const RATE = Number(process.env.BENCH_LAG_RATE) || 500;

function txBody(run: string) {
  return (i: number) =>
    JSON.stringify({
      event_type: 'contest_results',
      email: `lag${i % 5000}@example.com`,
      name: `Reader ${i % 5000}`,
      idempotency_key: `${run}-${i}`,
      fields: { event_title: 'Spring contest', work_title: `Work ${i}`, place: '2' },
    });
}

interface Lags {
  n: number;
  p50: number;
  p99: number;
  max: number;
  pending: number;
}

/** Lags (ms) of the e-mails created in [from, to), once all of them have left (or 120 s passed). */
async function lags(b: BenchDb, from: number, to: number): Promise<Lags> {
  const deadline = Date.now() + 120_000;
  let pending: number;
  for (;;) {
    const r = await b.db.db
      .selectFrom('scheduled_emails')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .where('status', 'in', ['queued', 'scheduled', 'sending'])
      .executeTakeFirstOrThrow();
    pending = Number(r.n);
    if (pending === 0 || Date.now() > deadline) break;
    await sleep(250);
  }
  const rows = await b.db.db
    .selectFrom('scheduled_emails')
    .select(sql<number>`sent_at - due_at`.as('lag'))
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .where('status', '=', 'sent')
    .execute();
  const sorted = rows.map((r) => Number(r.lag)).sort((a, c) => a - c);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    pending,
  };
}

async function phase(b: BenchDb, port: number, key: string, name: string, rate?: number) {
  const run = randomBytes(4).toString('hex');
  const from = Date.now();
  const r = await load({
    url: `http://127.0.0.1:${port}/api/scoped/send/transactional`,
    headers: { 'x-api-key': key, prefer: 'respond-async' },
    body: txBody(run),
    connections: 64,
    durationS: DURATION_S,
    ...(rate ? { overallRate: rate } : {}),
  });
  const to = Date.now() + 1;
  const l = await lags(b, from, to);
  log(
    `${b.kind.padEnd(9)} ${name.padEnd(10)} ${r.rps.toFixed(0).padStart(6)} req/s accepted (p99 ${r.p99} ms)  lag over ${l.n} e-mails: p50 ${l.p50} ms  p99 ${l.p99} ms  max ${l.max} ms${l.pending ? `  STILL PENDING ${l.pending}` : ''}`,
  );
  return { rps: r.rps, ...l };
}

export async function runLag(kinds: Kind[] = KINDS): Promise<Record<string, string | number>> {
  log(
    `== lag: serve (API + worker, capture transport), ${DURATION_S} s saturated then ${DURATION_S} s at ${RATE} req/s; ${machine()}`,
  );
  const out: Record<string, string | number> = {};
  for (const kind of kinds) {
    const b = await freshDatabase(kind);
    const tag = kind === 'sqlite' ? 'sqlite' : 'pg';
    try {
      const demo = await loadBenchProject(b);
      const gw = await spawnGateway('serve', { DATABASE_URL: b.url }, `lag-${kind}`);
      try {
        const base = await workerOnlyLag(b, demo.projectId);
        log(
          `${kind.padEnd(9)} baseline   ${String(base.n).padStart(6)} e-mails due at once, no HTTP load: lag p50 ${base.p50} ms  p99 ${base.p99} ms`,
        );
        out[`${tag}_baseline_p99_ms`] = base.p99;
        const sat = await phase(b, gw.port, demo.key, 'saturated');
        await sleep(1000);
        const steady = await phase(b, gw.port, demo.key, 'steady', RATE);
        out[`${tag}_saturated_rps`] = Math.round(sat.rps);
        out[`${tag}_saturated_lag_p50_ms`] = sat.p50;
        out[`${tag}_saturated_lag_p99_ms`] = sat.p99;
        out[`${tag}_steady_rps`] = Math.round(steady.rps);
        out[`${tag}_steady_lag_p50_ms`] = steady.p50;
        out[`${tag}_steady_lag_p99_ms`] = steady.p99;
      } finally {
        const rss = await gw.stop();
        out[`${tag}_serve_peak_rss_mb`] = Math.round(rss);
        log(`${kind.padEnd(9)} serve (API + worker) peak RSS ${rss.toFixed(0)} MiB`);
      }
    } finally {
      await b.cleanup();
    }
  }
  return out;
}

/** 1,000 e-mails inserted due now while nothing else runs; the worker finds them by polling. */
async function workerOnlyLag(b: BenchDb, projectId: number): Promise<Lags> {
  const { contestTemplate, seedContacts, seedEmails } = await import('./seed.js');
  const t = await contestTemplate(b, projectId);
  await seedContacts(b, projectId, 1000, 'burst');
  const from = Date.now();
  await seedEmails(b, {
    projectId,
    templateId: t.id,
    templateKey: t.name,
    contactPrefix: 'burst',
    status: 'queued',
    dueAt: from,
  });
  return lags(b, from - 1, Date.now() + 1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await runLag();
  log(summary('lag', figures));
}
