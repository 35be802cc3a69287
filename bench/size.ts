// Size bench: with 1,000,000 rows in the outbox and 5,000,000 in the event log (generated set-based:
// generate_series on PostgreSQL, a recursive CTE on SQLite), the time of the worker's claim query and of
// the chronology of one order_id (with and without site_key, as the admin API allows both), with the
// query plans. The queries are the code's own (claimDue, listEvents) through a Kysely instance that
// records their SQL for EXPLAIN.
// Outbox mix: 97% sent, 1% cancelled, 1% failed, 0.5% scheduled in the future, 0.5% due now.
// Event log: 10 projects, ~4 events per order_id (order-created, transactional, purchase, replay).
// Baseline in the same run: the same queries on an empty (freshly migrated) database.
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, sql, SqliteDialect, type LogEvent } from 'kysely';
import pg from 'pg';
import type { Database } from '../src/db/schema.js';
import { claimDue } from '../src/repos/outbox.js';
import { listEvents } from '../src/repos/events.js';
import { freshDatabase, KINDS, log, machine, percentile, QUICK, summary, type BenchDb, type Kind } from './lib.js';
import { series } from './seed.js';

const OUTBOX = Number(process.env.BENCH_OUTBOX_ROWS) || (QUICK ? 50_000 : 1_000_000);
const EVENTS = Number(process.env.BENCH_EVENT_ROWS) || (QUICK ? 200_000 : 5_000_000);
const PROJECTS = 10;
const CONTACTS = Math.min(100_000, OUTBOX);
const REPEAT = 30;

/** A second Kysely over the same database that remembers the last query it ran (for EXPLAIN). */
function recorder(b: BenchDb): { db: Kysely<Database>; last(): CompiledQuery | null; close(): Promise<void> } {
  let last: CompiledQuery | null = null;
  const logFn = (e: LogEvent) => {
    if (e.level === 'query') last = e.query;
  };
  if (b.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: b.url, max: 2 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: logFn });
    return { db, last: () => last, close: () => db.destroy() };
  }
  const conn = new SQLite(b.url.replace(/^sqlite:/, ''));
  conn.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: conn }), log: logFn });
  return { db, last: () => last, close: () => db.destroy() };
}

