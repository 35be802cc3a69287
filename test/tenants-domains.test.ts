// SPEC §21 "sender domains": a project administrator cannot send as another tenant. A domain is added
// (TXT record shown), verified through a small DNS server of the test's own on loopback (DNS_SERVERS),
// or approved by an owner; another project's domain is 409 domain_taken; a from_email on an unverified
// domain is 422 sender_domain_unverified. Both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearerCall, createUser, login, personalToken } from './support/accounts.js';
import { dnsServer } from './support/dns.js';
import { adminCall, createTestApp, DIALECTS, setupProject, type TestApp } from './support/harness.js';

for (const d of DIALECTS) {
  describe(`sender domains [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let dns: Awaited<ReturnType<typeof dnsServer>>;
    const records = new Map<string, string[]>();
    let adminA: string;

    before(async () => {
      dns = await dnsServer(records);
      t = await createTestApp(d.name, { DNS_SERVERS: `127.0.0.1:${dns.port}` });
      await setupProject(t.app, { site: 'proja' });
      await setupProject(t.app, { site: 'projb' });
      await adminCall(t.app, 'PATCH', '/api/admin/projects/projb', { from_email: 'billing@projb.example' });
      await createUser(t.app, { email: 'pa@x.example', role: 'project_admin', projects: ['proja'] });
      adminA = (await personalToken(t.app, await login(t.app, 'pa@x.example'))).token;
    });
    after(async () => {
      await t?.close();
      dns?.close();
    });

    it("an administrator of A cannot take B's sender address", async () => {
      const r = await bearerCall(t.app, adminA, 'PATCH', '/api/admin/projects/proja', {
        from_email: 'billing@projb.example',
      });
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.equal(r.body.detail.error.code, 'sender_domain_unverified');
      assert.deepEqual(Object.keys(r.body.detail.error.invalid_fields), ['from_email']);
      const added = await bearerCall(t.app, adminA, 'POST', '/api/admin/projects/proja/domains', {
        domain: 'projb.example',
      });
      assert.equal(added.status, 200);
      assert.equal(added.body.status, 'pending');
      records.set(added.body.txt_name, [added.body.txt_value]);
      const check = await bearerCall(t.app, adminA, 'POST', '/api/admin/projects/proja/domains/projb.example/verify');
      assert.equal(check.status, 409, JSON.stringify(check.body));
      assert.equal(check.body.detail.error.code, 'domain_taken');
      const approve = await bearerCall(
        t.app,
        adminA,
        'POST',
        '/api/admin/projects/proja/domains/projb.example/approve',
      );
      assert.equal(approve.status, 403);
    });

    it('its own domain: TXT verified through DNS_SERVERS, then the sender is accepted', async () => {
      const added = await bearerCall(t.app, adminA, 'POST', '/api/admin/projects/proja/domains', {
        domain: 'News.ProjA.example',
      });
      assert.equal(added.body.domain, 'news.proja.example');
      assert.equal(added.body.txt_name, '_edu-mail-gateway.news.proja.example');
      const before = await bearerCall(
        t.app,
        adminA,
        'POST',
        '/api/admin/projects/proja/domains/news.proja.example/verify',
      );
      assert.equal(before.status, 200);
      assert.equal(before.body.status, 'pending');
      records.set(added.body.txt_name, ['v=spf1 -all', added.body.txt_value]);
      const ok = await bearerCall(t.app, adminA, 'POST', '/api/admin/projects/proja/domains/news.proja.example/verify');
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.status, 'verified');
      const r = await bearerCall(t.app, adminA, 'PATCH', '/api/admin/projects/proja', {
        from_email: 'hello@news.proja.example',
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const list = (await bearerCall(t.app, adminA, 'GET', '/api/admin/projects/proja/domains')).body.items;
      assert.ok(list.some((x: any) => x.domain === 'news.proja.example' && x.status === 'verified'));
    });

    it('an owner approves (audited), and the administrator may then use the domain', async () => {
      const r = await adminCall(t.app, 'POST', '/api/admin/projects/proja/domains/projb.example/approve');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.status, 'approved');
      const audit = (await adminCall(t.app, 'GET', '/api/admin/audit?action=domain.approve&site_key=proja')).body.items;
      assert.ok(audit.some((a: any) => a.target === 'domain:projb.example'));
      const now = await bearerCall(t.app, adminA, 'PATCH', '/api/admin/projects/proja', {
        from_email: 'billing@projb.example',
      });
      assert.equal(now.status, 200);
    });

    it('the same domain added by many requests at once: one row, one audit entry, no 500', async () => {
      const add = () =>
        bearerCall(t.app, adminA, 'POST', '/api/admin/projects/proja/domains', { domain: 'race.example' });
      const answers = await Promise.all(Array.from({ length: 8 }, add));
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(8).fill(200),
        JSON.stringify(answers.map((a) => a.body)),
      );
      assert.equal(new Set(answers.map((a) => a.body.txt_value)).size, 1, 'every answer shows the one record');
      const listed = (await bearerCall(t.app, adminA, 'GET', '/api/admin/projects/proja/domains')).body.items;
      assert.equal(listed.filter((x: any) => x.domain === 'race.example').length, 1);
      const audit = (await adminCall(t.app, 'GET', '/api/admin/audit?action=domain.add&site_key=proja')).body.items;
      assert.equal(audit.filter((a: any) => a.target === 'domain:race.example').length, 1);
    });
  });
}
