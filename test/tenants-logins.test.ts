// SPEC §21 "logins": failed logins are counted per account and per source address, in the database, so
// two API processes (here two apps over one database, each with its own connection) agree. A right
// password from an address without failures always gets in; there is no installation-wide lockout; a
// lock ends by itself within 15 minutes or when an owner unlocks the account (audited). Guesses sent
// all at once cannot slip under the limit. Both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Db } from '../src/db/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { buildApp } from '../src/http/app.js';
import { LOGIN_FAILURES_PER_ACCOUNT, LOGIN_WINDOW_MS } from '../src/services/loginThrottle.js';
import { createUser, PASSWORD } from './support/accounts.js';
import { ADMIN_TOKEN, adminCall, DIALECTS, ManualClock, testDatabase } from './support/harness.js';

for (const d of DIALECTS) {
  describe(`login throttling [${d.name}]`, { skip: d.skip }, () => {
    let base: Awaited<ReturnType<typeof testDatabase>>;
    let second: Db;
    const apps: FastifyInstance[] = [];
    const clock = new ManualClock();
    let victimId: number;

    const loginAt = (i: number, ip: string, body: Record<string, string>) =>
      apps[i % 2].inject({ method: 'POST', url: '/api/admin/session', remoteAddress: ip, payload: body });

    before(async () => {
      base = await testDatabase(d.name);
      await migrateToLatest(base.db);
      second = await openDatabase(base.url, base.schema ? { schema: base.schema } : {});
      const config = loadConfig({ ADMIN_TOKEN, SEND_WAIT_MS: '0' });
      for (const db of [base.db, second]) apps.push(await buildApp({ db, config, clock }));
      victimId = await createUser(apps[0], { email: 'victim@school.example', role: 'project_admin' });
      await createUser(apps[0], { email: 'helper@school.example', role: 'project_admin' });
    });
    after(async () => {
      for (const a of apps) await a.close();
      await second?.close();
      await base?.cleanup();
    });

    it('thirty guesses at once from one address, through two processes: at most the limit are checked', async () => {
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          loginAt(i, '203.0.113.9', { email: 'victim@school.example', password: `guess ${i}` }),
        ),
      );
      const statuses = answers.map((a) => a.statusCode);
      const checked = statuses.filter((s) => s === 401).length;
      assert.ok(
        checked >= LOGIN_FAILURES_PER_ACCOUNT && checked <= LOGIN_FAILURES_PER_ACCOUNT + 1,
        `${checked} guesses checked: ${statuses.join(',')}`,
      );
      assert.equal(statuses.filter((s) => s === 429).length, 30 - checked);
      const refused = answers.find((a) => a.statusCode === 429)!;
      const wait = Number(refused.headers['retry-after']);
      assert.ok(wait >= 1 && wait <= LOGIN_WINDOW_MS / 1000, `Retry-After ${wait}`);
      assert.equal(JSON.parse(refused.body).detail.error.code, 'rate_limited');
    });

    it('the locked account: the right password from the failing address is refused, from a clean one it gets in', async () => {
      const fromAttacker = await loginAt(0, '203.0.113.9', { email: 'victim@school.example', password: PASSWORD });
      assert.equal(fromAttacker.statusCode, 429);
      for (const i of [0, 1]) {
        const fromVictim = await loginAt(i, `198.51.100.${10 + i}`, {
          email: 'victim@school.example',
          password: PASSWORD,
        });
        assert.equal(fromVictim.statusCode, 200, fromVictim.body);
      }
    });

    it('150 failures over 15 addresses lock out no one else, nor the root token', async () => {
      // Wrong tokens (no password hashing: quick on a loaded machine), plus a few wrong passwords.
      const answers = await Promise.all([
        ...Array.from({ length: 150 }, (_, i) =>
          loginAt(i, `192.0.2.${i % 15}`, { token: `wrong-token-${i}-xxxxxxxxxxxxxxxx` }),
        ),
        ...Array.from({ length: 5 }, (_, i) =>
          loginAt(i, `192.0.2.${i}`, { email: `nobody${i}@school.example`, password: 'wrong wrong wrong' }),
        ),
      ]);
      assert.equal(answers.filter((a) => a.statusCode === 401).length, 155);
      const root = await loginAt(0, '198.51.100.50', { token: ADMIN_TOKEN });
      assert.equal(root.statusCode, 200, root.body);
      const helper = await loginAt(1, '198.51.100.51', { email: 'helper@school.example', password: PASSWORD });
      assert.equal(helper.statusCode, 200, helper.body);
    });

    it('an owner unlocks the account (audited); a project admin may not', async () => {
      const adminId = await createUser(apps[0], { email: 'pa@school.example', role: 'project_admin' });
      void adminId;
      const s = await loginAt(0, '198.51.100.60', { email: 'pa@school.example', password: PASSWORD });
      const cookie = String(s.headers['set-cookie']).split(';')[0];
      const csrf = JSON.parse(s.body).csrf_token as string;
      const denied = await apps[1].inject({
        method: 'POST',
        url: `/api/admin/users/${victimId}/unlock`,
        headers: { cookie, 'x-csrf-token': csrf },
      });
      assert.equal(denied.statusCode, 403);
      const r = await adminCall(apps[1], 'POST', `/api/admin/users/${victimId}/unlock`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(r.body.failures_forgotten >= LOGIN_FAILURES_PER_ACCOUNT);
      const audit = (await adminCall(apps[0], 'GET', '/api/admin/audit?action=user.unlock')).body.items;
      assert.equal(audit.length, 1);
      assert.equal(audit[0].target, `user:${victimId}`);
      const back = await loginAt(0, '203.0.113.9', { email: 'victim@school.example', password: PASSWORD });
      assert.equal(back.statusCode, 200, back.body);
    });

    it('a lock ends by itself within 15 minutes', async () => {
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          loginAt(i, '203.0.113.77', { email: 'helper@school.example', password: `guess ${i}` }),
        ),
      );
      assert.equal(
        (await loginAt(0, '203.0.113.77', { email: 'helper@school.example', password: PASSWORD })).statusCode,
        429,
      );
      clock.advance(LOGIN_WINDOW_MS);
      const r = await loginAt(1, '203.0.113.77', { email: 'helper@school.example', password: PASSWORD });
      assert.equal(r.statusCode, 200, r.body);
    });
  });
}
