// SPEC §21 "read-only means read-only": a viewer (by session or token) or a read-only personal token
// changes nothing. Every non-GET admin route of the app is called as each of them; a route declared as a
// change answers 403 `permission_denied`, and whatever answers, no table of the database changes.
// Also the reproduction: a read-only token revoking the account's read-write token, and ending
// the account's UI session. Both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { checkDeclaredAccess } from '../src/http/plugins/access.js';
import {
  bearerCall,
  createUser,
  login,
  personalToken,
  sessionCall,
  viewerToken,
  type Session,
} from './support/accounts.js';
import { ownTableNames } from './support/tables.js';
import { createTestApp, DIALECTS, setupProject, type TestApp } from './support/harness.js';

/** Every table's rows, the last-seen times of sessions and tokens aside (a read refreshes them). */
async function snapshot(t: TestApp): Promise<Record<string, unknown[]>> {
  const tables = await ownTableNames(t.deps.db);
  const out: Record<string, unknown[]> = {};
  for (const name of tables) {
    if (/^(kysely_|_)/.test(name)) continue;
    const rows = (await t.deps.db.db
      .selectFrom(name as 'projects')
      .selectAll()
      .execute()) as Record<string, unknown>[];
    out[name] = rows.map((r) => JSON.stringify({ ...r, last_seen_at: 0, last_used_at: 0, expires_at: 0 })).sort();
  }
  return out;
}

describe('declared writes', () => {
  it('a non-GET admin route that does not say whether it writes stops the app from starting', async () => {
    const app = Fastify();
    checkDeclaredAccess(app);
    await assert.rejects(async () => {
      app.post('/api/admin/forgotten', { config: { access: { project: 'params.site_key' } } }, async () => ({}));
      await app.ready();
    }, /POST \/api\/admin\/forgotten must declare write: true/);
    const fine = Fastify();
    checkDeclaredAccess(fine);
    fine.post('/api/admin/computes', { config: { access: { self: true, write: false } } }, async () => ({}));
    fine.post('/api/admin/login-like', { config: { access: { public: true } } }, async () => ({}));
    fine.get('/api/admin/reads', { config: { access: { self: true } } }, async () => ({}));
    await fine.ready();
    await fine.close();
  });
});

for (const d of DIALECTS) {
  describe(`read-only means read-only [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let adminSession: Session;
    let viewerSession: Session;
    const callers: {
      name: string;
      call: (method: string, url: string, body?: unknown) => ReturnType<typeof bearerCall>;
    }[] = [];

    before(async () => {
      t = await createTestApp(d.name);
      await setupProject(t.app, { site: 'mine' });
      await createUser(t.app, { email: 'admin@x.example', role: 'project_admin', projects: ['mine'] });
      await createUser(t.app, { email: 'viewer@x.example', role: 'viewer', projects: ['mine'] });
      adminSession = await login(t.app, 'admin@x.example');
      const readOnly = (await personalToken(t.app, adminSession, { read_only: true })).token;
      const viewer = await viewerToken(t.app, 'viewer@x.example');
      viewerSession = await login(t.app, 'viewer@x.example');
      callers.push(
        { name: 'read-only token', call: (m, u, b) => bearerCall(t.app, readOnly, m, u, b) },
        { name: 'viewer token', call: (m, u, b) => bearerCall(t.app, viewer, m, u, b) },
        { name: 'viewer session', call: (m, u, b) => sessionCall(t.app, viewerSession, m, u, b) },
      );
    });
    after(() => t.close());

    it('every non-GET admin route, as a viewer and a read-only token: 403 for a change, and nothing changes', async () => {
      const before = await snapshot(t);
      const failures: string[] = [];
      let refused = 0;
      const routes = t.app.adminRoutes.filter((r) => r.method !== 'GET' && !r.access.public);
      assert.ok(routes.length >= 40, `only ${routes.length} non-GET admin routes`);
      for (const r of routes) {
        const url = r.url
          .replace(':site_key', 'mine')
          .replace(':session_id', '0123456789abcdef')
          .replace(/:[a-z_]+/g, '1');
        const body = r.method === 'DELETE' ? undefined : { site_key: 'mine', name: 'x' };
        for (const c of callers) {
          const res = await c.call(r.method, url, body);
          if (r.access.write) {
            refused++;
            if (res.status !== 403 || res.body?.detail?.error?.code !== 'permission_denied')
              failures.push(`${c.name} ${r.method} ${url}: ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`);
          }
        }
      }
      assert.deepEqual(failures, []);
      assert.ok(refused > 100, `${refused} refusals`);
      const now = await snapshot(t);
      const changed = Object.keys(now).filter((k) => JSON.stringify(now[k]) !== JSON.stringify(before[k]));
      assert.deepEqual(changed, [], 'tables the calls changed');
    });

    it('a read-only token can neither revoke the account’s tokens nor end its sessions', async () => {
      const writer = await personalToken(t.app, adminSession, { name: 'deploy' });
      const readOnly = await personalToken(t.app, adminSession, { name: 'reader', read_only: true });
      const revoke = await bearerCall(t.app, readOnly.token, 'POST', `/api/admin/tokens/${writer.id}/revoke`);
      assert.equal(revoke.status, 403);
      assert.equal(revoke.body.detail.error.code, 'permission_denied');
      const sessions = (await bearerCall(t.app, readOnly.token, 'GET', '/api/admin/sessions')).body.items;
      assert.ok(sessions.length >= 1);
      const end = await bearerCall(t.app, readOnly.token, 'DELETE', `/api/admin/sessions/${sessions[0].id}`);
      assert.equal(end.status, 403);
      assert.equal(end.body.detail.error.code, 'permission_denied');
      const mint = await bearerCall(t.app, readOnly.token, 'POST', '/api/admin/tokens', { name: 'longer' });
      assert.equal(mint.status, 403);
      // Both are still alive.
      assert.equal((await bearerCall(t.app, writer.token, 'GET', '/api/admin/tokens')).status, 200);
      assert.equal((await sessionCall(t.app, adminSession, 'GET', '/api/admin/session')).status, 200);
      // The account itself (read-write) may still revoke and end its own.
      assert.equal(
        (await bearerCall(t.app, writer.token, 'POST', `/api/admin/tokens/${readOnly.id}/revoke`)).status,
        200,
      );
    });
  });
}
