// Administrator accounts in tests: create through the root token, log in, make personal tokens.
import type { FastifyInstance } from 'fastify';
import { adminCall, rawCall, type Call } from './harness.js';

export const PASSWORD = 'correct horse battery staple';

export interface Session {
  cookie: string;
  csrf: string;
}

export async function createUser(
  app: FastifyInstance,
  u: { email: string; role: string; projects?: string[]; password?: string; name?: string },
): Promise<number> {
  const r = await adminCall(app, 'POST', '/api/admin/users', { password: PASSWORD, ...u });
  if (r.status !== 201) throw new Error(`user creation failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.user.id as number;
}

export async function login(app: FastifyInstance, email: string, password = PASSWORD): Promise<Session> {
  const r = await rawCall(app, 'POST', '/api/admin/session', {}, { email, password });
  if (r.status !== 200) throw new Error(`login failed: ${r.status} ${JSON.stringify(r.body)}`);
  const set = String(r.headers['set-cookie']);
  return { cookie: set.split(';')[0], csrf: r.body.csrf_token as string };
}

export const sessionCall = (app: FastifyInstance, s: Session, method: string, url: string, payload?: unknown) =>
  rawCall(app, method, url, { cookie: s.cookie, 'x-csrf-token': s.csrf }, payload);

export const bearerCall = (app: FastifyInstance, token: string, method: string, url: string, payload?: unknown) =>
  rawCall(app, method, url, { authorization: `Bearer ${token}` }, payload);

export async function personalToken(
  app: FastifyInstance,
  s: Session,
  opts: { name?: string; read_only?: boolean; expires_at?: string } = {},
): Promise<{ id: number; token: string }> {
  const r: Call = await sessionCall(app, s, 'POST', '/api/admin/tokens', { name: 'script', ...opts });
  if (r.status !== 201) throw new Error(`token creation failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.id, token: r.body.token };
}

/**
 * A personal token of a viewer. A viewer may create no token itself (SPEC §21: it changes nothing), so
 * the account makes it while a project admin and is then made a viewer; the token follows the account's
 * role at every request.
 */
export async function viewerToken(app: FastifyInstance, email: string): Promise<string> {
  const r = await adminCall(app, 'GET', '/api/admin/users');
  const user = (r.body.items as { id: number; email: string }[]).find((u) => u.email === email);
  if (!user) throw new Error(`no account ${email}`);
  const role = async (to: string) => {
    const c = await adminCall(app, 'PATCH', `/api/admin/users/${user.id}`, { role: to });
    if (c.status !== 200) throw new Error(`role change failed: ${c.status} ${JSON.stringify(c.body)}`);
  };
  await role('project_admin');
  const { token } = await personalToken(app, await login(app, email));
  await role('viewer');
  return token;
}
