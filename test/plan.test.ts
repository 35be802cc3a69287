// The plan in every gateway answer (SPEC §13): what the request scheduled, cancelled or did not
// schedule, and why; cancelled_by_event_id on e-mails a purchase stopped. Both databases (the
// PostgreSQL run goes through the batch executor, so both accept paths are covered).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const P = '/api/scoped/events/purchase';
const ASYNC = { prefer: 'respond-async' };
const contest = (email: string) => ({
  event_type: 'contest_results',
  email,
  fields: { event_title: 'Spring', work_title: 'Poem', place: '1' },
});

for (const d of DIALECTS) {
  describe(`plan in every answer [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    const contactId = async (email: string) => {
      const r = await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}&to=${encodeURIComponent(email)}`);
      return r.body.items[0].contact_id as number;
    };

    before(async () => {
      t = await createTestApp(d.name);
      ({ key, site } = await setupProject(t.app));
    });
    after(() => t.close());

    it('transactional: the queued e-mail, or no_template', async () => {
      const r = await keyCall(t.app, key, 'POST', T, contest('plan1@example.com'), ASYNC);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.plan, [
        {
          scheduled_email_id: r.body.scheduled_email_id,
          template_key: 'contest_tpl',
          step: null,
          due_at: new Date(t.clock.now()).toISOString(),
          status: 'queued',
          reason: null,
        },
      ]);
      const none = await keyCall(t.app, key, 'POST', T, {
        event_type: 'olympiad_results',
        email: 'plan1@example.com',
        fields: { event_title: 'O', work_title: 'W', place: '2', olympiad_title: 'X' },
      });
      assert.equal(none.status, 200, JSON.stringify(none.body));
      assert.deepEqual(none.body.plan, [
        {
          scheduled_email_id: null,
          template_key: null,
          step: null,
          due_at: null,
          status: 'skipped',
          reason: 'no_template',
        },
      ]);
    });

    it('transactional to an invalid or blocked contact says it will not go; unsubscribed still goes', async () => {
      const cases = [
        ['invalid', 'contact_invalid'],
        ['admin_blocked', 'contact_admin_blocked'],
        ['unsubscribed', null],
      ] as const;
      for (const [status, reason] of cases) {
        const email = `plan-${status}@example.com`;
        await keyCall(t.app, key, 'POST', T, contest(email), ASYNC);
        const s = await adminCall(t.app, 'POST', `/api/admin/contacts/${await contactId(email)}/status`, { status });
        assert.ok(s.status < 300, JSON.stringify(s.body));
        const r = await keyCall(t.app, key, 'POST', T, contest(email), ASYNC);
        assert.equal(r.body.plan[0].reason, reason, status);
      }
    });

    it('order-created: the chain with due times; an unsubscribed contact gets none of it', async () => {
      const r = await keyCall(t.app, key, 'POST', OC, {
        email: 'buyer@example.com',
        order_id: 'o1',
        cart_type: 'course',
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const now = t.clock.now();
      assert.deepEqual(
        r.body.plan,
        [
          ['cart_1h', '1h', 60],
          ['cart_1d', '1d', 1440],
          ['cart_3d', '3d', 4320],
        ].map(([template_key, step, min], i) => ({
          scheduled_email_id: r.body.scheduled_email_ids[i],
          template_key,
          step,
          due_at: new Date(now + (min as number) * 60_000).toISOString(),
          status: 'scheduled',
          reason: null,
        })),
      );
      const dup = await keyCall(t.app, key, 'POST', OC, {
        email: 'buyer@example.com',
        order_id: 'o1',
        cart_type: 'course',
      });
      assert.deepEqual(dup.body.plan, []);

      await keyCall(t.app, key, 'POST', T, contest('unsub@example.com'), ASYNC);
      await adminCall(t.app, 'POST', `/api/admin/contacts/${await contactId('unsub@example.com')}/status`, {
        status: 'unsubscribed',
      });
      const u = await keyCall(t.app, key, 'POST', OC, {
        email: 'unsub@example.com',
        order_id: 'o2',
        cart_type: 'course',
      });
      // SPEC §18: `unsubscribed` means every topic but transactional has been left, and an e-mail of a
      // topic the contact left is not scheduled (it was `scheduled` and suppressed at send time before).
      assert.deepEqual(
        u.body.plan.map((p: any) => [p.status, p.reason]),
        [
          ['suppressed', 'contact_unsubscribed'],
          ['suppressed', 'contact_unsubscribed'],
          ['suppressed', 'contact_unsubscribed'],
        ],
      );
    });

    it('purchase: each stopped e-mail, cancelled_by_purchase, and the admin view names the purchase', async () => {
      const oc = await keyCall(t.app, key, 'POST', OC, {
        email: 'payer@example.com',
        order_id: 'o3',
        cart_type: 'course',
      });
      const p = await keyCall(t.app, key, 'POST', P, {
        email: 'payer@example.com',
        order_id: 'o3',
        cart_type: 'course',
      });
      assert.equal(p.status, 200, JSON.stringify(p.body));
      assert.equal(p.body.stopped, 3);
      assert.deepEqual(
        p.body.plan.map((e: any) => [e.scheduled_email_id, e.template_key, e.step, e.status, e.reason]).sort(),
        [
          [oc.body.scheduled_email_ids[0], 'cart_1h', '1h', 'cancelled', 'cancelled_by_purchase'],
          [oc.body.scheduled_email_ids[1], 'cart_1d', '1d', 'cancelled', 'cancelled_by_purchase'],
          [oc.body.scheduled_email_ids[2], 'cart_3d', '3d', 'cancelled', 'cancelled_by_purchase'],
        ].sort(),
      );
      for (const id of oc.body.scheduled_email_ids) {
        const e = await adminCall(t.app, 'GET', `/api/admin/emails/${id}`);
        assert.equal(e.body.cancelled_by_event_id, p.body.event_id);
      }
      const again = await keyCall(t.app, key, 'POST', P, {
        email: 'payer@example.com',
        order_id: 'o3',
        cart_type: 'course',
      });
      assert.deepEqual(again.body.plan, []);
    });

    it('order-created after the purchase: every step skipped as order_already_paid', async () => {
      await keyCall(t.app, key, 'POST', P, { email: 'early@example.com', order_id: 'o4', cart_type: 'course' });
      const r = await keyCall(t.app, key, 'POST', OC, {
        email: 'early@example.com',
        order_id: 'o4',
        cart_type: 'course',
      });
      assert.deepEqual(r.body.scheduled_email_ids, []);
      assert.deepEqual(
        r.body.plan.map((e: any) => [e.scheduled_email_id, e.template_key, e.step, e.status, e.reason]),
        [
          [null, 'cart_1h', '1h', 'skipped', 'order_already_paid'],
          [null, 'cart_1d', '1d', 'skipped', 'order_already_paid'],
          [null, 'cart_3d', '3d', 'skipped', 'order_already_paid'],
        ],
      );
    });

    it('a step of the default chain without a routed template is in the plan as no_template', async () => {
      const routing = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, {
        routes: { contest_results: 'contest_tpl', course_abandoned_cart_1h: 'cart_1h', course_paid: 'paid_tpl' },
      });
      assert.ok(routing.status < 300, JSON.stringify(routing.body));
      const r = await keyCall(t.app, key, 'POST', OC, {
        email: 'half@example.com',
        order_id: 'o5',
        cart_type: 'course',
      });
      assert.deepEqual(
        r.body.plan.map((e: any) => [e.template_key, e.step, e.status, e.reason]),
        [
          ['cart_1h', '1h', 'scheduled', null],
          [null, '1d', 'skipped', 'no_template'],
          [null, '3d', 'skipped', 'no_template'],
        ],
      );
    });
  });
}
