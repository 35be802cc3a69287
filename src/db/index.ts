// One place that knows both dialects. Everything above this file talks to Kysely<Database> and asks
// `dialect` only where SQL genuinely differs (row locking, upserts are portable through Kysely).
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { PoolClient } from 'pg';
import type { Database } from './schema.js';
import { waitingSqliteDialect } from './sqliteBusy.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  db: Kysely<Database>;
  dialect: Dialect;
  /** PostgreSQL schema the tables live in. */
  schema?: string;
  close(): Promise<void>;
}

// Each driver is loaded with the first database of its kind: a process on SQLite (the default) never
// loads pg, one on PostgreSQL never loads better-sqlite3 (resident memory counts, issue 29).
const importPg = () =>
  import('pg').then(({ default: pg }) => {
    // int8 (bigserial ids, counts) as JS numbers: ids stay far below 2^53.
    pg.types.setTypeParser(20, (v) => Number(v));
    pg.types.setTypeParser(1700, (v) => Number(v));
    return pg;
  });
let pgLoaded: ReturnType<typeof importPg> | null = null;
const loadPg = () => (pgLoaded ??= importPg());

/** How long a request waits for a PostgreSQL connection (new or from the pool) before it fails. */
const PG_CONNECT_TIMEOUT_MS = 10_000;

