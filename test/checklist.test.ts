// The first-run checklist and the template gallery (issue 28): every step is ticked from the project's
// real state as the administrator goes project → template → routing → key → delivery → test e-mail, and
// every gallery template saves as a real template of the project.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isRoutingKey } from '../src/domain/catalog.js';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { SECRET, startSmtp, type TestSmtp } from './fixtures/delivery-support.js';
import { DIALECTS, adminCall, createTestApp, type TestApp } from './support/harness.js';

const SITE = 'kursy';

for (const d of DIALECTS) {
  describe(`first-run checklist [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let relay: TestSmtp;
    before(async () => {
      t = await createTestApp(d.name, {}, { secret: SECRET });
      relay = await startSmtp();
    });
    after(async () => {
      await t?.close();
      await relay?.close();
    });

    const done = async () => {
      const r = await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/checklist`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return Object.fromEntries(r.body.steps.map((s: { step: string; done: boolean }) => [s.step, s.done]));
    };

    it('an unknown project is 404, like every project route', async () => {
      const r = await adminCall(t.app, 'GET', '/api/admin/projects/nope/checklist');
      assert.equal(r.status, 404);
      assert.equal(r.body.detail.error.code, 'not_found');
    });

    it('ticks each step from what the project holds, in order', async () => {
      const created = await adminCall(t.app, 'POST', '/api/sites', {
        site_key: SITE,
        name: 'Курсы',
        from_email: 'noreply@kursy.example',
      });
      assert.ok(created.status < 300, JSON.stringify(created.body));
      assert.deepEqual(await done(), {
        project: true,
        template: false,
        routing: false,
        key: false,
        delivery: false,
        test_email: false,
      });

      const gallery = await adminCall(t.app, 'GET', '/api/admin/ui/template-gallery');
      assert.equal(gallery.status, 200);
      const paid = gallery.body.items.find((x: { routing_key: string }) => x.routing_key === 'course_paid');
      assert.match(paid.subject, /оплата курса/);
      const { routing_key: _k, ...body } = paid;
      assert.equal((await adminCall(t.app, 'POST', '/api/templates', { site_key: SITE, ...body })).status, 200);
      assert.equal((await done()).template, true);

      const routed = await adminCall(t.app, 'PUT', `/api/admin/projects/${SITE}/routing`, {
        routes: { course_paid: paid.name },
      });
      assert.equal(routed.status, 200);
      assert.equal((await done()).routing, true);

      // A key that may send nothing is refused every call: the step stays open until it may.
      const key = await adminCall(t.app, 'POST', '/api/admin/keys', {
        site_key: SITE,
        name: 'сайт',
        rights: { permissions: ['transactional_send'], allowed_api_events: [] },
      });
      assert.ok(key.status < 300, JSON.stringify(key.body));
      assert.equal((await done()).key, false);
      const patched = await adminCall(t.app, 'PATCH', `/api/admin/keys/${key.body.id}`, {
        rights: { permissions: ['transactional_send'], allowed_api_events: ['course_paid'] },
      });
      assert.equal(patched.status, 200);
      assert.equal((await done()).key, true);

      const own = await adminCall(t.app, 'PUT', `/api/admin/projects/${SITE}/delivery`, {
        primary: { smtp_url: relay.url },
      });
      assert.equal(own.status, 200, JSON.stringify(own.body));
      assert.equal((await done()).delivery, true);

      // Queued is not enough: the step is ticked once the test e-mail went out.
      const test = await adminCall(t.app, 'POST', `/api/admin/projects/${SITE}/delivery/test`, {
        template: paid.name,
        to: 'admin@kursy.example',
      });
      assert.equal(test.status, 200);
      assert.equal((await done()).test_email, false);
      const worker = createWorker({
        db: t.deps.db,
        transport: createCaptureTransport(),
        clock: t.clock,
        publicUrl: 'https://mail.example.test',
        secret: SECRET,
      });
      await worker.runOnce();
      await worker.stop();
      assert.equal(relay.accepted.length, 1);
      const all = await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/checklist`);
      assert.equal(all.body.complete, true);
      assert.ok(all.body.steps.every((s: { done: boolean }) => s.done));
    });

    it('every gallery template saves as a template of the project, one per routing key', async () => {
      const gallery = (await adminCall(t.app, 'GET', '/api/admin/ui/template-gallery')).body.items;
      assert.ok(gallery.length >= 15, `only ${gallery.length} starting templates`);
      const keys = gallery.map((x: { routing_key: string }) => x.routing_key);
      assert.equal(new Set(keys).size, keys.length);
      for (const { routing_key, ...body } of gallery) {
        assert.ok(isRoutingKey(routing_key), routing_key);
        // Russian for the reader: no Latin word once the Liquid tags are set aside.
        const words = (body.subject + body.text).replace(/\{[{%][^}]*[}%]\}/g, '');
        assert.doesNotMatch(words, /[A-Za-z]{3,}/, `${routing_key}: ${words}`);
        const r = await adminCall(t.app, 'POST', '/api/templates', { site_key: SITE, ...body });
        assert.equal(r.status, 200, `${routing_key}: ${JSON.stringify(r.body)}`);
      }
    });
  });
}
