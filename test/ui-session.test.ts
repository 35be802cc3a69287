// Admin UI sessions: login, cookie attributes, CSRF on changes, expiry, logout and the login rate limit,
// on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { LOGIN_FAILURES_PER_ADDRESS, LOGIN_WINDOW_MS } from '../src/services/loginThrottle.js';
import { SESSION_IDLE_MS, SESSION_LIFETIME_MS } from '../src/services/sessions.js';
import { ADMIN_TOKEN, createTestApp, DIALECTS, type TestApp } from './support/harness.js';

interface Res {
  status: number;
  body: any;
  headers: Record<string, any>;
}

async function req(
  app: FastifyInstance,
  method: string,
  url: string,
  o: { cookie?: string; csrf?: string; body?: unknown; ip?: string; headers?: Record<string, string> } = {},
): Promise<Res> {
  const res = await app.inject({
    method: method as 'GET',
    url,
    remoteAddress: o.ip ?? '127.0.0.1',
    headers: {
      ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(o.cookie ? { cookie: o.cookie } : {}),
      ...(o.csrf ? { 'x-csrf-token': o.csrf } : {}),
      ...(o.headers ?? {}),
    },
    payload: o.body === undefined ? undefined : JSON.stringify(o.body),
  });
  let body: any = res.body;
  try {
    body = JSON.parse(res.body);
  } catch {
    /* not JSON */
  }
  return { status: res.statusCode, body, headers: res.headers };
}

/** Logs in and returns the cookie pair to send back and the CSRF token. */
async function login(app: FastifyInstance, ip = '127.0.0.1') {
  const r = await req(app, 'POST', '/api/admin/session', { body: { token: ADMIN_TOKEN }, ip });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const setCookie = String(r.headers['set-cookie']);
  return { cookie: setCookie.split(';')[0], csrf: r.body.csrf_token as string, setCookie, body: r.body };
}

const site = { site_key: 'ui-site', name: 'UI site', from_email: 'noreply@ui.example' };

