// Administrator accounts and personal tokens (SPEC §14). Every change writes its audit row in the same
// transaction. Who may call what is decided by the routes' declared access (http/plugins/access.ts).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ROOT, type Principal } from '../domain/access.js';
import { canonicalAddress, isValidAddress } from '../domain/email.js';
import { DUMMY_HASH, hashPassword, passwordProblem, verifyPassword } from '../domain/passwords.js';
import type { AdminRole, AuditVia } from '../domain/statuses.js';
import { AppError, notFound, validationError } from '../errors.js';
import {
  deleteUserSessions,
  findToken,
  findTokenByHash,
  findUser,
  findUserByEmail,
  insertToken,
  insertUser,
  listTokens,
  listUsers,
  listUserSessions,
  replaceUserProjects,
  revokeToken,
  revokeUserTokens,
  touchToken,
  updateUser,
  userProjects,
  type AdminTokenRow,
  type AdminUserRow,
} from '../repos/adminUsers.js';
import { findProjectBySiteKey } from '../repos/projects.js';
import { deleteUserSession } from '../repos/sessions.js';
import { iso, type Executor } from '../repos/types.js';
import { audited, type AuditActor } from './audit.js';
import type { Deps } from './context.js';

export const TOKEN_PREFIX = 'egwa_';
const TOKEN_SHAPE = /^egwa_[A-Za-z0-9_-]{43}$/;
/** last_used_at is written at most this often per token. */
const TOUCH_EVERY_MS = 60 * 1000;

const sha256hex = (s: string) => createHash('sha256').update(s).digest('hex');
const sha256 = (s: string) => createHash('sha256').update(s).digest();

export function normaliseAdminEmail(email: string): string {
  const e = email.trim();
  if (!isValidAddress(e))
    throw validationError(
      { reason: 'email_invalid', params: { field: 'email' } },
      { invalid_fields: { email: 'is not an e-mail address' } },
    );
  return canonicalAddress(e).toLowerCase();
}

const accountExists = (email: string) =>
  new AppError(409, 'conflict', { reason: 'account_exists', params: { email, field: 'email' } });

function checkPassword(password: string, email?: string): void {
  const problem = passwordProblem(password, email);
  if (problem) throw validationError(problem.said, { invalid_fields: { password: problem.text } });
}

/** Site keys to project ids; an unknown one is a 422 naming it. */
async function projectIds(db: Executor, role: AdminRole, siteKeys: string[] | undefined): Promise<number[]> {
  if (role === 'owner') return [];
  const ids: number[] = [];
  for (const key of new Set(siteKeys ?? [])) {
    const p = await findProjectBySiteKey(db, key);
    if (!p)
      throw validationError(
        { reason: 'project_unknown', params: { project: key, field: 'projects' } },
        {
          invalid_fields: { projects: `unknown site key ${key}` },
        },
      );
    ids.push(p.id);
  }
  return ids;
}

export function userView(u: AdminUserRow, projects: { site_key: string }[]) {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    status: u.status,
    projects: u.role === 'owner' ? [] : projects.map((p) => p.site_key),
    created_at: iso(u.created_at)!,
    updated_at: iso(u.updated_at)!,
  };
}
export type UserView = ReturnType<typeof userView>;

async function viewOf(db: Executor, u: AdminUserRow): Promise<UserView> {
  return userView(u, (await userProjects(db, [u.id])).get(u.id) ?? []);
}

export interface NewUser {
  email: string;
  name?: string;
  password: string;
  role: AdminRole;
  projects?: string[];
}

export async function createUser(deps: Deps, who: AuditActor, input: NewUser): Promise<UserView> {
  const email = normaliseAdminEmail(input.email);
  checkPassword(input.password, email);
  const password_hash = await hashPassword(input.password);
  const now = deps.clock.now();
  return audited(deps, who, async (trx, note) => {
    const ids = await projectIds(trx, input.role, input.projects);
    const u = await insertUser(trx, { email, name: input.name?.trim() || email, password_hash, role: input.role }, now);
    if (!u) throw accountExists(email);
    await replaceUserProjects(trx, u.id, ids);
    const view = await viewOf(trx, u);
    note({ action: 'user.create', target: `user:${u.id}`, after: view });
    return view;
  });
}

export async function users(deps: Deps) {
  const db = deps.db.db;
  const rows = await listUsers(db);
  const projects = await userProjects(db);
  return { ok: true as const, items: rows.map((u) => userView(u, projects.get(u.id) ?? [])) };
}

async function activeOwners(db: Executor): Promise<number> {
  return (await listUsers(db)).filter((u) => u.role === 'owner' && u.status === 'active').length;
}

export interface UserPatch {
  name?: string;
  email?: string;
  role?: AdminRole;
  projects?: string[];
  password?: string;
  status?: 'active' | 'disabled';
}

