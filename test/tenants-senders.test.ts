// SPEC §21 "sender domains" beyond PATCH of a project: POST /api/sites and PUT …/delivery check the
// sender addresses too (an owner's change approves their domains, audited; a project administrator's is
// 422 sender_domain_unverified unless the domain is the project's), and a test send approves nothing.
// Through the HTTP layer, both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearerCall, createUser, login, personalToken } from './support/accounts.js';
import { adminCall, createTestApp, DIALECTS, setupProject, type TestApp } from './support/harness.js';

const relay = { smtp_url: 'smtp://127.0.0.1:2525' };

for (const d of DIALECTS) {
  describe(`sender addresses of projects and relays [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let adminA: string;
    const domains = async (site: string) =>
      (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/domains`)).body.items as any[];

    before(async () => {
      t = await createTestApp(d.name);
      await setupProject(t.app, { site: 'proja' });
      await createUser(t.app, { email: 'pa@x.example', role: 'project_admin', projects: ['proja'] });
      adminA = (await personalToken(t.app, await login(t.app, 'pa@x.example'))).token;
    });
    after(async () => {
      await t?.close();
    });

    it("an owner's new project approves its from_email and reply_to domains (audited)", async () => {
      const r = await adminCall(t.app, 'POST', '/api/sites', {
        site_key: 'projb',
        name: 'B',
        from_email: 'billing@projb.example',
        reply_to: 'help@support.projb.example',
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const items = await domains('projb');
      assert.deepEqual(items.map((x) => [x.domain, x.status]).sort(), [
        ['projb.example', 'approved'],
        ['support.projb.example', 'approved'],
      ]);
      const audit = (await adminCall(t.app, 'GET', '/api/admin/audit?action=domain.approve&site_key=projb')).body.items;
      assert.equal(audit.length, 2);
    });

    it("a project administrator cannot put another tenant's domain into POST /api/sites", async () => {
      const r = await bearerCall(t.app, adminA, 'POST', '/api/sites', {
        site_key: 'proja',
        name: 'Site One',
        from_email: 'billing@projb.example',
      });
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.equal(r.body.detail.error.code, 'sender_domain_unverified');
      assert.deepEqual(Object.keys(r.body.detail.error.invalid_fields), ['from_email']);
      const p = (await adminCall(t.app, 'GET', '/api/admin/projects')).body.items.find(
        (x: any) => x.site_key === 'proja',
      );
      assert.equal(p.from_email, 'noreply@site1.example');
      // Its own domain (approved when the owner created the project) passes.
      const own = await bearerCall(t.app, adminA, 'POST', '/api/sites', {
        site_key: 'proja',
        name: 'Site One',
        from_email: 'news@site1.example',
      });
      assert.equal(own.status, 200, JSON.stringify(own.body));
    });

    it("relay settings: the administrator's foreign sender is refused, the owner's approves", async () => {
      const url = '/api/admin/projects/proja/delivery';
      const foreign = await bearerCall(t.app, adminA, 'PUT', url, { primary: relay, from_email: 'x@projb.example' });
      assert.equal(foreign.status, 422, JSON.stringify(foreign.body));
      assert.equal(foreign.body.detail.error.code, 'sender_domain_unverified');
      const reply = await bearerCall(t.app, adminA, 'PUT', url, {
        primary: relay,
        from_email: 'x@site1.example',
        reply_to: 'y@projb.example',
      });
      assert.equal(reply.status, 422);
      assert.deepEqual(Object.keys(reply.body.detail.error.invalid_fields), ['reply_to']);
      assert.equal((await adminCall(t.app, 'GET', url)).body.configured, false);
      const own = await bearerCall(t.app, adminA, 'PUT', url, { primary: relay, from_email: 'x@site1.example' });
      assert.equal(own.status, 200, JSON.stringify(own.body));
      const byOwner = await adminCall(t.app, 'PUT', url, { primary: relay, from_email: 'mail@relay-a.example' });
      assert.equal(byOwner.status, 200, JSON.stringify(byOwner.body));
      const approved = (await domains('proja')).find((x) => x.domain === 'relay-a.example');
      assert.equal(approved?.status, 'approved');
    });

    it('a test send approves nothing: an unapproved sender is refused even for an owner', async () => {
      await adminCall(t.app, 'DELETE', '/api/admin/projects/proja/delivery');
      // A sender no change approved (as a row written before the upgrade might hold).
      await t.deps.db.db
        .updateTable('projects')
        .set({ from_email: 'old@legacy.example' })
        .where('site_key', '=', 'proja')
        .execute();
      const before = (await domains('proja')).length;
      const r = await adminCall(t.app, 'POST', '/api/admin/projects/proja/delivery/test', {
        template: 'contest_tpl',
        to: 'me@x.example',
      });
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.equal(r.body.detail.error.code, 'sender_domain_unverified');
      assert.equal((await domains('proja')).length, before);
      const audit = (await adminCall(t.app, 'GET', '/api/admin/audit?action=delivery.test_send')).body.items;
      assert.equal(audit.length, 0);
      // Once approved, the same test send goes.
      await adminCall(t.app, 'POST', '/api/admin/projects/proja/domains/legacy.example/approve');
      const ok = await adminCall(t.app, 'POST', '/api/admin/projects/proja/delivery/test', {
        template: 'contest_tpl',
        to: 'me@x.example',
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    });
  });
}