for (const d of DIALECTS) {
  describe(`admin UI sessions [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(d.name);
    });
    after(() => t.close());

    it('a wrong token is refused with the envelope; the right one sets an HttpOnly, SameSite=Strict cookie', async () => {
      const bad = await req(t.app, 'POST', '/api/admin/session', {
        body: { token: 'not-the-token-at-all' },
        ip: '10.0.0.1',
      });
      assert.equal(bad.status, 401);
      assert.equal(bad.body.detail.error.code, 'unauthorized');
      assert.equal(bad.headers['set-cookie'], undefined);

      const { setCookie, body, cookie } = await login(t.app, '10.0.0.1');
      assert.match(setCookie, /^egw_session=[A-Za-z0-9_-]{43}; /);
      for (const attr of ['HttpOnly', 'SameSite=Strict', 'Path=/', `Max-Age=${SESSION_LIFETIME_MS / 1000}`])
        assert.ok(setCookie.includes(attr), attr);
      assert.ok(!setCookie.includes('Secure'), 'no Secure flag over plain http');
      assert.equal(typeof body.csrf_token, 'string');
      assert.ok(body.csrf_token.length >= 32);
      // The database keeps the token's hash, never the token.
      const token = cookie.split('=')[1];
      const rows = await t.deps.db.db.selectFrom('sessions').selectAll().execute();
      assert.ok(rows.some((r) => r.id === createHash('sha256').update(token).digest('hex')));
      assert.ok(!rows.some((r) => r.id === token));
    });

    it('the cookie opens the admin API for reading; changes need the CSRF token', async () => {
      const { cookie, csrf } = await login(t.app);
      assert.equal((await req(t.app, 'GET', '/api/admin/projects')).status, 401, 'nothing without the cookie');
      assert.equal((await req(t.app, 'GET', '/api/admin/projects', { cookie })).status, 200);

      const noToken = await req(t.app, 'POST', '/api/sites', { cookie, body: site });
      assert.equal(noToken.status, 403);
      assert.equal(noToken.body.detail.error.code, 'csrf_failed');
      const wrong = await req(t.app, 'POST', '/api/sites', { cookie, csrf: `${csrf}x`, body: site });
      assert.equal(wrong.status, 403);
      const foreign = await req(t.app, 'POST', '/api/sites', {
        cookie,
        csrf,
        body: site,
        headers: { origin: 'https://evil.example' },
      });
      assert.equal(foreign.status, 403, 'a foreign Origin is refused even with the token');
      const ok = await req(t.app, 'POST', '/api/sites', {
        cookie,
        csrf,
        body: site,
        headers: { origin: 'http://localhost:80' },
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const del = await req(t.app, 'PUT', `/api/admin/projects/${site.site_key}/routing`, {
        cookie,
        body: { routes: {} },
      });
      assert.equal(del.status, 403, 'PUT is a change too');
    });

    it('a bearer token decides alone: a cookie beside it neither helps nor needs CSRF', async () => {
      const { cookie } = await login(t.app);
      const r = await req(t.app, 'POST', '/api/sites', {
        cookie,
        body: site,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.equal(r.status, 200);
      const badBearer = await req(t.app, 'GET', '/api/admin/projects', {
        cookie,
        headers: { authorization: 'Bearer wrong-token-0000000000' },
      });
      assert.equal(badBearer.status, 401);
    });

    it('the gateway and the unsubscribe pages ignore the session (no CSRF demanded there)', async () => {
      const { cookie } = await login(t.app);
      const r = await req(t.app, 'POST', '/api/scoped/send/transactional', {
        cookie,
        body: { event_type: 'contest_results', email: 'a@example.org' },
      });
      assert.equal(r.status, 401);
      assert.equal(r.body.detail.error.code, 'missing_api_key');
      const u = await req(t.app, 'POST', '/u/u1.1.1.AAAAAAAAAAAAAAAAAAAAAA', { cookie });
      assert.notEqual(u.status, 403);
    });

    it('GET /api/admin/session gives the CSRF token back to a reloaded page; logout ends the session', async () => {
      const { cookie, csrf } = await login(t.app);
      const s = await req(t.app, 'GET', '/api/admin/session', { cookie });
      assert.equal(s.status, 200);
      assert.equal(s.body.csrf_token, csrf);
      assert.equal(s.headers['cache-control'], 'no-store');

      assert.equal(
        (await req(t.app, 'DELETE', '/api/admin/session', { cookie })).status,
        403,
        'logout needs the CSRF token too',
      );
      const out = await req(t.app, 'DELETE', '/api/admin/session', { cookie, csrf });
      assert.equal(out.status, 200);
      assert.match(String(out.headers['set-cookie']), /^egw_session=; .*Max-Age=0/);
      assert.equal((await req(t.app, 'GET', '/api/admin/projects', { cookie })).status, 401, 'the old cookie is dead');
      assert.equal((await req(t.app, 'GET', '/api/admin/session', { cookie })).status, 401);
    });

    it('a session ends after 2 h idle, and after 12 h whatever the activity', async () => {
      const idle = await login(t.app);
      t.clock.advance(SESSION_IDLE_MS - 1000);
      assert.equal(
        (await req(t.app, 'GET', '/api/admin/projects', { cookie: idle.cookie })).status,
        200,
        'activity just before the idle limit',
      );
      t.clock.advance(SESSION_IDLE_MS - 1000);
      assert.equal(
        (await req(t.app, 'GET', '/api/admin/projects', { cookie: idle.cookie })).status,
        200,
        'the last request renewed it',
      );
      t.clock.advance(SESSION_IDLE_MS + 1);
      assert.equal(
        (await req(t.app, 'GET', '/api/admin/projects', { cookie: idle.cookie })).status,
        401,
        'idle too long',
      );

      const busy = await login(t.app);
      for (let h = 0; h < 11; h++) {
        t.clock.advance(60 * 60 * 1000);
        assert.equal(
          (await req(t.app, 'GET', '/api/admin/projects', { cookie: busy.cookie })).status,
          200,
          `hour ${h + 1}`,
        );
      }
      t.clock.advance(60 * 60 * 1000);
      assert.equal(
        (await req(t.app, 'GET', '/api/admin/projects', { cookie: busy.cookie })).status,
        401,
        'the 12 h lifetime is over',
      );
    });

    it("a new login replaces the browser's previous session", async () => {
      const first = await login(t.app);
      const second = await req(t.app, 'POST', '/api/admin/session', {
        body: { token: ADMIN_TOKEN },
        cookie: first.cookie,
      });
      assert.equal(second.status, 200);
      assert.equal((await req(t.app, 'GET', '/api/admin/projects', { cookie: first.cookie })).status, 401);
      assert.equal(
        (await req(t.app, 'GET', '/api/admin/projects', { cookie: String(second.headers['set-cookie']).split(';')[0] }))
          .status,
        200,
      );
    });

    it('failed logins are limited per address: then 429 with Retry-After, even with the right token', async () => {
      const ip = '192.0.2.77';
      for (let i = 0; i < LOGIN_FAILURES_PER_ADDRESS; i++) {
        assert.equal(
          (await req(t.app, 'POST', '/api/admin/session', { body: { token: `wrong-${i}-xxxxxxxxxxxx` }, ip })).status,
          401,
        );
      }
      const limited = await req(t.app, 'POST', '/api/admin/session', { body: { token: ADMIN_TOKEN }, ip });
      assert.equal(limited.status, 429);
      assert.equal(limited.body.detail.error.code, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      assert.equal(
        (await req(t.app, 'POST', '/api/admin/session', { body: { token: ADMIN_TOKEN }, ip: '192.0.2.78' })).status,
        200,
        'another address is not affected',
      );
      t.clock.advance(LOGIN_WINDOW_MS + 1000);
      assert.equal(
        (await req(t.app, 'POST', '/api/admin/session', { body: { token: ADMIN_TOKEN }, ip })).status,
        200,
        'allowed again after the window',
      );
    });
  });
}

describe('admin UI sessions: configuration', () => {
  it('behind https the cookie is Secure with the __Host- prefix', async () => {
    const t = await createTestApp('sqlite', { PUBLIC_URL: 'https://mail.example.test' });
    try {
      const r = await req(t.app, 'POST', '/api/admin/session', { body: { token: ADMIN_TOKEN } });
      assert.equal(r.status, 200);
      const c = String(r.headers['set-cookie']);
      assert.match(c, /^__Host-egw_session=/);
      assert.ok(c.includes('; Secure'));
      const cookie = c.split(';')[0];
      assert.equal((await req(t.app, 'GET', '/api/admin/projects', { cookie })).status, 200);
      const sameSiteOrigin = await req(t.app, 'POST', '/api/sites', {
        cookie,
        csrf: r.body.csrf_token,
        body: site,
        headers: { origin: 'https://mail.example.test' },
      });
      assert.equal(sameSiteOrigin.status, 200, 'the PUBLIC_URL origin is ours');
    } finally {
      await t.close();
    }
  });

  it('without ADMIN_TOKEN nobody can log in', async () => {
    const t = await createTestApp('sqlite', { ADMIN_TOKEN: '' });
    try {
      const r = await req(t.app, 'POST', '/api/admin/session', { body: { token: ADMIN_TOKEN } });
      assert.equal(r.status, 401);
      assert.match(r.body.detail.error.message, /ADMIN_TOKEN/);
    } finally {
      await t.close();
    }
  });
});
