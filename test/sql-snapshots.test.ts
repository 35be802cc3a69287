// SQL that relies on an index, compiled by Kysely for each dialect and compared with the committed
// snapshots in test/sql/: a change to these statements shows in review as a diff of SQL, where a lost
// index (a predicate no longer matching a partial index, a column order changed) can be seen. Refresh
// the files with UPDATE_SQL_SNAPSHOTS=1 after a deliberate change.
//
// Each repository function runs against a Kysely whose driver records the compiled queries instead of
// sending them (answering with canned rows where the function reads before it writes), so what is
// compared is exactly what the function sends. On PostgreSQL the claim's plan is checked too.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { Dialect } from '../src/db/index.js';
import type { Database } from '../src/db/schema.js';
import { upsertContactsMany } from '../src/repos/contacts.js';
import type { NewEmail, NewEvent } from '../src/db/schema.js';
import { sqliteAcceptStatements } from '../src/repos/acceptSqlite.js';
import { insertAcceptedMany, listEvents } from '../src/repos/events.js';
import type { NewIdempotencyRecord } from '../src/repos/idempotency.js';
import { insertUnpaidOrdersMany } from '../src/repos/orders.js';
import { claimDue, finishes, finishMany, nextDueAt } from '../src/repos/outbox.js';
import { reserveIds } from '../src/repos/setBased.js';
import { openTestDb, PG_URL, seedProject, type TestDb } from './fixtures/delivery-support.js';

const DIR = join(import.meta.dirname, 'sql');
const UPDATE = process.env.UPDATE_SQL_SNAPSHOTS === '1';

/** A Kysely for the dialect whose driver keeps the compiled queries; `answer` gives a query's rows. */
function recording(dialect: Dialect, answer: (q: CompiledQuery) => unknown[] = () => []) {
  const queries: CompiledQuery[] = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
      queries.push(q);
      return { rows: answer(q) as R[] };
    },
    // eslint-disable-next-line require-yield
    async *streamQuery() {
      throw new Error('not used');
    },
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: async () => {},
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const pg = dialect === 'postgres';
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => (pg ? new PostgresAdapter() : new SqliteAdapter()),
      createDriver: () => driver,
      createIntrospector: (k) => (pg ? new PostgresIntrospector(k) : new SqliteIntrospector(k)),
      createQueryCompiler: () => (pg ? new PostgresQueryCompiler() : new SqliteQueryCompiler()),
    },
  });
  return { db, queries };
}

const NOW = 1_800_000_000_000;

interface Case {
  name: string;
  dialects: Dialect[];
  run(db: Kysely<Database>, dialect: Dialect): Promise<unknown>;
  answer?: (q: CompiledQuery) => unknown[];
}

const BOTH: Dialect[] = ['sqlite', 'postgres'];
const PG_ONLY: Dialect[] = ['postgres'];

const EMAIL: NewEmail & { id: number } = {
  id: 1,
  project_id: 1,
  kind: 'transactional' as const,
  template_id: 1,
  template_key: 't',
  contact_id: 1,
  to_email: 'a@example.com',
  to_name: null,
  order_id: null,
  event_id: 1,
  campaign_id: null,
  chain_step: null,
  context: '{}',
  status: 'queued' as const,
  due_at: NOW,
  attempts: 0,
  created_at: NOW,
  updated_at: NOW,
};
const EVENT: NewEvent & { id: number } = {
  id: 1,
  project_id: 1,
  key_id: 1,
  key_last4: 'abcd',
  endpoint: 'transactional',
  event_type: 'contest_results',
  email: 'a@example.com',
  order_id: null,
  idempotency_key: 'k',
  http_status: 200,
  accepted: true,
  error_code: null,
  payload: '{}',
  effects: '{}',
  created_at: NOW,
};
const RECORD: NewIdempotencyRecord = {
  project_id: 1,
  idempotency_key: 'k',
  request_hash: 'h',
  endpoint: 'transactional',
  response_status: 200,
  response_body: '{}',
  event_id: 1,
  created_at: NOW,
};

