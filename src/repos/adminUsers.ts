// Administrator accounts, the projects each may see, and their personal tokens (migration 009).
import type { Selectable } from 'kysely';
import { fromFlag, toFlag, type WithBooleans } from '../db/flags.js';
import type { AdminTokensTable, AdminUsersTable } from '../db/schema.js';
import type { AdminRole, AdminUserStatus } from '../domain/statuses.js';
import type { Executor } from './types.js';

export type AdminUserRow = Selectable<AdminUsersTable>;
export type AdminTokenRow = WithBooleans<Selectable<AdminTokensTable>, 'read_only'>;

const num = <T extends Record<string, unknown>>(row: T, cols: (keyof T)[]): T => {
  const out = { ...row };
  // bigint columns arrive as strings from some drivers: the row's numbers, as numbers.
  for (const c of cols)
    if (out[c] !== null && out[c] !== undefined) (out as Record<keyof T, unknown>)[c] = Number(out[c]);
  return out;
};
const userRow = (r: AdminUserRow) => num(r, ['id', 'created_at', 'updated_at']);
const tokenRow = (r: Selectable<AdminTokensTable>): AdminTokenRow => ({
  ...num(r, ['id', 'user_id', 'expires_at', 'created_at', 'last_used_at', 'revoked_at']),
  read_only: fromFlag(r.read_only),
});

export async function countUsers(db: Executor): Promise<number> {
  const r = await db
    .selectFrom('admin_users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

export async function findUserByEmail(db: Executor, email: string): Promise<AdminUserRow | undefined> {
  const row = await db.selectFrom('admin_users').selectAll().where('email', '=', email).executeTakeFirst();
  return row && userRow(row);
}

export async function findUser(db: Executor, id: number): Promise<AdminUserRow | undefined> {
  const row = await db.selectFrom('admin_users').selectAll().where('id', '=', id).executeTakeFirst();
  return row && userRow(row);
}

export async function listUsers(db: Executor): Promise<AdminUserRow[]> {
  const rows = await db.selectFrom('admin_users').selectAll().orderBy('id').execute();
  return rows.map(userRow);
}

/** Inserts an account, or null when the e-mail is taken (the unique index decides between racers). */
export async function insertUser(
  db: Executor,
  u: { email: string; name: string; password_hash: string; role: AdminRole },
  now: number,
): Promise<AdminUserRow | null> {
  const row = await db
    .insertInto('admin_users')
    .values({ ...u, status: 'active', created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('email').doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? userRow(row) : null;
}

export async function updateUser(
  db: Executor,
  id: number,
  patch: Partial<{ name: string; role: AdminRole; status: AdminUserStatus; password_hash: string; email: string }>,
  now: number,
): Promise<void> {
  await db
    .updateTable('admin_users')
    .set({ ...patch, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Site keys each account may see, by account id. */
export async function userProjects(
  db: Executor,
  userIds?: number[],
): Promise<Map<number, { id: number; site_key: string }[]>> {
  let q = db
    .selectFrom('admin_user_projects')
    .innerJoin('projects', 'projects.id', 'admin_user_projects.project_id')
    .select(['admin_user_projects.user_id', 'projects.id', 'projects.site_key'])
    .orderBy('projects.site_key');
  if (userIds) q = q.where('admin_user_projects.user_id', 'in', userIds.length ? userIds : [-1]);
  const out = new Map<number, { id: number; site_key: string }[]>();
  for (const r of await q.execute()) {
    const list = out.get(Number(r.user_id)) ?? [];
    list.push({ id: Number(r.id), site_key: r.site_key });
    out.set(Number(r.user_id), list);
  }
  return out;
}

export async function replaceUserProjects(db: Executor, userId: number, projectIds: number[]): Promise<void> {
  await db.deleteFrom('admin_user_projects').where('user_id', '=', userId).execute();
  if (projectIds.length)
    await db
      .insertInto('admin_user_projects')
      .values(projectIds.map((project_id) => ({ user_id: userId, project_id })))
      .execute();
}

/** Ends every session of an account (disable, password reset). */
export async function deleteUserSessions(db: Executor, userId: number): Promise<void> {
  await db.deleteFrom('sessions').where('user_id', '=', userId).execute();
}

export async function insertToken(
  db: Executor,
  t: {
    user_id: number;
    name: string;
    token_hash: string;
    last4: string;
    read_only: boolean;
    expires_at: number | null;
  },
  now: number,
): Promise<AdminTokenRow> {
  const row = await db
    .insertInto('admin_tokens')
    .values({ ...t, read_only: toFlag(t.read_only), created_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
  return tokenRow(row);
}

export async function findTokenByHash(db: Executor, hash: string): Promise<AdminTokenRow | undefined> {
  const row = await db.selectFrom('admin_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
  return row && tokenRow(row);
}

export async function findToken(db: Executor, id: number): Promise<AdminTokenRow | undefined> {
  const row = await db.selectFrom('admin_tokens').selectAll().where('id', '=', id).executeTakeFirst();
  return row && tokenRow(row);
}

export async function listTokens(db: Executor, userId: number): Promise<AdminTokenRow[]> {
  const rows = await db.selectFrom('admin_tokens').selectAll().where('user_id', '=', userId).orderBy('id').execute();
  return rows.map(tokenRow);
}

export async function revokeToken(db: Executor, id: number, now: number): Promise<void> {
  await db
    .updateTable('admin_tokens')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function revokeUserTokens(db: Executor, userId: number, now: number): Promise<void> {
  await db
    .updateTable('admin_tokens')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function touchToken(db: Executor, id: number, now: number): Promise<void> {
  await db.updateTable('admin_tokens').set({ last_used_at: now }).where('id', '=', id).execute();
}

export async function listUserSessions(db: Executor, userId: number) {
  const rows = await db
    .selectFrom('sessions')
    .select(['id', 'created_at', 'expires_at', 'last_seen'])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((r) => num(r, ['created_at', 'expires_at', 'last_seen']));
}