async function generate(
  b: BenchDb,
  outbox: number,
  events: number,
): Promise<{ orderId: string; projectId: number; seconds: number }> {
  const db = b.db.db;
  const now = Date.now();
  const t0 = Date.now();
  for (let p = 1; p <= PROJECTS; p++) {
    await db
      .insertInto('projects')
      .values({
        site_key: `site-${p}`,
        name: `Site ${p}`,
        from_email: `noreply@site${p}.example`,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
  const projectIds = (await db.selectFrom('projects').select('id').orderBy('id').execute()).map((r) => r.id);
  const first = projectIds[0];
  const tpl = await db
    .insertInto('templates')
    .values({ project_id: first, name: 'tpl', subject: 's', html: 'h', text: 't', created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  const n = (v: number) => sql.lit(v);
  const monthAgo = n(now - 30 * 86_400_000);
  const twoMonthsAgo = n(now - 60 * 86_400_000);

  // Contacts of the first project (the outbox references them).
  await sql`insert into contacts (project_id, email, name, fields, status, created_at, updated_at)
    select ${n(first)}, 'c' || g.i || '@example.com', 'Contact ' || g.i, '{}', 'active', ${n(now)}, ${n(now)} from (${series(b, CONTACTS)}) as g`.execute(
    db,
  );
  const minContact = Number(
    (
      await db
        .selectFrom('contacts')
        .select((eb) => eb.fn.min('id').as('m'))
        .executeTakeFirstOrThrow()
    ).m,
  );

  // Outbox: status by i mod 200 (194 sent, 2 cancelled, 2 failed, 1 scheduled later, 1 due now).
  const status = sql`case when g.i % 200 < 194 then 'sent' when g.i % 200 < 196 then 'cancelled' when g.i % 200 < 198 then 'failed' when g.i % 200 = 198 then 'scheduled' else 'queued' end`;
  const context = '{"event_type":"contest_results","fields":{"event_title":"Spring contest","work_title":"A study"}}';
  const rendered = JSON.stringify({
    subject: 'Anna, the results of the contest are final',
    text: 'Hello, Anna! '.repeat(12),
    html: '<p>Hello, Anna!</p>'.repeat(8),
  });
  await sql`insert into scheduled_emails (project_id, kind, template_id, template_key, contact_id, to_email, to_name, order_id, event_id,
      campaign_id, chain_step, context, status, due_at, attempts, sent_at, rendered, created_at, updated_at)
    select ${n(first)}, 'transactional', ${n(tpl.id)}, 'tpl', ${n(minContact)} + (g.i % ${n(CONTACTS)}), 'c' || (g.i % ${n(CONTACTS)}) || '@example.com', 'Anna',
      'o' || (g.i / 3), g.i, null, null, ${context}, ${status},
      case when g.i % 200 = 198 then ${n(now + 3_600_000)} + g.i when g.i % 200 = 199 then ${n(now - 1000)} else ${monthAgo} + g.i end,
      1, case when g.i % 200 < 194 then ${monthAgo} + g.i + 400 else null end,
      case when g.i % 200 < 194 then ${rendered} else null end, ${monthAgo} + g.i, ${n(now)}
    from (${series(b, outbox)}) as g`.execute(db);

  // Event log: project by i mod 10, order_id per 4 consecutive events within a project.
  const payload =
    '{"event_type":"contest_results","email":"anna@example.com","name":"Anna","fields":{"event_title":"Spring contest","work_title":"A study"}}';
  await sql`insert into events (project_id, key_id, key_last4, endpoint, event_type, email, order_id, idempotency_key, http_status, accepted,
      error_code, payload, effects, created_at)
    select ${n(first)} + (g.i % ${n(PROJECTS)}), 1, 'abcd', 'transactional', 'contest_results', 'anna' || (g.i % 50000) || '@example.com',
      'o' || (g.i / ${n(4 * PROJECTS)}), null, 200, 1, null, ${payload}, '{"scheduled_email_ids":[1]}', ${twoMonthsAgo} + g.i
    from (${series(b, events)}) as g`.execute(db);
  // Statistics and files as a maintained database would have them: analyzed (autovacuum on
  // PostgreSQL), the bulk load checkpointed (else the first timed commit pays for it).
  await sql`analyze`.execute(db);
  if (b.kind === 'postgres') await sql`checkpoint`.execute(db);
  else await sql`pragma wal_checkpoint(truncate)`.execute(db);
  // An order in the middle of the log, of the first project.
  const mid = Math.floor(events / 2 / (4 * PROJECTS)) * (4 * PROJECTS);
  return { orderId: `o${mid / (4 * PROJECTS)}`, projectId: first, seconds: (Date.now() - t0) / 1000 };
}

async function timeIt(fn: () => Promise<unknown>, times = REPEAT): Promise<{ p50: number; p95: number; max: number }> {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const t = process.hrtime.bigint();
    await fn();
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  ms.sort((a, c) => a - c);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95), max: ms[ms.length - 1] };
}

async function plan(b: BenchDb, r: ReturnType<typeof recorder>, q: CompiledQuery, analyze: boolean): Promise<string> {
  if (b.kind === 'postgres') {
    // EXPLAIN ANALYZE runs the statement: inside a transaction that is rolled back (the claim updates).
    return r.db.connection().execute(async (conn) => {
      await conn.executeQuery(CompiledQuery.raw('begin'));
      try {
        const res = await conn.executeQuery<Record<string, string>>(
          CompiledQuery.raw(`explain (${analyze ? 'analyze, buffers, ' : ''}costs off) ${q.sql}`, [...q.parameters]),
        );
        return res.rows.map((row) => Object.values(row)[0]).join('\n');
      } finally {
        await conn.executeQuery(CompiledQuery.raw('rollback'));
      }
    });
  }
  const res = await r.db.executeQuery<{ detail: string }>(
    CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]),
  );
  return res.rows.map((row) => row.detail).join('\n');
}

interface Measured {
  claim: { p50: number; p95: number; max: number };
  chronoSite: { p50: number; p95: number; max: number };
  chronoAny: { p50: number; p95: number; max: number };
  plans: Record<string, string>;
}

async function measure(b: BenchDb, orderId: string, projectId: number, withPlans: boolean): Promise<Measured> {
  const r = recorder(b);
  try {
    const now = Date.now();
    let claimed = 0;
    const claimOnce = async () => {
      const rows = await claimDue(r.db, b.kind, { workerId: `bench-${claimed}`, now, leaseMs: 60_000, limit: 50 });
      claimed += rows.length;
    };
    const chrono = (pid?: number) => () =>
      listEvents(r.db, { projectId: pid, orderId, order: 'asc', limit: 100, cursor: null });
    // Record each query's SQL (and its plan, before the timed claims take the due rows).
    const plans: Record<string, string> = {};
    let claimSql: CompiledQuery | null = null;
    await r.db
      .transaction()
      .execute(async (trx) => {
        await claimDue(trx, b.kind, { workerId: 'recorder', now, leaseMs: 60_000, limit: 50 });
        claimSql = r.last();
        throw new Error('rolled back: recording only');
      })
      .catch(() => {});
    await chrono(projectId)();
    const siteSql = r.last()!;
    await chrono(undefined)();
    const anySql = r.last()!;
    if (withPlans) {
      plans.claim = await plan(b, r, claimSql!, true);
      plans['chronology (site_key + order_id)'] = await plan(b, r, siteSql, true);
      plans['chronology (order_id only)'] = await plan(b, r, anySql, true);
    }
    await claimOnce(); // warm
    const claim = await timeIt(claimOnce);
    const chronoSite = await timeIt(chrono(projectId));
    const chronoAny = await timeIt(chrono(undefined));
    return { claim, chronoSite, chronoAny, plans };
  } finally {
    await r.close();
  }
}

export async function runSize(kinds: Kind[] = KINDS): Promise<Record<string, string | number>> {
  log(
    `== size: ${OUTBOX.toLocaleString('en')} outbox rows, ${EVENTS.toLocaleString('en')} events; each query run ${REPEAT} times; ${machine()}`,
  );
  const out: Record<string, string | number> = {};
  for (const kind of kinds) {
    const tag = kind === 'sqlite' ? 'sqlite' : 'pg';
    // Baseline: the same queries on an empty database.
    const empty = await freshDatabase(kind);
    try {
      const base = await measure(empty, 'o1', 1, false);
      log(
        `${kind.padEnd(9)} empty database: claim p50 ${base.claim.p50.toFixed(2)} ms  chronology p50 ${base.chronoSite.p50.toFixed(2)} ms (site) ${base.chronoAny.p50.toFixed(2)} ms (order only)`,
      );
      out[`${tag}_empty_claim_ms`] = Number(base.claim.p50.toFixed(2));
      out[`${tag}_empty_chronology_ms`] = Number(base.chronoSite.p50.toFixed(2));
    } finally {
      await empty.cleanup();
    }
    const b = await freshDatabase(kind);
    try {
      const g = await generate(b, OUTBOX, EVENTS);
      log(`${kind.padEnd(9)} generated in ${g.seconds.toFixed(0)} s`);
      const m = await measure(b, g.orderId, g.projectId, true);
      const show = (t: { p50: number; p95: number; max: number }) =>
        `p50 ${t.p50.toFixed(2)} ms  p95 ${t.p95.toFixed(2)} ms  max ${t.max.toFixed(2)} ms`;
      log(`${kind.padEnd(9)} claim (50 due of ${OUTBOX.toLocaleString('en')}, with its commit)  ${show(m.claim)}`);
      log(`${kind.padEnd(9)} chronology site_key+order_id            ${show(m.chronoSite)}`);
      log(`${kind.padEnd(9)} chronology order_id only                ${show(m.chronoAny)}`);
      for (const [name, p] of Object.entries(m.plans)) log(`-- ${kind} plan: ${name}\n${p}`);
      out[`${tag}_claim_ms`] = Number(m.claim.p50.toFixed(2));
      out[`${tag}_claim_p95_ms`] = Number(m.claim.p95.toFixed(2));
      out[`${tag}_claim_max_ms`] = Number(m.claim.max.toFixed(2));
      out[`${tag}_chronology_p95_ms`] = Number(m.chronoSite.p95.toFixed(2));
      out[`${tag}_chronology_ms`] = Number(m.chronoSite.p50.toFixed(2));
      out[`${tag}_chronology_order_only_ms`] = Number(m.chronoAny.p50.toFixed(2));
      out[`${tag}_generate_s`] = Math.round(g.seconds);
    } finally {
      await b.cleanup();
    }
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await runSize();
  log(summary('size', figures));
}
