// What "the database cannot be reached" looks like from each driver (SPEC §20, issue 34). Such an error
// says nothing about the request: the same request succeeds once the database is back, so it is answered
// 503 with Retry-After (never 500), and a worker backs off and tries again instead of recording a fault.

/** Seconds a client is asked to wait (Retry-After) while the database is away: a restart takes a few. */
export const DB_RETRY_AFTER_SECONDS = 5;

// PostgreSQL SQLSTATEs: class 08 (connection exception), the server shutting down or starting up
// (57P01 admin_shutdown on `pg_ctl restart -m fast`, 57P02 crash_shutdown, 57P03 cannot_connect_now),
// and no connection slot left (53300).
const PG_STATES = /^(08...|57P0[123]|53300)$/;
// Socket-level failures of the pg client (refused, reset, unreachable, name not resolved).
const NET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// pg's own wording for a connection it lost or could not get (these errors carry no code).
const PG_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable|Cannot use a pool after calling end)/;
// SQLite: the disk is full, the file stayed locked beyond busy_timeout, the disk failed or vanished, the
// file cannot be opened or written (an extended code such as SQLITE_IOERR_WRITE starts like its class).
const SQLITE_CODES = /^SQLITE_(FULL|BUSY|IOERR|CANTOPEN|READONLY|PROTOCOL|NOMEM)/;

/** True when `err` (or what it was caused by) says the database could not be reached or written. */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (PG_STATES.test(code) || NET_CODES.has(code) || SQLITE_CODES.test(code)))
      return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && PG_MESSAGES.test(message)) return true;
  }
  return false;
}

// Counted here, where every caller classifies, and read by each process's metrics at scrape time
// (metrics.ts): the database layer needs no handle on the metrics registry.
let unavailableSeen = 0;

/** How many requests and worker rounds failed because the database was unavailable, since start. */
export const databaseUnavailableCount = (): number => unavailableSeen;

// When the database last refused (clock time, ms). A full disk or a locked file leaves reads working,
// so a `select 1` alone would call the database ready while every write fails: /readyz also says "not
// ready" for a few seconds after any refusal (the Retry-After a client was given).
let lastRefusedAt = 0;

/** Counts one request refused or one worker round lost because the database was away. */
export const countDatabaseUnavailable = (): void => {
  unavailableSeen++;
  lastRefusedAt = Date.now();
};

/** Seconds since the database last refused, when that was less than DB_RETRY_AFTER_SECONDS ago. */
export function refusedRecently(now = Date.now()): number | null {
  const ago = now - lastRefusedAt;
  return ago < DB_RETRY_AFTER_SECONDS * 1000 ? Math.max(0, Math.floor(ago / 1000)) : null;
}

/** Classifies `err` and counts it when it is the database being away. */
export function noteDatabaseUnavailable(err: unknown): boolean {
  if (!isDatabaseUnavailable(err)) return false;
  countDatabaseUnavailable();
  return true;
}