const CASES: Case[] = [
  {
    name: 'outbox-claim',
    dialects: BOTH,
    run: (db, dialect) => claimDue(db, dialect, { workerId: 'w1', now: NOW, leaseMs: 60_000, limit: 200 }),
  },
  {
    name: 'outbox-next-due',
    dialects: BOTH,
    run: (db) => nextDueAt(db),
  },
  {
    name: 'outbox-finish-many',
    dialects: BOTH,
    run: (db) =>
      finishMany(db, 'w1', [
        finishes.sent(1, { now: NOW, rendered: '{}', messageId: '<1@x>' }),
        finishes.retry(2, { now: NOW, dueAt: NOW + 60_000, error: '451 later' }),
      ]),
  },
  {
    name: 'events-chronology-by-order',
    dialects: BOTH,
    run: (db) => listEvents(db, { projectId: 1, orderId: 'o-1', order: 'desc', limit: 50, cursor: null }),
  },
  {
    name: 'batch-reserve-ids',
    dialects: PG_ONLY,
    run: (db) => reserveIds(db, { events: 3, scheduled_emails: 5 }),
    answer: () => [{ events: [1, 2, 3], scheduled_emails: [1, 2, 3, 4, 5] }],
  },
  {
    name: 'batch-upsert-contacts',
    dialects: PG_ONLY,
    // a renamed by the upsert, b known and left as it was: the upsert and the read of b are both sent.
    run: (db) =>
      upsertContactsMany(db, [
        { project_id: 1, email: 'a@example.com', name: 'Anna', now: NOW },
        { project_id: 1, email: 'b@example.com', name: null, now: NOW },
      ]),
    answer: (q) =>
      q.sql.includes('select c.id')
        ? [{ id: 2, project_id: 1, email: 'b@example.com', name: 'Bea', status: 'active' }]
        : [{ id: 1, project_id: 1, email: 'a@example.com', name: 'Anna', status: 'active' }],
  },
  {
    name: 'batch-insert-orders',
    dialects: PG_ONLY,
    run: (db) =>
      insertUnpaidOrdersMany(db, [
        {
          project_id: 1,
          order_id: 'o-1',
          cart_type: 'course',
          contact_id: 1,
          course_name: null,
          event_id: 1,
          now: NOW,
        },
      ]),
  },
  {
    name: 'batch-insert-accepted',
    dialects: PG_ONLY,
    run: (db) => insertAcceptedMany(db, { emails: [EMAIL], events: [EVENT], records: [RECORD] }),
  },
  // The accept path's own statements on SQLite (repos/acceptSqlite.ts), in the order a new order runs them.
  {
    name: 'accept-statements',
    dialects: ['sqlite'],
    answer: (q) =>
      q.sql.includes('sqlite_sequence') ? [{ events: 1, scheduled_emails: 1 }] : [{ id: 1, status: 'active' }],
    run: async (db) => {
      const s = sqliteAcceptStatements;
      await s.upsertContacts(db, [{ project_id: 1, email: 'a@example.com', name: 'Anna', now: NOW }]);
      await s.reserveIds(db, { events: 1, scheduled_emails: 1 });
      await s.insertUnpaidOrders(db, [
        {
          project_id: 1,
          order_id: 'o-1',
          cart_type: 'course',
          contact_id: 1,
          course_name: null,
          event_id: 1,
          now: NOW,
        },
      ]);
      await s.writeAccepted(db, { emails: [EMAIL], events: [EVENT], records: [RECORD] });
    },
  },
];

/** The statements as a snapshot file: each one's SQL, whitespace as written, and its parameter count. */
function render(queries: readonly CompiledQuery[]): string {
  return queries.map((q) => `-- ${q.parameters.length} parameters\n${q.sql.trim()};\n`).join('\n');
}

