// Tracking bench (SPEC §17): how many click redirects a second one `serve` process answers (API and
// worker together, as installed by default), against bare Fastify answering a 302 in the same run, and
// the lag until a hit is counted (processed_at − at: batched INSERT, then folded by the tracking worker).
// The tokens name 100 real e-mails and are checked and recorded exactly as in production.
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { signClick, trackingKey } from '../src/domain/trackingTokens.js';
import {
  freePort,
  freshDatabase,
  KINDS,
  loadBenchProject,
  log,
  percentile,
  QUICK,
  sleep,
  spawnGateway,
  spawnNode,
  type Child,
  type Kind,
} from './lib.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S) || (QUICK ? 3 : 10);
// Not measured: the JIT warms up first (a cold process answers a fraction of its steady rate).
const WARMUP_S = QUICK ? 2 : 3;
const CONNECTIONS = 64;
const SECRET = 'bench-tracking-secret-0123456789abcdef';
const PUBLIC_URL = 'https://track.bench.test';
const EMAILS = 100;

async function hammer(port: number, paths: string[], child: Child, durationS = DURATION_S) {
  const cpu0 = child.cpuSeconds();
  let i = 0;
  const r = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: durationS,
    requests: [
      {
        method: 'GET',
        headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0 Safari/537.36' },
        setupRequest: (req: any) => ({ ...req, path: paths[i++ % paths.length] }),
      },
    ],
  });
  const n = r.requests.total;
  return {
    requests: n,
    rps: n / durationS,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non3xx: n - (r['3xx'] ?? 0),
    cpuUs: ((child.cpuSeconds() - cpu0) * 1e6) / Math.max(1, n),
  };
}

async function gatewayRun(kind: Kind) {
  const b = await freshDatabase(kind);
  try {
    const demo = await loadBenchProject(b);
    const db = b.db.db;
    const tpl = await db
      .selectFrom('templates')
      .select(['id', 'name'])
      .where('project_id', '=', demo.projectId)
      .executeTakeFirstOrThrow();
    const now = Date.now();
    const contact = await db
      .insertInto('contacts')
      .values({
        project_id: demo.projectId,
        email: 'bench@example.com',
        name: 'B',
        fields: '{}',
        status: 'active',
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const key = trackingKey(SECRET);
    const paths: string[] = [];
    for (let i = 0; i < EMAILS; i++) {
      const e = await db
        .insertInto('scheduled_emails')
        .values({
          project_id: demo.projectId,
          kind: 'transactional',
          template_id: tpl.id,
          template_key: tpl.name,
          contact_id: contact.id,
          to_email: 'bench@example.com',
          to_name: null,
          order_id: null,
          event_id: null,
          campaign_id: null,
          chain_step: null,
          context: '{}',
          status: 'sent',
          due_at: now,
          attempts: 1,
          last_error: null,
          locked_by: null,
          locked_until: null,
          sent_at: now,
          message_id: null,
          rendered: null,
          cancelled_by_event_id: null,
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      for (const position of [0, 1])
        paths.push(
          `/c/${signClick(key, { emailId: e.id, projectId: demo.projectId, position, sentAt: Math.floor(now / 1000) - 60, url: `https://site.example/course/${i}?step=${position}&utm_source=mail#pay` })}`,
        );
    }
    const gw = await spawnGateway(
      'serve',
      { DATABASE_URL: b.url, SECRET_KEY: SECRET, PUBLIC_URL, TRACKING_MIN_DELAY_MS: '0' },
      `tracking-${kind}`,
    );
    try {
      const warm = await hammer(gw.port, paths, gw, WARMUP_S);
      const r = await hammer(gw.port, paths, gw);
      r.requests += warm.requests; // every hit of both runs is awaited below
      // Lag: until every hit of the run is written and folded (or 60 s).
      const deadline = Date.now() + 60_000;
      let counted = 0;
      let pending = 0;
      for (;;) {
        const c = await sql<{
          n: number;
          pending: number;
        }>`select count(*) as n, sum(case when processed_at is null then 1 else 0 end) as pending from tracking_hits`.execute(
          db,
        );
        counted = Number(c.rows[0].n);
        pending = Number(c.rows[0].pending ?? 0);
        if ((counted >= r.requests - r.non3xx && pending === 0) || Date.now() > deadline) break;
        await sleep(100);
      }
      const lags = (
        await sql<{
          lag: number;
        }>`select processed_at - at as lag from tracking_hits where processed_at is not null`.execute(db)
      ).rows
        .map((x) => Number(x.lag))
        .sort((a, c) => a - c);
      const folded = await db
        .selectFrom('email_engagement')
        .select(sql<number>`sum(clicks)`.as('n'))
        .executeTakeFirstOrThrow();
      const rss = await gw.stop();
      return {
        ...r,
        counted,
        pending,
        folded: Number(folded.n ?? 0),
        lagP50: percentile(lags, 50),
        lagP99: percentile(lags, 99),
        lagMax: lags.at(-1) ?? NaN,
        rss,
      };
    } finally {
      await gw.stop();
    }
  } finally {
    await b.cleanup();
  }
}

export async function runTracking(kinds: Kind[] = KINDS): Promise<Record<string, string | number>> {
  log(
    `== tracking: GET /c/{token} (302), ${CONNECTIONS} connections, ${DURATION_S} s per run (+${WARMUP_S} s warm-up)`,
  );
  const out: Record<string, string | number> = {};
  const port = await freePort();
  const base = await spawnNode('bench/baseline-server.ts', [], { PORT: String(port) }, { port, name: 'baseline' });
  await hammer(port, ['/c/x'], base, WARMUP_S);
  const b = await hammer(port, ['/c/x'], base);
  await base.stop();
  log(
    `baseline  bare Fastify 302   ${b.rps.toFixed(0).padStart(6)} redirects/s  p50 ${b.p50} ms  p99 ${b.p99} ms  CPU ${b.cpuUs.toFixed(0)} us/req`,
  );
  out.baseline_rps = Math.round(b.rps);
  for (const kind of kinds) {
    const r = await gatewayRun(kind);
    const tag = kind === 'sqlite' ? 'sqlite' : 'pg';
    log(
      `${kind.padEnd(9)} gateway /c/ ${r.rps.toFixed(0).padStart(6)} redirects/s (${((100 * r.rps) / b.rps).toFixed(0)} % of baseline)  p50 ${r.p50} ms  p99 ${r.p99} ms  CPU ${r.cpuUs.toFixed(0)} us/req  non-3xx ${r.non3xx}`,
    );
    log(
      `${kind.padEnd(9)} hits written ${r.counted}, folded ${r.folded}, pending ${r.pending}; lag until counted p50 ${r.lagP50} ms  p99 ${r.lagP99} ms  max ${r.lagMax} ms; peak RSS ${r.rss.toFixed(0)} MiB`,
    );
    out[`${tag}_rps`] = Math.round(r.rps);
    out[`${tag}_p99_ms`] = r.p99;
    out[`${tag}_lag_p50_ms`] = r.lagP50;
    out[`${tag}_lag_p99_ms`] = r.lagP99;
    out[`${tag}_unfolded`] = r.counted - r.folded;
  }
  return out;
}
