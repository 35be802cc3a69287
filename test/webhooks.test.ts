// Webhooks back to the sites (SPEC §13) through the admin API, the gateway and both workers, with a real
// HTTP receiver verifying every signature with the standardwebhooks library: what each kind carries,
// retries on a manual clock keeping their webhook-id, re-sends, and an endpoint disabled after 3 days.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { createWebhookWorker, type WebhookWorker } from '../src/workers/siteWebhooks.js';
import { unsubscribeUrl } from '../src/delivery/unsubscribe.js';
import { sealingSecret } from '../src/services/delivery.js';
import { adminCall, createTestApp, DIALECTS, keyCall, rawCall, setupProject, type TestApp } from './support/harness.js';
import { startReceiver, type Receiver } from './support/webhookReceiver.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const P = '/api/scoped/events/purchase';
const ALL = [
  'email.sent',
  'email.failed',
  'email.suppressed',
  'email.cancelled',
  'contact.unsubscribed',
  'event.rejected',
];
const contest = (email: string, extra: Record<string, unknown> = {}) => ({
  event_type: 'contest_results',
  email,
  fields: { event_title: 'Spring', work_title: 'Poem', place: '1' },
  ...extra,
});
const HOUR = 3_600_000;

for (const d of DIALECTS) {
  describe(`site webhooks [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let rx: Receiver;
    let key: string;
    let site: string;
    let hooks: WebhookWorker;
    let endpointId: number;

    const deliveries = async (id = endpointId) => {
      const r = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/webhooks/${id}/deliveries?limit=500`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.items as any[];
    };
    const drainEmails = async () => {
      const w = createWorker({
        db: t.deps.db,
        transport: createCaptureTransport(),
        clock: t.clock,
        publicUrl: t.config.publicUrl,
        secret: await sealingSecret(t.deps),
      });
      while ((await w.runOnce()) > 0);
    };

    before(async () => {
      rx = await startReceiver();
      t = await createTestApp(d.name, { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_BACKOFF_BASE_MS: '1000' });
      ({ key, site } = await setupProject(t.app));
      hooks = createWebhookWorker({
        db: t.deps.db,
        config: t.config.webhooks,
        secret: await sealingSecret(t.deps),
        clock: t.clock,
        random: () => 0.5,
      });
      const created = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/webhooks`, {
        url: `${rx.url}/hook?site=1`,
        events: ALL,
        description: 'orders',
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
      rx.secret = created.body.secret;
      endpointId = created.body.id;
    });
    after(async () => {
      await t.close();
      await rx.close();
    });
    beforeEach(() => {
      rx.mode = 'ok';
      rx.received.length = 0;
    });

    it('lists endpoints without their secret; another project cannot reach them', async () => {
      const list = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/webhooks`);
      assert.equal(list.status, 200);
      assert.equal(list.body.items.length, 1);
      const e = list.body.items[0];
      assert.deepEqual(
        [e.id, e.url, e.status, e.description, e.events],
        [endpointId, `${rx.url}/hook?site=1`, 'active', 'orders', ALL],
      );
      assert.ok(!JSON.stringify(list.body).includes(rx.secret!.slice(6)), 'the secret is never shown again');
      await setupProject(t.app, { site: 'other' });
      for (const [m, path, body] of [
        ['PATCH', `/api/admin/projects/other/webhooks/${endpointId}`, { description: 'x' }],
        ['DELETE', `/api/admin/projects/other/webhooks/${endpointId}`, undefined],
        ['GET', `/api/admin/projects/other/webhooks/${endpointId}/deliveries`, undefined],
        ['POST', `/api/admin/projects/other/webhooks/${endpointId}/deliveries/1/resend`, undefined],
      ] as const) {
        const r = await adminCall(t.app, m, path, body);
        assert.equal(r.status, 404, `${m} ${path}: ${JSON.stringify(r.body)}`);
      }
      const bad = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/webhooks`, {
        url: rx.url,
        // email.opened is a kind since SPEC §17; this one is not.
        events: ['email.read'],
      });
      assert.equal(bad.status, 422);
    });

    it('email.sent reaches the site signed, with the identifiers the site sent and a sequence number', async () => {
      const sent = await keyCall(
        t.app,
        key,
        'POST',
        T,
        contest('anna@example.com', { order_id: 'A-1', idempotency_key: 'idem-1' }),
        { prefer: 'respond-async' },
      );
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      assert.equal(await hooks.runOnce(), 0, 'nothing happened yet that a site hears of');
      await drainEmails();
      assert.equal(await hooks.runOnce(), 1);
      assert.equal(rx.received.length, 1);
      const got = rx.received[0];
      assert.ok(got.verified, 'the standardwebhooks library verifies the signature');
      assert.equal(got.path, '/hook?site=1');
      assert.match(String(got.headers['webhook-id']), /^msg_/);
      assert.equal(got.body.type, 'email.sent');
      assert.equal(got.body.timestamp, new Date(t.clock.now()).toISOString());
      const { sequence, ...data } = got.body.data;
      assert.ok(Number.isInteger(sequence) && sequence > 0);
      assert.deepEqual(data, {
        site_key: site,
        event_id: sent.body.event_id,
        scheduled_email_id: sent.body.scheduled_email_id,
        event_type: 'contest_results',
        order_id: 'A-1',
        idempotency_key: 'idem-1',
        email: 'anna@example.com',
        status: 'sent',
        reason: null,
        template_key: 'contest_tpl',
        step: null,
      });
      const [delivery] = await deliveries();
      assert.equal(delivery.status, 'delivered');
      assert.equal(delivery.webhook_id, got.headers['webhook-id']);
      assert.equal(delivery.attempts_log.length, 1);
      assert.equal(delivery.attempts_log[0].status_code, 200);
      assert.equal(delivery.attempts_log[0].response_excerpt, '{"received":true}');
    });

    it('a failing endpoint is retried with backoff, keeping the webhook-id; every attempt is kept; re-send', async () => {
      rx.mode = 'fail';
      await keyCall(t.app, key, 'POST', T, contest('boris@example.com'), { prefer: 'respond-async' });
      await drainEmails();
      assert.equal(await hooks.runOnce(), 1);
      let [dl] = await deliveries();
      assert.equal(dl.status, 'pending');
      // Base 1000 ms, jitter fixed at 1.0: the second attempt is due one second later, not before.
      assert.equal(dl.next_attempt_at, new Date(t.clock.now() + 1000).toISOString());
      t.clock.advance(999);
      assert.equal(await hooks.runOnce(), 0);
      t.clock.advance(1);
      assert.equal(await hooks.runOnce(), 1);
      [dl] = await deliveries();
      assert.equal(dl.next_attempt_at, new Date(t.clock.now() + 2000).toISOString(), 'the delay doubles');
      rx.mode = 'ok';
      t.clock.advance(2000);
      assert.equal(await hooks.runOnce(), 1);
      assert.equal(rx.received.length, 3);
      assert.equal(new Set(rx.received.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id for all');
      assert.ok(rx.received.every((r) => r.verified));
      assert.ok(
        rx.received.every((r) => r.raw === rx.received[0].raw),
        'the same body every time',
      );
      [dl] = await deliveries();
      assert.equal(dl.status, 'delivered');
      assert.deepEqual(
        dl.attempts_log.map((a: any) => a.status_code),
        [500, 500, 200],
      );
      assert.equal(dl.attempts_log[0].error, 'HTTP 500');
      assert.ok(dl.attempts_log[0].response_excerpt.startsWith('upstream broke'));
      assert.ok(dl.attempts_log[0].response_excerpt.length <= 1024, 'the excerpt is bounded');

      const again = await adminCall(
        t.app,
        'POST',
        `/api/admin/projects/${site}/webhooks/${endpointId}/deliveries/${dl.id}/resend`,
      );
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.equal(await hooks.runOnce(), 1);
      assert.equal(rx.received.length, 4);
      assert.equal(rx.received[3].headers['webhook-id'], rx.received[0].headers['webhook-id']);
      [dl] = await deliveries();
      assert.equal(dl.attempts_log.length, 4);
    });

    it('purchase cancels the cart chain: email.cancelled for each e-mail it stopped', async () => {
      const oc = await keyCall(t.app, key, 'POST', OC, {
        email: 'cart@example.com',
        order_id: 'C-9',
        cart_type: 'course',
      });
      const p = await keyCall(t.app, key, 'POST', P, {
        email: 'cart@example.com',
        order_id: 'C-9',
        cart_type: 'course',
        idempotency_key: 'pay-C-9',
      });
      assert.equal(p.body.stopped, 3);
      assert.equal(await hooks.runOnce(), 3);
      const got = rx.received.map((r) => r.body).sort((a, b) => a.data.scheduled_email_id - b.data.scheduled_email_id);
      assert.deepEqual(
        got.map((b) => [b.type, b.data.scheduled_email_id, b.data.order_id, b.data.reason, b.data.step]),
        oc.body.scheduled_email_ids.map((id: number, i: number) => [
          'email.cancelled',
          id,
          'C-9',
          'cancelled_by_purchase',
          ['1h', '1d', '3d'][i],
        ]),
      );
      assert.ok(rx.received.every((r) => r.verified));
    });

    it('contact.unsubscribed from the link and from the admin; event.rejected for a refused request', async () => {
      await keyCall(t.app, key, 'POST', T, contest('unsub@example.com'), { prefer: 'respond-async' });
      await drainEmails();
      await hooks.runOnce();
      rx.received.length = 0;
      const contact = await t.deps.db.db
        .selectFrom('contacts')
        .select(['id', 'project_id', 'email'])
        .where('email', '=', 'unsub@example.com')
        .executeTakeFirstOrThrow();
      const link = unsubscribeUrl('http://x', await sealingSecret(t.deps), {
        id: Number(contact.id),
        project_id: Number(contact.project_id),
        email: contact.email,
      });
      const u = await rawCall(t.app, 'POST', new URL(link).pathname, {}, undefined);
      assert.equal(u.status, 200);
      const twice = await rawCall(t.app, 'POST', new URL(link).pathname, {}, undefined);
      assert.equal(twice.status, 200);
      await adminCall(t.app, 'POST', `/api/admin/contacts/${contact.id}/status`, { status: 'active' });
      await adminCall(t.app, 'POST', `/api/admin/contacts/${contact.id}/status`, { status: 'unsubscribed' });

      const refused = await keyCall(t.app, key, 'POST', T, {
        event_type: 'contest_results',
        email: 'r@example.com',
        order_id: 'R-1',
      });
      assert.equal(refused.status, 422);
      assert.equal(await hooks.runOnce(), 3);
      const bodies = rx.received.map((r) => r.body);
      assert.deepEqual(
        bodies.filter((b) => b.type === 'contact.unsubscribed').map((b) => [b.data.email, b.data.reason]),
        [
          ['unsub@example.com', 'link'],
          ['unsub@example.com', 'admin'],
        ],
        'one notice per change: the repeated link changed nothing',
      );
      const rej = bodies.find((b) => b.type === 'event.rejected');
      assert.equal(rej.data.error_code, 'validation_error');
      assert.equal(rej.data.http_status, 422);
      assert.equal(rej.data.order_id, 'R-1');
      assert.equal(rej.data.endpoint, 'transactional');
      assert.ok(Number.isInteger(rej.data.event_id));
    });

    it('an endpoint failing for three days is disabled, shown so, gets nothing new, and can be enabled', async () => {
      rx.mode = 'fail';
      await keyCall(t.app, key, 'POST', T, contest('down@example.com'), { prefer: 'respond-async' });
      await drainEmails();
      const start = t.clock.now();
      assert.equal(await hooks.runOnce(), 1);
      let status = 'active';
      while (status === 'active') {
        t.clock.advance(7 * HOUR);
        await hooks.runOnce();
        const e = (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/webhooks`)).body.items[0];
        status = e.status;
        if (status === 'active') assert.ok(t.clock.now() - start < 72 * HOUR + 7 * HOUR, 'not disabled in time');
        else {
          assert.ok(t.clock.now() - start >= 72 * HOUR, 'disabled before three days of failure');
          assert.match(e.disabled_reason, /every attempt failed since/);
          assert.equal(e.failing_since, new Date(start).toISOString());
        }
      }
      const [dl] = await deliveries();
      assert.equal(dl.status, 'failed', 'the delivery is given up after its retry window');
      assert.ok(dl.attempts >= 10, `retried with backoff: ${dl.attempts} attempts`);

      rx.received.length = 0;
      rx.mode = 'ok';
      await keyCall(t.app, key, 'POST', T, contest('while-down@example.com'), { prefer: 'respond-async' });
      await drainEmails();
      assert.equal(await hooks.runOnce(), 0, 'a disabled endpoint gets nothing');
      const on = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}/webhooks/${endpointId}`, {
        enabled: true,
      });
      assert.equal(on.status, 200);
      assert.equal(on.body.webhook.status, 'active');
      assert.equal(on.body.webhook.failing_since, null);
    });
  });
}
