// SPEC §14 through the HTTP layer: accounts, login, personal tokens, disabling, and the audit log.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  bearerCall,
  createUser,
  login,
  PASSWORD,
  personalToken,
  sessionCall,
  viewerToken,
} from './support/accounts.js';
import { purgeExpired } from '../src/delivery/retention.js';
import { countUsers } from '../src/repos/adminUsers.js';
import { SetupCode } from '../src/services/setup.js';
import { adminCall, createTestApp, DIALECTS, rawCall, setupProject, type TestApp } from './support/harness.js';

for (const d of DIALECTS) {
  describe(`admin accounts, tokens and audit [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let adminId: number;

    before(async () => {
      t = await createTestApp(d.name);
      await setupProject(t.app, { site: 'alpha' });
      await setupProject(t.app, { site: 'beta' });
      await createUser(t.app, { email: 'owner@x.example', role: 'owner' });
      adminId = await createUser(t.app, { email: 'alpha-admin@x.example', role: 'project_admin', projects: ['alpha'] });
    });
    after(() => t.close());

    it('refuses bad accounts with the envelope and changes nothing', async () => {
      const cases: [unknown, number, string][] = [
        [{ email: 'a@x.example', password: 'short', role: 'viewer' }, 422, 'validation_error'],
        [{ email: 'a@x.example', password: '1234567890', role: 'viewer' }, 422, 'validation_error'],
        [{ email: 'a@x.example', password: PASSWORD, role: 'viewer', projects: ['nope'] }, 422, 'validation_error'],
        [{ email: 'not-an-address', password: PASSWORD, role: 'viewer' }, 422, 'validation_error'],
        [{ email: 'a@x.example', password: PASSWORD, role: 'king' }, 422, 'validation_error'],
        [{ email: 'OWNER@x.example', password: PASSWORD, role: 'viewer' }, 409, 'conflict'],
      ];
      for (const [body, status, code] of cases) {
        const r = await adminCall(t.app, 'POST', '/api/admin/users', body);
        assert.equal(r.status, status, JSON.stringify(r.body));
        assert.equal(r.body.detail.error.code, code);
        assert.ok(!JSON.stringify(r.body).includes(PASSWORD));
      }
      const users = (await adminCall(t.app, 'GET', '/api/admin/users')).body.items;
      assert.deepEqual(users.map((u: any) => u.email).sort(), ['alpha-admin@x.example', 'owner@x.example']);
      for (const u of users) assert.equal(u.password_hash, undefined);
    });

    it('login: wrong password and unknown account are the same 401; the session knows the role', async () => {
      const wrong = await rawCall(
        t.app,
        'POST',
        '/api/admin/session',
        {},
        { email: 'owner@x.example', password: 'nope nope nope' },
      );
      const unknown = await rawCall(
        t.app,
        'POST',
        '/api/admin/session',
        {},
        { email: 'who@x.example', password: PASSWORD },
      );
      assert.equal(wrong.status, 401);
      assert.deepEqual(wrong.body, unknown.body);
      const s = await login(t.app, 'alpha-admin@x.example');
      const me = await sessionCall(t.app, s, 'GET', '/api/admin/session');
      assert.equal(me.body.account.role, 'project_admin');
      assert.deepEqual(me.body.account.projects, ['alpha']);
      const sessions = await sessionCall(t.app, s, 'GET', '/api/admin/sessions');
      assert.equal(sessions.body.items.filter((x: any) => x.current).length, 1);
    });

    it('personal tokens: shown once, stored hashed, read-only, expiring, revocable', async () => {
      const s = await login(t.app, 'alpha-admin@x.example');
      const rw = await personalToken(t.app, s, { name: 'deploy' });
      assert.match(rw.token, /^egwa_/);
      const list = await sessionCall(t.app, s, 'GET', '/api/admin/tokens');
      assert.ok(!JSON.stringify(list.body).includes(rw.token), 'the list never holds the token');
      const stored = await t.deps.db.db.selectFrom('admin_tokens').selectAll().execute();
      assert.ok(!JSON.stringify(stored).includes(rw.token), 'the database holds only a hash');
      assert.equal((await bearerCall(t.app, rw.token, 'GET', '/api/admin/projects/alpha/routing')).status, 200);
      assert.equal((await bearerCall(t.app, rw.token, 'GET', '/api/admin/projects/beta/routing')).status, 404);

      const ro = await personalToken(t.app, s, { name: 'reader', read_only: true });
      const put = await bearerCall(t.app, ro.token, 'PUT', '/api/admin/projects/alpha/routing', { routes: {} });
      assert.equal(put.status, 403);
      assert.equal(put.body.detail.error.code, 'permission_denied');
      assert.equal((await bearerCall(t.app, ro.token, 'GET', '/api/admin/projects/alpha/routing')).status, 200);
      // A read-only token cannot open a UI session that could change things.
      assert.equal((await rawCall(t.app, 'POST', '/api/admin/session', {}, { token: ro.token })).status, 403);

      const soon = await personalToken(t.app, s, {
        name: 'short',
        expires_at: new Date(t.clock.now() + 60_000).toISOString(),
      });
      assert.equal((await bearerCall(t.app, soon.token, 'GET', '/api/admin/projects')).status, 200);
      t.clock.advance(61_000);
      const expired = await bearerCall(t.app, soon.token, 'GET', '/api/admin/projects');
      assert.equal(expired.status, 401);
      assert.equal(expired.body.detail.error.code, 'unauthorized');
      const past = await sessionCall(t.app, s, 'POST', '/api/admin/tokens', {
        name: 'x',
        expires_at: '2000-01-01T00:00:00Z',
      });
      assert.equal(past.status, 422);

      assert.equal((await sessionCall(t.app, s, 'POST', `/api/admin/tokens/${rw.id}/revoke`)).status, 200);
      assert.equal((await bearerCall(t.app, rw.token, 'GET', '/api/admin/projects')).status, 401);
      // Someone else's token is not found, not revoked.
      const o = await login(t.app, 'owner@x.example');
      assert.equal((await sessionCall(t.app, o, 'POST', `/api/admin/tokens/${ro.id}/revoke`)).status, 404);
      assert.equal((await bearerCall(t.app, ro.token, 'GET', '/api/admin/projects')).status, 200);
    });

    it('an owner disables an account: its sessions and tokens stop at the next request', async () => {
      const id = await createUser(t.app, { email: 'leaver@x.example', role: 'project_admin', projects: ['beta'] });
      const s = await login(t.app, 'leaver@x.example');
      const tok = await personalToken(t.app, s);
      assert.equal((await bearerCall(t.app, tok.token, 'GET', '/api/admin/projects')).status, 200);
      const r = await adminCall(t.app, 'POST', `/api/admin/users/${id}/disable`);
      assert.equal(r.status, 200);
      assert.equal(r.body.user.status, 'disabled');
      assert.equal((await bearerCall(t.app, tok.token, 'GET', '/api/admin/projects')).status, 401);
      assert.equal((await sessionCall(t.app, s, 'GET', '/api/admin/projects')).status, 401);
      const again = await rawCall(
        t.app,
        'POST',
        '/api/admin/session',
        {},
        { email: 'leaver@x.example', password: PASSWORD },
      );
      assert.equal(again.status, 401);
      // The last active owner cannot be disabled or demoted.
      const owners = (await adminCall(t.app, 'GET', '/api/admin/users')).body.items.filter(
        (u: any) => u.role === 'owner',
      );
      assert.equal(owners.length, 1);
      assert.equal((await adminCall(t.app, 'POST', `/api/admin/users/${owners[0].id}/disable`)).status, 409);
      assert.equal(
        (await adminCall(t.app, 'PATCH', `/api/admin/users/${owners[0].id}`, { role: 'viewer' })).status,
        409,
      );
    });

    it('PATCH changes role and projects; the new rights apply at the next request', async () => {
      const id = await createUser(t.app, { email: 'mover@x.example', role: 'viewer', projects: ['alpha'] });
      const tok = { token: await viewerToken(t.app, 'mover@x.example') };
      assert.equal((await bearerCall(t.app, tok.token, 'GET', '/api/admin/projects/beta/routing')).status, 404);
      const r = await adminCall(t.app, 'PATCH', `/api/admin/users/${id}`, {
        role: 'project_admin',
        projects: ['beta'],
      });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.user.projects, ['beta']);
      assert.equal((await bearerCall(t.app, tok.token, 'GET', '/api/admin/projects/beta/routing')).status, 200);
      assert.equal((await bearerCall(t.app, tok.token, 'GET', '/api/admin/projects/alpha/routing')).status, 404);
    });

    it('login: an account locked by failures still lets in the right password from an address without failures', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await t.app.inject({
          method: 'POST',
          url: '/api/admin/session',
          remoteAddress: `10.0.0.${i}`,
          payload: { email: 'target@x.example', password: `guess number ${i}` },
        });
        statuses.push(r.statusCode);
      }
      // Each address is new: every guess is checked (and wrong); an address that failed is refused.
      assert.deepEqual(statuses, Array(12).fill(401));
      const again = await t.app.inject({
        method: 'POST',
        url: '/api/admin/session',
        remoteAddress: '10.0.0.3',
        payload: { email: 'target@x.example', password: 'guess again' },
      });
      assert.equal(again.statusCode, 429);
    });

    it('the audit log records who changed what, with secrets redacted, filtered per project', async () => {
      const s = await login(t.app, 'alpha-admin@x.example');
      const tok = await personalToken(t.app, s, { name: 'audit-test' });
      const key = await bearerCall(t.app, tok.token, 'POST', '/api/admin/keys', {
        site_key: 'alpha',
        name: 'from script',
        rights: { permissions: ['transactional_send'] },
      });
      assert.equal(key.status, 201);
      await sessionCall(t.app, s, 'PUT', '/api/admin/projects/alpha/routing', {
        routes: { contest_results: 'contest_tpl' },
      });
      // A refused change leaves no row.
      await bearerCall(t.app, tok.token, 'PUT', '/api/admin/projects/alpha/routing', { routes: { nope: 'x' } });

      const all = (await adminCall(t.app, 'GET', '/api/admin/audit?limit=500')).body.items;
      const text = JSON.stringify(all);
      assert.ok(!text.includes(key.body.key), 'the API key is redacted');
      assert.ok(!text.includes(tok.token), 'the personal token is redacted');
      assert.ok(!text.includes(PASSWORD), 'no password');
      const keyRow = all.find((r: any) => r.action === 'key.create' && r.actor !== 'root');
      assert.equal(keyRow.actor, 'alpha-admin@x.example');
      assert.equal(keyRow.via, 'token');
      assert.equal(keyRow.site_key, 'alpha');
      assert.equal(keyRow.after.key, undefined, 'the key itself is not part of what is recorded');
      assert.equal(keyRow.after.name, 'from script');
      assert.equal(keyRow.target, `key:${key.body.id}`);
      assert.deepEqual(keyRow.token, { id: tok.id, name: 'audit-test' }, 'the token that made the change is named');
      const routing = all.filter((r: any) => r.action === 'routing.replace' && r.site_key === 'alpha');
      assert.equal(routing.length, 1 + 1 /* setupProject's, as root */);
      assert.equal(routing[0].via, 'session');
      assert.equal(routing[0].token, null);
      assert.deepEqual(routing[0].after, { contest_results: 'contest_tpl' });
      assert.deepEqual(routing[0].before, routing[1].after, 'before is what the previous change left');
      const created = all.find((r: any) => r.action === 'user.create' && r.after.email === 'alpha-admin@x.example');
      assert.equal(created.actor, 'root');
      assert.equal(created.via, 'root');

      // The project admin sees its project's rows only; another project is 404.
      const mine = (await bearerCall(t.app, tok.token, 'GET', '/api/admin/audit?limit=500')).body.items;
      assert.ok(mine.length > 0);
      for (const r of mine) assert.equal(r.site_key, 'alpha');
      assert.equal((await bearerCall(t.app, tok.token, 'GET', '/api/admin/audit?site_key=beta')).status, 404);

      // Filters and paging.
      const byActor = (await adminCall(t.app, 'GET', '/api/admin/audit?actor=alpha-admin@x.example')).body.items;
      assert.ok(byActor.length >= 3);
      for (const r of byActor) assert.equal(r.actor, 'alpha-admin@x.example');
      const future = new Date(t.clock.now() + 3_600_000).toISOString();
      assert.equal((await adminCall(t.app, 'GET', `/api/admin/audit?since=${future}`)).body.items.length, 0);
      const seen = new Set<number>();
      let cursor: string | null = null;
      do {
        const page: any = (
          await adminCall(t.app, 'GET', `/api/admin/audit?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
        ).body;
        for (const r of page.items) seen.add(r.id);
        cursor = page.next_cursor;
      } while (cursor);
      assert.equal(seen.size, all.length);
      const bad = await adminCall(t.app, 'GET', '/api/admin/audit?cursor=garbage');
      assert.equal(bad.status, 422);
    });

    it('audit rows are kept for the configured period, then purged', async () => {
      const db = t.deps.db.db;
      const old = t.clock.now() - 400 * 86_400_000;
      await db
        .insertInto('audit_log')
        .values({
          at: old,
          actor: 'root',
          via: 'root',
          address: null,
          action: 'old.change',
          site_key: null,
          target: null,
          before: null,
          after: null,
        })
        .execute();
      const before = (await db.selectFrom('audit_log').select('id').execute()).length;
      const p = await purgeExpired(
        db,
        { eventPayloadDays: 90, messageBodyDays: 30, idempotencyDays: 7, auditDays: 365 },
        t.clock.now(),
      );
      assert.equal(p.auditRows, 1);
      assert.equal((await db.selectFrom('audit_log').select('id').execute()).length, before - 1);
    });

    it('the audit log cannot be changed through the API', () => {
      const writes = t.app.adminRoutes.filter((r) => r.url.startsWith('/api/admin/audit') && r.method !== 'GET');
      assert.deepEqual(writes, []);
      assert.ok(adminId > 0);
    });
  });
}

for (const d of DIALECTS) {
  describe(`first-run setup under concurrent requests [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(d.name, { ADMIN_TOKEN: '' });
    });
    after(() => t.close());

    it('one setup code makes one owner, however many requests carry it at once', async () => {
      t.deps.setup = new SetupCode();
      const code = t.deps.setup.issue(t.clock.now());
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          rawCall(t.app, 'POST', '/api/admin/setup', {}, { code, email: `owner${i}@x.example`, password: PASSWORD }),
        ),
      );
      const statuses = answers.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 201).length, 1, JSON.stringify(statuses));
      for (const r of answers) if (r.status !== 201) assert.ok([404, 409].includes(r.status), JSON.stringify(r.body));
      assert.equal(await countUsers(t.deps.db.db), 1);
      assert.ok(!JSON.stringify(answers.map((r) => r.body)).includes(code));
    });
  });
}