/** Changes an account; disabling or demoting it ends its sessions and tokens at the next request. */
export async function changeUser(deps: Deps, who: AuditActor, id: number, patch: UserPatch): Promise<UserView> {
  const now = deps.clock.now();
  const email = patch.email !== undefined ? normaliseAdminEmail(patch.email) : undefined;
  if (patch.password !== undefined) checkPassword(patch.password, email);
  const password_hash = patch.password !== undefined ? await hashPassword(patch.password) : undefined;
  return audited(deps, who, async (trx, note) => {
    const u = await findUser(trx, id);
    if (!u) throw notFound(`Account ${id}`);
    const before = await viewOf(trx, u);
    const role = patch.role ?? u.role;
    const losesOwner = u.role === 'owner' && u.status === 'active' && (role !== 'owner' || patch.status === 'disabled');
    if (losesOwner && (await activeOwners(trx)) <= 1) throw new AppError(409, 'conflict', { reason: 'last_owner' });
    if (email && email !== u.email && (await findUserByEmail(trx, email))) throw accountExists(email);
    await updateUser(
      trx,
      id,
      {
        ...(patch.name !== undefined ? { name: patch.name.trim() || u.email } : {}),
        ...(email ? { email } : {}),
        ...(patch.role ? { role } : {}),
        ...(patch.status ? { status: patch.status } : {}),
        ...(password_hash ? { password_hash } : {}),
      },
      now,
    );
    if (patch.projects !== undefined || patch.role !== undefined)
      await replaceUserProjects(trx, id, await projectIds(trx, role, patch.projects ?? before.projects));
    // Sessions and tokens end at once when the account is disabled or its password changes.
    if (patch.status === 'disabled' || password_hash) {
      await deleteUserSessions(trx, id);
      if (patch.status === 'disabled') await revokeUserTokens(trx, id, now);
    }
    const after = await viewOf(trx, (await findUser(trx, id))!);
    const action = patch.status === 'disabled' ? 'user.disable' : password_hash ? 'user.password' : 'user.change';
    note({
      action,
      target: `user:${id}`,
      before,
      after: { ...after, ...(password_hash ? { password: 'changed' } : {}) },
    });
    return after;
  });
}

/** CLI and first run: an owner with this e-mail, created or (reset) given a new password and made active. */
export async function ensureOwner(
  deps: Deps,
  who: AuditActor,
  input: { email: string; password: string; name?: string },
  mode: 'create' | 'reset',
): Promise<UserView> {
  const email = normaliseAdminEmail(input.email);
  const existing = await findUserByEmail(deps.db.db, email);
  if (mode === 'create' && !existing) return createUser(deps, who, { ...input, email, role: 'owner' });
  if (!existing) throw notFound(`Account ${email}`);
  if (mode === 'create') throw new AppError(409, 'conflict', { reason: 'account_exists_reset', params: { email } });
  return changeUser(deps, who, existing.id, { password: input.password, status: 'active' });
}

/** Checks e-mail and password; null when either is wrong or the account is disabled (same answer, same time). */
export async function checkLogin(deps: Deps, email: string, password: string): Promise<AdminUserRow | null> {
  const u = await findUserByEmail(deps.db.db, email.trim().toLowerCase());
  const ok = await verifyPassword(password, u?.password_hash ?? DUMMY_HASH);
  return u && ok && u.status === 'active' ? u : null;
}

/** The principal of an account, read anew on every request: a disabled account stops at once. */
export async function principalOf(
  deps: Deps,
  userId: number,
  via: AuditVia,
  extra: { readOnly?: boolean; tokenId?: number; tokenName?: string; sessionId?: string } = {},
): Promise<Principal | null> {
  const db = deps.db.db;
  const u = await findUser(db, userId);
  if (!u || u.status !== 'active') return null;
  const ids = u.role === 'owner' ? null : ((await userProjects(db, [u.id])).get(u.id) ?? []).map((p) => p.id);
  return {
    userId: u.id,
    actor: u.email,
    role: u.role,
    projectIds: ids,
    readOnly: extra.readOnly ?? false,
    via,
    ...extra,
  };
}

/** Why a bearer token was refused, in words that help (no root token configured is a common cause). */
export const badTokenMessage = (deps: Deps) =>
  deps.config.adminToken
    ? 'The token is not valid, has expired or was revoked'
    : 'The token is not valid, has expired or was revoked (ADMIN_TOKEN is not set: log in with an account)';

/** A bearer token: the root ADMIN_TOKEN, or a personal token that is live and whose account is active. */
export async function principalOfBearer(deps: Deps, token: string): Promise<Principal | null> {
  const root = deps.config.adminToken;
  if (root && timingSafeEqual(sha256(token), sha256(root))) return { ...ROOT, via: 'root' };
  if (!TOKEN_SHAPE.test(token)) return null;
  const db = deps.db.db;
  const row = await findTokenByHash(db, sha256hex(token));
  const now = deps.clock.now();
  if (!row || row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= now)) return null;
  const p = await principalOf(deps, row.user_id, 'token', {
    readOnly: row.read_only,
    tokenId: row.id,
    tokenName: row.name,
  });
  if (p && (row.last_used_at === null || now - row.last_used_at >= TOUCH_EVERY_MS)) await touchToken(db, row.id, now);
  return p;
}

