// Admin UI sessions (SPEC §6) as stored: the `sessions` table holds the SHA-256 of each cookie token,
// never the token. Lifetime 12 h (a working day), ended sooner after 2 h without a request. The HTTP
// side (cookie, CSRF, login rate limits) is http/plugins/session.ts.
import { createHash, randomBytes } from 'node:crypto';
import {
  deleteExpiredSessions,
  deleteSession,
  findSession,
  insertSession,
  touchSession,
  type SessionRow,
} from '../repos/sessions.js';
import type { Deps } from './context.js';

export type { SessionRow };

export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;
/** last_seen is written at most this often: one UPDATE per minute per session, not per request. */
const TOUCH_EVERY_MS = 60 * 1000;
/** The cookie token's shape (32 random bytes, base64url); anything else is not looked up. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const idOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** The live session of a cookie token, its idle time reset; null when unknown, expired or idle too long. */
export async function liveSession(deps: Deps, token: string | null): Promise<SessionRow | null> {
  if (!token || !TOKEN_SHAPE.test(token)) return null;
  const db = deps.db.db;
  const row = await findSession(db, idOf(token));
  const now = deps.clock.now();
  if (!row || row.expires_at <= now || row.last_seen + SESSION_IDLE_MS <= now) return null;
  if (now - row.last_seen >= TOUCH_EVERY_MS) {
    await touchSession(db, row.id, now);
    row.last_seen = now;
  }
  return row;
}

/**
 * Starts a session with a fresh token (no session fixation); the browser's previous session, if it
 * sent one, ends. `userId`: the account logged in (null: the root token). Returns the token for the cookie and the stored row.
 */
export async function startSession(deps: Deps, previousToken: string | null, userId: number | null = null) {
  const db = deps.db.db;
  const now = deps.clock.now();
  if (previousToken && TOKEN_SHAPE.test(previousToken)) await deleteSession(db, idOf(previousToken));
  // Housekeeping at each login: the table never grows beyond the sessions still alive.
  await deleteExpiredSessions(db, now, now - SESSION_IDLE_MS);
  const token = randomBytes(32).toString('base64url');
  const row: SessionRow = {
    id: idOf(token),
    csrf_token: randomBytes(32).toString('base64url'),
    created_at: now,
    expires_at: now + SESSION_LIFETIME_MS,
    last_seen: now,
    user_id: userId,
  };
  await insertSession(db, row);
  return { token, row };
}

export async function endSession(deps: Deps, row: SessionRow): Promise<void> {
  await deleteSession(deps.db.db, row.id);
}
