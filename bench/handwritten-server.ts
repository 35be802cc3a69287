// The hand-written alternatives the accept bench compares the gateway with (issue 18): what a team would
// write for "take the transactional send, answer once it is stored" without this product. Fastify with
// a JSON schema on the body (no logger, same body limit), and per request ONE transaction writing an
// event row and the e-mail's job:
//   ENGINE=sqlite    better-sqlite3 (WAL, synchronous=FULL), an event row and an outbox row, prepared
//                    statements, the idempotency key a unique column of the event row;
//   ENGINE=postgres  pg (a pool of 10, as the gateway's), an event row and a graphile-worker job added
//                    with its own SQL function (graphile_worker.add_job, its trigger and NOTIFY), the
//                    idempotency key a unique column of the event row.
// Answers with a body of the gateway's shape only after COMMIT. Started as a child process like the
// gateway; it creates its tables itself (SQLITE_PATH, or DATABASE_URL + SCHEMA + WORKER_SCHEMA).
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { runMigrations } from 'graphile-worker';
import pg from 'pg';

const BODY = {
  type: 'object',
  required: ['event_type', 'email'],
  properties: {
    event_type: { type: 'string', minLength: 1, maxLength: 100 },
    email: { type: 'string', minLength: 3, maxLength: 254 },
    name: { type: 'string', maxLength: 200 },
    idempotency_key: { type: 'string', maxLength: 200 },
    fields: { type: 'object' },
  },
} as const;

interface Body {
  event_type: string;
  email: string;
  name?: string;
  idempotency_key?: string;
  fields?: Record<string, unknown>;
}

type Store = (b: Body, payload: string) => Promise<{ eventId: number; jobId: number }>;

async function sqliteStore(path: string): Promise<Store> {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`
    create table if not exists events (id integer primary key, event_type text not null, email text not null,
      idempotency_key text unique, payload text not null, created_at integer not null);
    create table if not exists outbox (id integer primary key, event_id integer not null, to_email text not null,
      template text not null, context text not null, status text not null, due_at integer not null);`);
  const insEvent = db.prepare(
    'insert into events (event_type, email, idempotency_key, payload, created_at) values (?, ?, ?, ?, ?)',
  );
  const insOutbox = db.prepare(
    "insert into outbox (event_id, to_email, template, context, status, due_at) values (?, ?, ?, ?, 'queued', ?)",
  );
  const write = db.transaction((b: Body, payload: string) => {
    const now = Date.now();
    const eventId = Number(
      insEvent.run(b.event_type, b.email, b.idempotency_key ?? null, payload, now).lastInsertRowid,
    );
    const jobId = Number(insOutbox.run(eventId, b.email, b.event_type, payload, now).lastInsertRowid);
    return { eventId, jobId };
  });
  return async (b, payload) => write(b, payload);
}

async function pgStore(url: string, schema: string, workerSchema: string): Promise<Store> {
  await runMigrations({ connectionString: url, schema: workerSchema, logger: undefined });
  const pool = new pg.Pool({ connectionString: url, max: 10, options: `-c search_path=${schema}` });
  pool.on('error', () => {});
  await pool.query(`create schema if not exists ${schema}`);
  await pool.query(`create table if not exists ${schema}.events (id bigserial primary key, event_type text not null,
      email text not null, idempotency_key text unique, payload text not null, created_at bigint not null)`);
  const addJob = `select id from ${workerSchema}.add_job(identifier => 'send_email', payload => $1::json)`;
  return async (b, payload) => {
    const c = await pool.connect();
    try {
      await c.query('begin');
      const ev = await c.query<{ id: number }>(
        'insert into events (event_type, email, idempotency_key, payload, created_at) values ($1, $2, $3, $4, $5) returning id',
        [b.event_type, b.email, b.idempotency_key ?? null, payload, Date.now()],
      );
      const eventId = Number(ev.rows[0].id);
      const job = await c.query<{ id: string }>(addJob, [
        JSON.stringify({ event_id: eventId, to: b.email, template: b.event_type }),
      ]);
      await c.query('commit');
      return { eventId, jobId: Number(job.rows[0].id) };
    } catch (e) {
      await c.query('rollback').catch(() => {});
      throw e;
    } finally {
      c.release();
    }
  };
}

const engine = process.env.ENGINE;
const store =
  engine === 'sqlite'
    ? await sqliteStore(process.env.SQLITE_PATH!)
    : await pgStore(process.env.DATABASE_URL!, process.env.SCHEMA!, process.env.WORKER_SCHEMA!);

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
app.get('/healthz', async () => ({ ok: true }));
app.post<{ Body: Body }>('/api/scoped/send/transactional', { schema: { body: BODY } }, async (req, reply) => {
  const b = req.body;
  try {
    const { eventId, jobId } = await store(b, JSON.stringify(b));
    return {
      ok: true,
      site_key: 'demo-courses',
      event_type: b.event_type,
      email: b.email,
      event_id: eventId,
      scheduled_email_id: jobId,
      sent: 0,
      failed: 0,
      status: 'queued',
    };
  } catch (e) {
    // A repeated idempotency key (the unique column): the bench never sends one.
    if (/unique/i.test(String((e as Error).message))) return reply.code(409).send({ ok: false });
    throw e;
  }
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
const stop = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