export interface DbOptions {
  /** PostgreSQL only: a schema to create and use (tests isolate themselves this way). */
  schema?: string;
  poolSize?: number;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** The URL with a schema as its search_path (how a child process such as the CLI is given a schema). */
export function schemaUrl(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString().replace(/\+/g, '%20');
}

export async function openDatabase(url: string, opts: DbOptions = {}): Promise<Db> {
  if (isPostgresUrl(url)) {
    const pg = await loadPg();
    if (opts.schema) {
      const admin = new pg.Client({ connectionString: url });
      admin.on('error', () => {}); // the awaited calls fail instead; the process must not
      await admin.connect();
      await admin.query(`CREATE SCHEMA IF NOT EXISTS "${opts.schema}"`);
      await admin.end();
    }
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.poolSize ?? 10,
      options: opts.schema ? `-c search_path="${opts.schema}"` : undefined,
      // A server that does not answer at all (not refused: gone from the network) fails the request in
      // time instead of holding it; waiting for a free client under load is bounded by the same.
      connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    // An idle client erroring (server restart) must not crash the process; the pool replaces it.
    pool.on('error', () => {});
    pool.on('connect', (client) => {
      // pool.on('error') covers idle clients only: a checked-out one (between the statements of a
      // transaction, say) emits 'error' on itself when the server goes, and an 'error' nobody listens to
      // ends the process (issue 34). Its query fails with the same error and the pool drops the client
      // when it is released (it is no longer queryable); nothing more to do here.
      client.on('error', () => {});
      namePreparedStatements(client);
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    // The schema in effect (search_path from the URL's options, PGOPTIONS or opts.schema) is where
    // the migration bookkeeping must live too.
    const { rows } = await pool.query<{ s: string }>('select current_schema() as s');
    return { db, dialect: 'postgres', schema: rows[0]?.s ?? 'public', close: () => db.destroy() };
  }
  const path = url.replace(/^sqlite:/, '') || ':memory:';
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const { default: SQLiteDatabase } = await import('better-sqlite3');
  const conn = new SQLiteDatabase(path);
  conn.pragma('journal_mode = WAL');
  // Every commit is on disk before it is answered. Said explicitly: better-sqlite3 is built with
  // SQLITE_DEFAULT_WAL_SYNCHRONOUS=1, so a database reopened in WAL mode would otherwise run at NORMAL
  // (a power cut may lose the last commits). Group commit (db/groupCommit.ts) pays for the fsyncs.
  conn.pragma('synchronous = FULL');
  conn.pragma('foreign_keys = ON');
  // A locked file is waited for on timers, not inside SQLite with the event loop held (sqliteBusy.ts).
  const db = new Kysely<Database>({ dialect: waitingSqliteDialect(conn, preparedOnce(conn)) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

const NOTHING_TO_ROLL_BACK = {
  reader: false,
  run: () => ({ changes: 0, lastInsertRowid: 0 }),
} as unknown as SQLite.Statement;

/**
 * Kysely prepares every query it runs; parsing and planning the same SQL again each time was a quarter
 * of the accept path's CPU. Statements are kept by their SQL text (bound values are parameters, so the
 * set of texts is small) and reused; SQLite re-prepares a kept statement itself after a schema change.
 */
function preparedOnce(conn: SQLite.Database): { prepare(sql: string): SQLite.Statement; close(): void } {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare(text: string) {
      // SQLite may roll a transaction back by itself on SQLITE_FULL, SQLITE_IOERR or SQLITE_BUSY; Kysely's
      // ROLLBACK then fails with "no transaction is active", and that error would replace the one that
      // says what happened (issue 34: a full disk must read as the database being unavailable, not as
      // a fault of the request). A ROLLBACK with nothing to roll back does nothing instead.
      if (text === 'rollback' && !conn.inTransaction) return NOTHING_TO_ROLL_BACK;
      let stmt = statements.get(text);
      if (!stmt) {
        stmt = conn.prepare(text);
        // Texts with inlined values (rare: DDL, IN lists of varying length) must not grow it for ever.
        if (statements.size >= 2000) statements.clear();
        statements.set(text, stmt);
      }
      return stmt;
    },
    close: () => conn.close(),
  };
}

/**
 * Marks a PostgreSQL statement to be prepared once per connection (a named statement) instead of parsed
 * and planned on every run: for the accept path's set-based statements, whose text is constant. Kysely
 * sends unnamed statements only; the pool's clients name the marked ones (namePreparedStatements).
 */
export const PREPARED = '/* prepared */ ';

function namePreparedStatements(client: PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  // Only the form Kysely uses, (text, values) awaited; every other call goes through as it was.
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (args.length === 2 && typeof text === 'string' && text.startsWith(PREPARED) && Array.isArray(values))
      return query({ name: statementName(text), text, values });
    return query(...args);
  };
}

const names = new Map<string, string>();
/** One name per text, the same in every connection (pg refuses a name reused for another text). */
function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `egw_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const pg = await loadPg();
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {}); // the awaited calls fail instead; the process must not
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

export async function ping(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Namespace of this service's advisory locks (first key of the two-key form). */
const LOCK_NAMESPACE = 0x65677731; // "egw1"

/** Namespace of the lock that orders audited changes (lockAuditedChanges). */
const AUDIT_LOCK_NAMESPACE = 0x65677732; // "egw2"

/**
 * Runs audited changes one after another (PostgreSQL; SQLite has one writer already), so that each
 * audit row's `before` is what the previous change's `after` left: two administrators changing the same
 * key at once otherwise both read the same `before`. Administrators' changes are few; the workers never
 * take this lock, the accept path only for an administrator's replay (services/replay.ts).
 */
export async function lockAuditedChanges(trx: Kysely<Database>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(${AUDIT_LOCK_NAMESPACE}::int, 0)`.execute(trx);
}

/**
 * Serialises writers of one project's replace-all configuration (routing, categories, paid-order books,
 * cart chains) until the end of the caller's transaction. PostgreSQL: a transaction-scoped advisory lock,
 * so concurrent replacements run one after another and each sees the previous one's rows (delete-then-
 * insert would otherwise collide on the primary key). SQLite has one writer at a time already.
 */
export async function lockProjectConfig(trx: Kysely<Database>, dialect: Dialect, projectId: number): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(${LOCK_NAMESPACE}::int, (${projectId}::bigint % 2147483647)::int)`.execute(
    trx,
  );
}