function tokenView(t: AdminTokenRow, now: number) {
  const state: 'active' | 'revoked' | 'expired' =
    t.revoked_at !== null ? 'revoked' : t.expires_at !== null && t.expires_at <= now ? 'expired' : 'active';
  return {
    id: t.id,
    name: t.name,
    last4: t.last4,
    read_only: t.read_only,
    status: state,
    expires_at: iso(t.expires_at),
    created_at: iso(t.created_at)!,
    last_used_at: iso(t.last_used_at),
  };
}

function requireAccount(p: Principal): number {
  if (p.userId === null)
    throw new AppError(
      403,
      'permission_denied',
      { reason: 'root_has_no_account' },
      {
        permission: 'account',
      },
    );
  return p.userId;
}

export async function createToken(
  deps: Deps,
  p: Principal,
  who: AuditActor,
  input: { name: string; read_only?: boolean; expires_at?: string },
) {
  const userId = requireAccount(p);
  const now = deps.clock.now();
  const expires = input.expires_at !== undefined ? Date.parse(input.expires_at) : null;
  if (expires !== null && !(expires > now))
    throw validationError(
      { reason: 'not_in_future', params: { field: 'expires_at' } },
      {
        invalid_fields: { expires_at: 'is not in the future' },
      },
    );
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return audited(deps, who, async (trx, note) => {
    const row = await insertToken(
      trx,
      {
        user_id: userId,
        name: input.name.trim(),
        token_hash: sha256hex(token),
        last4: token.slice(-4),
        // A read-only account's token cannot be more than its account.
        read_only: input.read_only === true || p.readOnly,
        expires_at: expires,
      },
      now,
    );
    const view = tokenView(row, now);
    note({ action: 'token.create', target: `token:${row.id}`, after: view });
    return { ok: true as const, ...view, token };
  });
}

export async function tokens(deps: Deps, p: Principal) {
  const now = deps.clock.now();
  return { ok: true as const, items: (await listTokens(deps.db.db, requireAccount(p))).map((t) => tokenView(t, now)) };
}

export async function revokeOwnToken(deps: Deps, p: Principal, who: AuditActor, id: number) {
  const userId = requireAccount(p);
  const now = deps.clock.now();
  return audited(deps, who, async (trx, note) => {
    const t = await findToken(trx, id);
    if (!t || t.user_id !== userId) throw notFound(`Token ${id}`);
    await revokeToken(trx, id, now);
    const after = tokenView((await findToken(trx, id))!, now);
    note({ action: 'token.revoke', target: `token:${id}`, before: tokenView(t, now), after });
    return { ok: true as const, ...after };
  });
}

export async function sessions(deps: Deps, p: Principal) {
  const rows = await listUserSessions(deps.db.db, requireAccount(p));
  return {
    ok: true as const,
    items: rows.map((s) => ({
      // A prefix of the stored digest: enough to tell sessions apart and end one, useless as a cookie.
      id: s.id.slice(0, 16),
      current: s.id === p.sessionId,
      created_at: iso(s.created_at)!,
      last_seen: iso(s.last_seen)!,
      expires_at: iso(s.expires_at)!,
    })),
  };
}

/** What the UI needs to know of who is logged in: role and projects decide what it shows. */
export async function accountInfo(deps: Deps, p: Principal) {
  const u = p.userId === null ? undefined : await findUser(deps.db.db, p.userId);
  const projects =
    p.projectIds === null
      ? null
      : ((u && (await userProjects(deps.db.db, [u.id])).get(u.id)) ?? []).map((x) => x.site_key);
  return {
    id: p.userId,
    email: u?.email ?? null,
    name: u?.name ?? 'root',
    role: p.role,
    projects,
    read_only: p.readOnly,
  };
}

export async function endOwnSession(deps: Deps, p: Principal, who: AuditActor, idPrefix: string) {
  const userId = requireAccount(p);
  await audited(deps, who, async (trx, note) => {
    const wanted = idPrefix.replace(/[^0-9a-f]/g, '');
    const session = (await listUserSessions(trx, userId)).find((s) => s.id.startsWith(wanted));
    if (!session || !(await deleteUserSession(trx, userId, session.id))) throw notFound('Session');
    // Named by a short prefix of the digest's prefix: the log never holds enough to find the session.
    const short = wanted.slice(0, 8);
    note({
      action: 'session.end',
      target: `session:${short}`,
      before: {
        session: short,
        created_at: iso(session.created_at),
        last_seen: iso(session.last_seen),
        expires_at: iso(session.expires_at),
      },
      after: null,
    });
  });
  return { ok: true as const };
}
