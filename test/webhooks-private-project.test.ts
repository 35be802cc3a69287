// Local development without a restart (issue 28): an owner lets one project's webhooks go to loopback
// and private addresses. Only an owner may, it is audited, the project says so, other projects stay
// protected, and the worker then really delivers to a receiver on this machine.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createWebhookWorker } from '../src/workers/siteWebhooks.js';
import { sealingSecret } from '../src/services/delivery.js';
import { createUser, login, sessionCall } from './support/accounts.js';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';
import { startReceiver, type Receiver } from './support/webhookReceiver.js';

for (const d of DIALECTS) {
  describe(`private webhook addresses per project [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let rx: Receiver;
    let key: string;

    before(async () => {
      rx = await startReceiver();
      t = await createTestApp(d.name);
      ({ key } = await setupProject(t.app));
      await setupProject(t.app, { site: 'site2' });
    });
    after(async () => {
      await t.close();
      await rx.close();
    });

    const create = (site: string) =>
      adminCall(t.app, 'POST', `/api/admin/projects/${site}/webhooks`, {
        url: `${rx.url}/hook`,
        events: ['event.rejected'],
      });

    it('is off by default: a loopback URL is refused, naming the setting that allows it', async () => {
      const p = await adminCall(t.app, 'GET', '/api/admin/projects');
      assert.ok(p.body.items.every((x: { allow_private_webhooks: boolean }) => x.allow_private_webhooks === false));
      const r = await create('site1');
      assert.equal(r.status, 422);
      assert.match(r.body.detail.error.invalid_fields.url, /allow_private_webhooks/);
    });

    it("a project administrator may not switch it on; the project's other settings stay theirs", async () => {
      await createUser(t.app, { email: 'pa@example.org', role: 'project_admin', projects: ['site1'] });
      const s = await login(t.app, 'pa@example.org');
      const denied = await sessionCall(t.app, s, 'PATCH', '/api/admin/projects/site1', {
        allow_private_webhooks: true,
      });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.detail.error.code, 'permission_denied');
      assert.equal(denied.body.detail.error.permission, 'owner');
      const renamed = await sessionCall(t.app, s, 'PATCH', '/api/admin/projects/site1', { name: 'Site One (dev)' });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.project.allow_private_webhooks, false);
    });

    it('an owner switches it on for one project: audited, shown, and the worker delivers to this machine', async () => {
      const on = await adminCall(t.app, 'PATCH', '/api/admin/projects/site1', { allow_private_webhooks: true });
      assert.equal(on.status, 200);
      assert.equal(on.body.project.allow_private_webhooks, true);
      const audit = await adminCall(t.app, 'GET', '/api/admin/audit?site_key=site1&action=project.update');
      const row = audit.body.items.find((i: any) => i.after?.allow_private_webhooks === true);
      assert.ok(row, 'the change is in the audit log with before and after');
      assert.equal(row.before.allow_private_webhooks, false);

      assert.equal((await create('site1')).status, 201);
      assert.equal((await create('site2')).status, 422, 'another project stays protected');

      const refused = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', { email: 'x@example.com' });
      assert.equal(refused.status, 422);
      // The worker runs with the installation's default (private addresses refused): the project decides.
      const w = createWebhookWorker({
        db: t.deps.db,
        config: { ...t.config.webhooks, allowPrivate: false },
        secret: await sealingSecret(t.deps),
        clock: t.clock,
      });
      assert.equal(await w.runOnce(), 1);
      assert.equal(rx.received.length, 1);
      assert.equal(rx.received[0].path, '/hook');
    });

    it('switched off again, the next attempt to a loopback address is refused at send time', async () => {
      await adminCall(t.app, 'PATCH', '/api/admin/projects/site1', { allow_private_webhooks: false });
      await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', { email: 'y@example.com' });
      const w = createWebhookWorker({
        db: t.deps.db,
        config: { ...t.config.webhooks, allowPrivate: false },
        secret: await sealingSecret(t.deps),
        clock: t.clock,
      });
      const before = rx.received.length;
      assert.equal(await w.runOnce(), 1);
      assert.equal(rx.received.length, before, 'nothing reached the receiver');
      const a = await t.deps.db.db
        .selectFrom('webhook_attempts')
        .selectAll()
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      assert.match(a.error!, /private or loopback address/);
    });
  });
}
