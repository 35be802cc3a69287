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
// With SMTP_URL it also delivers, in the same process, as that team would (the end-to-end bench):
//   sqlite    a loop polling the outbox every 50 ms, claiming up to 100 rows, rendering with liquidjs
//             and sending through nodemailer's pool (5 connections), one UPDATE per e-mail sent;
//   postgres  a graphile-worker runner (concurrency 10) whose send_email task renders and sends the same.
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { Logger, run, runMigrations } from 'graphile-worker';
import { Liquid } from 'liquidjs';
import nodemailer from 'nodemailer';
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

const SMTP_URL = process.env.SMTP_URL;
const liquid = new Liquid();
const SUBJECT = liquid.parse('Итоги конкурса «{{ fields.event_title }}»');
const HTML = liquid.parse(
  '<p>Здравствуйте, {{ name }}!</p><p>Работа «{{ fields.work_title }}» заняла место {{ fields.place }}.</p>',
);
const mailer = SMTP_URL
  ? nodemailer.createTransport({ url: SMTP_URL, pool: true, maxConnections: 5, maxMessages: Infinity } as any)
  : null;

/** Renders and sends one e-mail of a stored request (both engines' delivery). */
async function deliver(to: string, payload: string): Promise<void> {
  const b = JSON.parse(payload) as Body;
  const [subject, html] = await Promise.all([liquid.render(SUBJECT, b), liquid.render(HTML, b)]);
  await mailer!.sendMail({ from: 'noreply@courses.example', to, subject, html });
}

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
  if (mailer) {
    const claim = db.prepare(
      "update outbox set status = 'sending' where id in (select id from outbox where status = 'queued' and due_at <= ? order by id limit 100) returning id, to_email, context",
    );
    const done = db.prepare('update outbox set status = ? where id = ?');
    const poll = async () => {
      for (;;) {
        const rows = claim.all(Date.now()) as { id: number; to_email: string; context: string }[];
        if (rows.length === 0) break;
        await Promise.all(
          rows.map((r) =>
            deliver(r.to_email, r.context).then(
              () => done.run('sent', r.id),
              () => done.run('failed', r.id),
            ),
          ),
        );
      }
      setTimeout(() => void poll(), 50);
    };
    void poll();
  }
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
  if (mailer) {
    await run({
      pgPool: pool,
      schema: workerSchema,
      concurrency: 10,
      noHandleSignals: true,
      logger: new Logger(() => () => {}),
      taskList: {
        send_email: async (p) => {
          const job = p as { event_id: number; to: string };
          const ev = await pool.query<{ payload: string }>('select payload from events where id = $1', [job.event_id]);
          await deliver(job.to, ev.rows[0].payload);
        },
      },
    });
  }
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
