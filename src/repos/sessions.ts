// Admin UI sessions (the `sessions` table of migration 002). Rows are looked up by the SHA-256 of the
// cookie token; the token itself is only ever in the browser's cookie.
import type { Selectable } from 'kysely';
import type { SessionsTable } from '../db/schema.js';
import type { Executor } from './types.js';

export type SessionRow = Selectable<SessionsTable>;

export async function insertSession(db: Executor, s: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(s).execute();
}

export async function findSession(db: Executor, id: string): Promise<SessionRow | undefined> {
  const row = await db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
  // bigint columns come back as numbers on both dialects, but be explicit: comparisons depend on it.
  return (
    row && {
      ...row,
      created_at: Number(row.created_at),
      expires_at: Number(row.expires_at),
      last_seen: Number(row.last_seen),
      user_id: row.user_id === null || row.user_id === undefined ? null : Number(row.user_id),
    }
  );
}

export async function touchSession(db: Executor, id: string, now: number): Promise<void> {
  await db.updateTable('sessions').set({ last_seen: now }).where('id', '=', id).execute();
}

export async function deleteSession(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}

/** Housekeeping at each login: the table never grows beyond the sessions still alive. */
export async function deleteExpiredSessions(db: Executor, now: number, idleCutoff: number): Promise<number> {
  const res = await db
    .deleteFrom('sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen', '<', idleCutoff)]))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Ends one session of an account; 0 when it is not there (any more). */
export async function deleteUserSession(db: Executor, userId: number, id: string): Promise<number> {
  const res = await db.deleteFrom('sessions').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows);
}