describe('SQL snapshots (test/sql/*.sql)', () => {
  for (const c of CASES) {
    for (const dialect of c.dialects) {
      it(`${c.name} on ${dialect}`, async () => {
        const { db, queries } = recording(dialect, c.answer);
        await c.run(db, dialect);
        assert.ok(queries.length > 0, 'the function sent SQL');
        const file = join(DIR, `${c.name}.${dialect}.sql`);
        const text = render(queries);
        if (UPDATE) return writeFileSync(file, text);
        assert.ok(existsSync(file), `${file} is missing: run with UPDATE_SQL_SNAPSHOTS=1 and commit it`);
        assert.equal(text, readFileSync(file, 'utf8'), `${file} differs: review, then UPDATE_SQL_SNAPSHOTS=1`);
      });
    }
  }
});

describe(
  'the claim uses its partial indexes (PostgreSQL)',
  { skip: PG_URL ? false : 'TEST_DATABASE_URL is not set' },
  () => {
    let t: TestDb;
    before(async () => {
      t = await openTestDb('postgres');
      const { projectId, templateId } = await seedProject(t.db);
      const contact = await t.db.db
        .insertInto('contacts')
        .values({
          project_id: projectId,
          email: 'a@example.com',
          name: null,
          fields: '{}',
          status: 'active',
          created_at: NOW,
          updated_at: NOW,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      // An outbox with history: 50,000 finished e-mails, a few hundred pending (some due), a few sending.
      // With real proportions and fresh statistics the planner's choice is the one production gets (no
      // enable_seqscan games).
      await sql`
      insert into scheduled_emails (project_id, kind, template_id, template_key, contact_id, to_email, context,
        status, due_at, attempts, locked_by, locked_until, created_at, updated_at)
      select ${projectId}, 'transactional', ${templateId}, 't', ${contact.id}, 'a@example.com', '{}',
        case when i <= 300 then (case when i % 2 = 0 then 'scheduled' else 'queued' end)
             when i <= 320 then 'sending' else 'sent' end,
        ${NOW}::bigint - 3600000 + i * 1000, 0,
        case when i > 300 and i <= 320 then 'w0' end,
        case when i > 300 and i <= 320 then ${NOW}::bigint + (i - 310) * 1000 end,
        ${NOW}::bigint, ${NOW}::bigint
      from generate_series(1, 50300) as i`.execute(t.db.db);
      await sql`analyze scheduled_emails`.execute(t.db.db);
    });
    after(async () => t?.cleanup());

    /** EXPLAIN of what the function sends, with its parameters (the plan the server would run). */
    async function plan(run: (db: Kysely<Database>) => Promise<unknown>): Promise<string[]> {
      const { db, queries } = recording('postgres');
      await run(db);
      const plans = [];
      for (const q of queries) {
        const res = await t.db.db.executeQuery<{ 'QUERY PLAN': unknown }>(
          CompiledQuery.raw(`explain (format json) ${q.sql}`, [...q.parameters]),
        );
        plans.push(JSON.stringify(res.rows[0]['QUERY PLAN']));
      }
      return plans;
    }

    it('claim: pending rows per project through emails_pending_project_due, expired leases through emails_sending_lease, no full scan of the outbox', async () => {
      const [claim] = await plan((db) =>
        claimDue(db, 'postgres', { workerId: 'w1', now: NOW, leaseMs: 60_000, limit: 200, skipProjects: [7] }),
      );
      // Which of the two partial indexes of pending rows serves the per-project probe depends on the
      // statistics (emails_pending_project_due once a project has a backlog); never the table itself.
      assert.match(claim, /"Index Name":"emails_pending_(project_)?due"/, claim);
      assert.match(claim, /"Index Name":"emails_sending_lease"/, claim);
      // The fair claim walks the projects (a small table) and probes the outbox once per project.
      assert.doesNotMatch(claim, /"Seq Scan"[^}]*"Relation Name":"scheduled_emails"/, claim);
    });

    it('the next due time reads the same two partial indexes', async () => {
      const plans = await plan((db) => nextDueAt(db));
      assert.equal(plans.length, 2);
      assert.match(plans.join('\n'), /emails_pending_due/);
      assert.match(plans.join('\n'), /emails_sending_lease/);
      for (const p of plans) assert.doesNotMatch(p, /"Node Type":"Seq Scan"/, p);
    });
  },
);
