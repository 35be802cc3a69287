// Waiting for a locked SQLite file without stopping the process (issue 34, SPEC §20).
//
// better-sqlite3 is synchronous: with busy_timeout 5 s, a write that finds the file locked by another
// connection or process (a backup tool, `sqlite3` left in a transaction, a CLI command) held the whole
// event loop until the lock went — /healthz, every project's requests and the worker stood still
// (/healthz p99 4,089 ms while another process held the write lock). Here SQLite waits only briefly by
// itself (SQLITE_WAIT_MS); beyond that the statement is tried again on a timer, so the event loop runs
// between tries, until the lock has been held for WAIT_BUDGET_MS (the old busy_timeout). Then the
// SQLITE_BUSY error goes up and is answered 503 with Retry-After like any unavailable database
// (db/unavailable.ts).
//
// A statement is tried again only where that is safe: outside a transaction (it failed whole), or a
// BEGIN or COMMIT (SQLite's own advice: within a transaction, other statements must roll back instead).
// Transactions start with BEGIN IMMEDIATE, which takes the write lock at once: a busy file is met there,
// before anything was done, never halfway through a transaction that already read (a deferred BEGIN
// would fail on its first write, SQLITE_BUSY_SNAPSHOT when another writer committed meanwhile, and that
// cannot be retried). In one process every statement goes through one connection in turn (Kysely's
// mutex), so taking the write lock at BEGIN costs nothing here.
import type SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type SqliteDialectConfig,
} from 'kysely';

/** busy_timeout: how long one try may block the event loop while SQLite waits for the lock itself. */
const SQLITE_WAIT_MS = 20;
/** How long the file may stay locked before a statement gives up (SQLITE_BUSY, answered 503). */
const WAIT_BUDGET_MS = 5_000;
// Pause between tries: doubling from the first to the last, so a short lock costs little latency and a
// long one only a try (at most SQLITE_WAIT_MS of blocked loop) every LAST_PAUSE_MS.
const FIRST_PAUSE_MS = 5;
const LAST_PAUSE_MS = 100;
// No refusal for this long: whoever waited has given up or got through; a new refusal is a new wait.
const QUIET_MS = 1_000;

const BEGIN = CompiledQuery.raw('begin immediate');
const COMMIT = CompiledQuery.raw('commit');

/** SQLITE_BUSY and its extended codes that a later try can get past (not BUSY_SNAPSHOT: a stale read). */
const retriable = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY') && code !== 'SQLITE_BUSY_SNAPSHOT';
};

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * How long the file has been found locked, per connection. The budget counts from the first refusal,
 * not per statement: while the file stays locked past it, each waiting statement gets one more try and
 * then its 503 at once, instead of every queued request (and the worker's rounds) waiting its own 5 s in
 * turn. The wait ends when a statement that needs the lock gets through (a BEGIN, or a statement that was
 * refused before); a read that succeeds says nothing about the lock. A refusal after a quiet spell (no
 * refusal for QUIET_MS: nobody was waiting) starts a new wait.
 */
class LockWait {
  private since: number | null = null;
  private lastRefusal = 0;
  constructor(private readonly budgetMs: number) {}

  async run<T>(attempt: () => T | Promise<T>, takesLock: boolean): Promise<T> {
    let delay = FIRST_PAUSE_MS;
    let refused = false;
    for (;;) {
      try {
        const result = await attempt();
        if (takesLock || refused) this.since = null;
        return result;
      } catch (err) {
        if (!retriable(err)) throw err;
        refused = true;
        const now = Date.now();
        if (this.since === null || now - this.lastRefusal > QUIET_MS) this.since = now;
        this.lastRefusal = now;
        const left = this.since + this.budgetMs - now;
        if (left <= 0) throw err;
        await pause(Math.min(delay, left));
        delay = Math.min(delay * 2, LAST_PAUSE_MS);
      }
    }
  }
}

/** Kysely's connection, with statements outside a transaction tried again while the file is locked. */
class WaitingConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly conn: SQLite.Database,
    private readonly wait: LockWait,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Inside a transaction a statement is not retried (BEGIN and COMMIT are, by the driver below); the
    // common path costs one property read.
    if (this.conn.inTransaction) return this.inner.executeQuery<R>(query);
    return this.wait.run(() => this.inner.executeQuery<R>(query), false);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class WaitingDriver extends SqliteDriver {
  private wrapped: WaitingConnection | null = null;

  constructor(
    config: SqliteDialectConfig,
    private readonly conn: SQLite.Database,
    private readonly wait: LockWait,
  ) {
    super(config);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await super.acquireConnection();
    // SQLite has one connection: wrapped once.
    return (this.wrapped ??= new WaitingConnection(inner, this.conn, this.wait));
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await this.wait.run(() => unwrap(connection).executeQuery(BEGIN), true);
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // Holding the write lock since BEGIN IMMEDIATE, a WAL commit is not refused as busy; should it be,
    // the transaction is still open and COMMIT may be tried again.
    await this.wait.run(() => unwrap(connection).executeQuery(COMMIT), true);
  }
}

const unwrap = (c: DatabaseConnection): DatabaseConnection => (c instanceof WaitingConnection ? c.inner : c);

class WaitingDialect extends SqliteDialect {
  constructor(
    private readonly config: SqliteDialectConfig,
    private readonly conn: SQLite.Database,
    private readonly budgetMs: number,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new WaitingDriver(this.config, this.conn, new LockWait(this.budgetMs));
  }
}

/**
 * The Kysely dialect for `conn` (whose statements `database` prepares): a short busy_timeout, and a
 * locked file waited for on timers up to the budget.
 */
export function waitingSqliteDialect(conn: SQLite.Database, database: SqliteDialectConfig['database']): SqliteDialect {
  conn.pragma(`busy_timeout = ${SQLITE_WAIT_MS}`);
  return new WaitingDialect({ database }, conn, WAIT_BUDGET_MS);
}
