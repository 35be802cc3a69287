// Statements per event on PostgreSQL (issue 29, the capacity estimate in docs/performance.md): counts every
// statement the gateway sends through pg (BEGIN and COMMIT included) while N transactional events are
// accepted (64 in flight, through the HTTP layer) and then while the worker delivers them (capture
// transport), and the rows each phase wrote (pg_stat_user_tables of the test schema).
// `TEST_DATABASE_URL=… npx tsx bench/statements.ts [N]`
import pg from 'pg';
import { createWorker } from '../src/delivery/worker.js';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createTestApp, keyCall, setupProject } from '../test/support/harness.js';

let statements = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements++;
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

const N = Number(process.argv[2]) || 2000;
const t = await createTestApp('postgres');
const { key } = await setupProject(t.app);
const rows = async () => {
  await t.deps.db.db.executeQuery({ sql: 'select pg_stat_force_next_flush()', parameters: [] } as never);
  const r = await t.deps.db.db.executeQuery<{ n: string }>({
    sql: `select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) as n from pg_stat_user_tables
          where schemaname = current_schema()`,
    parameters: [],
  } as never);
  return Number(r.rows[0].n);
};
const rows0 = await rows();
const s0 = statements;
let next = 0;
await Promise.all(
  Array.from({ length: 64 }, async () => {
    while (next < N) {
      const i = next++;
      const r = await keyCall(
        t.app,
        key,
        'POST',
        '/api/scoped/send/transactional',
        {
          event_type: 'contest_results',
          email: `p${i}@example.org`,
          name: `P ${i}`,
          fields: { event_title: 'Spring', work_title: `Work ${i}`, place: '1' },
        },
        { prefer: 'respond-async' },
      );
      if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    }
  }),
);
const s1 = statements;
const rows1 = await rows();
const worker = createWorker({
  db: t.deps.db,
  transport: createCaptureTransport(),
  clock: t.clock,
  publicUrl: 'https://mail.example.test',
  secret: 's'.repeat(32),
});
let sent = 0;
for (let n; (n = await worker.runOnce()) > 0;) sent += n;
const s2 = statements;
const rows2 = await rows();
console.log(
  `statements per event: accept ${((s1 - s0 - 4) / N).toFixed(2)}, delivery ${((s2 - s1 - 4) / sent).toFixed(2)} ` +
    `(${sent} e-mails, claims of 200); rows written per event: accept ${((rows1 - rows0) / N).toFixed(1)}, ` +
    `delivery ${((rows2 - rows1) / sent).toFixed(1)}`,
);
await t.close();
