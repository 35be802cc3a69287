// Legacy automation endpoints: unpaid-order, sequences and per-cart-type chains, campaigns, overview.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { adminCall, createTestApp, DIALECTS, events, keyCall, setupProject, type TestApp } from './support/harness.js';

for (const d of DIALECTS) {
  describe(`automation endpoints [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    let key: string;
    let worker: Worker;
    const templateId = async (name: string) =>
      (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`)).body.items.find(
        (x: any) => x.name === name,
      ).id as number;
    before(async () => {
      t = await createTestApp(d.name);
      ({ site, key } = await setupProject(t.app));
      worker = createWorker({
        db: t.deps.db,
        transport: createCaptureTransport(),
        clock: t.clock,
        publicUrl: 'https://gw.example.test',
        secret: 's3cret-0123456789abcdef',
      });
    });
    after(() => t.close());

    it('unpaid-order: the order-created effects for a course cart, logged without a key', async () => {
      const r = await adminCall(t.app, 'POST', '/api/events/unpaid-order', {
        site_key: site,
        email: 'legacy@example.com',
        order_id: 'L-1',
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.cart_type, 'course');
      assert.equal(r.body.scheduled_email_ids.length, 3);
      const logged = await events(t.app, `?site_key=${site}&order_id=L-1`);
      assert.equal(logged[0].endpoint, 'unpaid-order');
      assert.equal(logged[0].key_id, null);
      const missing = await adminCall(t.app, 'POST', '/api/events/unpaid-order', {
        site_key: site,
        email: 'x@example.com',
      });
      assert.equal(missing.status, 422);
      assert.deepEqual(missing.body.detail.error.missing_fields, ['order_id']);
    });

    it("sequences are validated; a sequence can replace a cart type's chain", async () => {
      const bad = await adminCall(t.app, 'POST', '/api/sequences', {
        site_key: site,
        name: 'bad',
        steps: [{ template_id: 999999, delay_minutes: 5 }],
      });
      assert.equal(bad.status, 422);
      assert.ok(bad.body.detail.error.invalid_fields['steps.0.template_id']);
      const neg = await adminCall(t.app, 'POST', '/api/sequences', {
        site_key: site,
        name: 'neg',
        steps: [{ template_id: 1, delay_minutes: -1 }],
      });
      assert.equal(neg.status, 422);
      const empty = await adminCall(t.app, 'POST', '/api/sequences', { site_key: site, name: 'empty', steps: [] });
      assert.equal(empty.status, 422);
      const seq = await adminCall(t.app, 'POST', '/api/sequences', {
        site_key: site,
        name: 'short chain',
        steps: [
          { template_id: await templateId('cart_1h'), delay_minutes: 30 },
          { template_id: await templateId('cart_3d'), delay_minutes: 120 },
        ],
      });
      assert.equal(seq.status, 200);
      const set = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/cart-chains`, {
        chains: { diploma: seq.body.sequence_id },
      });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      assert.deepEqual(set.body.chains, { diploma: seq.body.sequence_id });
      const oc = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'diploma',
        email: 'dip@example.com',
        order_id: 'S-1',
      });
      assert.equal(oc.body.scheduled_email_ids.length, 2);
      const rows = (await adminCall(t.app, 'GET', `/api/admin/emails?order_id=S-1`)).body.items.sort(
        (a: any, b: any) => a.id - b.id,
      );
      assert.deepEqual(
        rows.map((e: any) => (Date.parse(e.due_at) - t.clock.now()) / 60_000),
        [30, 120],
      );
      assert.deepEqual(
        rows.map((e: any) => e.chain_step),
        ['step1', 'step2'],
      );
      // The course chain is still the default one.
      const course = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: 'dip@example.com',
        order_id: 'S-2',
      });
      assert.equal(course.body.scheduled_email_ids.length, 3);
      const reset = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/cart-chains`, {
        chains: { diploma: null },
      });
      assert.deepEqual(reset.body.chains, {});
      const unknown = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/cart-chains`, {
        chains: { course: 999999 },
      });
      assert.equal(unknown.status, 422);
    });

    it('a campaign queues one e-mail per member, suppresses who may not get it, and counts real sends', async () => {
      const list = (await adminCall(t.app, 'POST', '/api/lists', { site_key: site, name: 'campaign book' })).body
        .list_id;
      const ids: number[] = [];
      for (const email of ['c1@example.com', 'c2@example.com', 'c3@example.com', 'c4@example.com']) {
        const c = await adminCall(t.app, 'POST', '/api/contacts/upsert', {
          site_key: site,
          email,
          name: email.slice(0, 2),
        });
        ids.push(c.body.contact_id);
        await adminCall(t.app, 'POST', `/api/lists/${list}/contacts`, { contact_id: c.body.contact_id });
      }
      await adminCall(t.app, 'POST', `/api/admin/contacts/${ids[3]}/status`, { status: 'unsubscribed' });
      // A new project's newsletters need prior consent (SPEC §22); this test is about campaigns, so its
      // project is one that turned that off (test/consent*.test.ts cover consent).
      const open = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/topics`, {
        topics: [{ key: 'newsletters', title: 'News', advertising: true, require_consent: false }],
      });
      assert.equal(open.status, 200, JSON.stringify(open.body));
      const tpl = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'news',
        subject: 'News for {{ name }}',
        html: '<p>{{ name }}</p><a href="{{ unsubscribe_url }}">unsubscribe</a>',
        text: '{{ name }}',
      });
      const later = new Date(t.clock.now() + 3_600_000).toISOString();
      const c = await adminCall(t.app, 'POST', '/api/campaigns', {
        site_key: site,
        template_id: tpl.body.template_id,
        list_id: list,
        send_at: later,
      });
      assert.equal(c.status, 200);
      assert.equal(c.body.recipients, 4);
      let stats = (await adminCall(t.app, 'GET', `/api/campaigns/${c.body.campaign_id}/stats`)).body;
      assert.deepEqual(
        [stats.recipients, stats.scheduled, stats.sent, stats.suppressed, stats.unsubscribed],
        [4, 3, 0, 1, 1],
      );
      assert.equal(await worker.runOnce(), 0, 'nothing before send_at');
      t.clock.advance(3_600_000);
      // A contact blocked after the campaign was created gets nothing either (checked at send time).
      await adminCall(t.app, 'POST', `/api/admin/contacts/${ids[2]}/status`, { status: 'admin_blocked' });
      while ((await worker.runOnce()) > 0);
      stats = (await adminCall(t.app, 'GET', `/api/campaigns/${c.body.campaign_id}/stats`)).body;
      assert.deepEqual(
        [stats.recipients, stats.scheduled, stats.sent, stats.suppressed, stats.failed, stats.cancelled],
        [4, 0, 2, 2, 0, 0],
      );
      const sent = (await adminCall(t.app, 'GET', `/api/admin/emails?campaign_id=${c.body.campaign_id}&status=sent`))
        .body.items;
      const detail = (await adminCall(t.app, 'GET', `/api/admin/emails/${sent[0].id}`)).body;
      assert.match(detail.subject, /^News for c[12]$/);
      assert.match(
        detail.headers['List-Unsubscribe'] ?? detail.headers['list-unsubscribe'],
        /^<https:\/\/gw\.example\.test\/u\//,
      );
      const wrong = await adminCall(t.app, 'POST', '/api/campaigns', {
        site_key: site,
        template_id: 999999,
        list_id: 999999,
      });
      assert.equal(wrong.status, 422);
      assert.deepEqual(Object.keys(wrong.body.detail.error.invalid_fields).sort(), ['list_id', 'template_id']);
      assert.equal((await adminCall(t.app, 'GET', '/api/campaigns/999999/stats')).status, 404);
    });

    it('overview: projects, contacts, e-mails, events, orders and the outbox backlog', async () => {
      await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: 'late@example.com',
        order_id: 'OV-1',
      });
      t.clock.advance(61 * 60_000);
      const o = (await adminCall(t.app, 'GET', '/api/stats/overview')).body;
      assert.equal(o.ok, true);
      assert.equal(o.projects, 1);
      assert.ok(o.contacts_by_status.active >= 2);
      assert.ok(o.emails_by_status.sent >= 2);
      assert.ok(o.events.accepted >= 3);
      assert.ok(o.orders.total >= 3);
      assert.ok(o.outbox.due >= 1, 'chain e-mails fell due when the clock moved');
      assert.ok(o.outbox.oldest_due_age_seconds > 0);
    });
  });
}
