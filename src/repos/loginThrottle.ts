// Failed logins counted in the database (migration 023, SPEC §21): one row per account and per source
// address, in a fixed window. The count is taken and read in one statement, so concurrent attempts in any
// number of API processes each see their own number.
import { sql } from 'kysely';
import type { Executor } from './types.js';

/** Counts one more attempt under `key` (a new window once the old one is over); the count and its window. */
export async function countAttempt(
  db: Executor,
  key: string,
  now: number,
  windowMs: number,
): Promise<{ failures: number; window_start: number }> {
  const expired = now - windowMs;
  const row = await db
    .insertInto('login_throttle')
    .values({ key, failures: 1, window_start: now })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        failures: sql<number>`case when login_throttle.window_start <= cast(${expired} as bigint) then 1 else login_throttle.failures + 1 end`,
        window_start: sql<number>`case when login_throttle.window_start <= cast(${expired} as bigint) then cast(${now} as bigint) else login_throttle.window_start end`,
      }),
    )
    .returning(['failures', 'window_start'])
    .executeTakeFirstOrThrow();
  return { failures: Number(row.failures), window_start: Number(row.window_start) };
}

/** Takes back an attempt that was not a failure (the right password, a malformed request). */
export async function uncountAttempt(db: Executor, key: string, windowStart: number): Promise<void> {
  await db
    .updateTable('login_throttle')
    .set({ failures: sql<number>`failures - 1` })
    .where('key', '=', key)
    .where('window_start', '=', windowStart)
    .where('failures', '>', 0)
    .execute();
}

export async function forgetAttempts(db: Executor, key: string): Promise<number> {
  const r = await db.deleteFrom('login_throttle').where('key', '=', key).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function attemptsOf(
  db: Executor,
  key: string,
): Promise<{ failures: number; window_start: number } | null> {
  const row = await db
    .selectFrom('login_throttle')
    .select(['failures', 'window_start'])
    .where('key', '=', key)
    .executeTakeFirst();
  return row ? { failures: Number(row.failures), window_start: Number(row.window_start) } : null;
}
