// Impact-check bench (SPEC §16): a template change routed to course_paid is checked against the project's
// accepted requests of the last 7 days. With 100,000 such requests stored (one in ten lacking the newly
// required member) and as many of another event type beside them, the time of the check (one query per
// event type, the payloads read and tested in the process). Baseline in the same run: counting those same
// rows with one SQL count(*), the least any check of them can cost.
import { sql } from 'kysely';
import { countImpact } from '../src/services/impact.js';
import { freshDatabase, KINDS, log, percentile, QUICK, type BenchDb } from './lib.js';
import { series } from './seed.js';

const EVENTS = Number(process.env.BENCH_IMPACT_EVENTS) || (QUICK ? 20_000 : 100_000);
const REPEAT = QUICK ? 3 : 7;

async function seed(b: BenchDb, projectId: number, eventType: string, n: number, now: number): Promise<void> {
  // Spread over the last 6 days in arrival order, as a log grows; every tenth request has no course_name.
  await sql`
    insert into events (project_id, endpoint, event_type, email, http_status, accepted, payload, effects, created_at)
    select ${projectId}, 'transactional', ${eventType}, 'u' || g.i || '@example.com', 200, 1,
      '{"event_type":"' || ${eventType} || '","email":"u' || g.i || '@example.com","fields":{' ||
        case when g.i % 10 = 0 then '' else '"course_name":"Курс ' || g.i || '"' end || '}}',
      '{}', cast(${now} as bigint) - cast((${n} - g.i) as bigint) * ${Math.floor(518_400_000 / n)}
    from (${series(b, n)}) as g`.execute(b.db.db);
}

async function time(run: () => Promise<unknown>): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  return percentile(
    ms.sort((a, b) => a - b),
    50,
  );
}

export async function runImpact(): Promise<Record<string, string | number>> {
  const out: Record<string, string | number> = { events: EVENTS };
  for (const kind of KINDS) {
    const b = await freshDatabase(kind);
    try {
      const now = Date.now();
      const p = await b.db.db
        .insertInto('projects')
        .values({
          site_key: 'impact',
          name: 'Impact',
          from_email: 'noreply@impact.example',
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await seed(b, p.id, 'course_paid', EVENTS, now);
      await seed(b, p.id, 'contest_results', EVENTS, now);
      if (kind === 'postgres') await sql`analyze events`.execute(b.db.db);
      const draft = {
        endpoint: 'transactional' as const,
        event_type: 'course_paid',
        template_key: 'paid',
        newly_required: ['fields.course_name'],
      };
      let result = await countImpact(b.db.db, p.id, [draft], now);
      const impactMs = await time(async () => (result = await countImpact(b.db.db, p.id, [draft], now)));
      const countMs = await time(() =>
        b.db.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('project_id', '=', p.id)
          .where('event_type', '=', 'course_paid')
          .where('created_at', '>=', now - 7 * 24 * 3600_000)
          .where('accepted', '=', 1)
          .executeTakeFirst(),
      );
      log(
        `impact [${kind}]: ${result[0].would_fail_7d} of ${result[0].requests_7d} would fail; ` +
          `check ${impactMs.toFixed(1)} ms (median of ${REPEAT}), baseline count(*) ${countMs.toFixed(1)} ms`,
      );
      out[`${kind}_check_ms`] = Number(impactMs.toFixed(1));
      out[`${kind}_count_ms`] = Number(countMs.toFixed(1));
    } finally {
      await b.cleanup();
    }
  }
  return out;
}
