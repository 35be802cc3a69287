// SPEC §10 and issue 12 item 8, figures that mean something: paid amounts per currency (overview and
// dashboard), the chronology filtered by endpoint and stats grouped by endpoint and type (a purchase logged
// as course_paid is not a transactional course_paid), and a refusal before the body is read (disabled key,
// rate limit) still records event_type, email and order_id.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryRateLimiter } from '../src/services/rateLimiter.js';
import {
  adminCall,
  createTestApp,
  DIALECTS,
  events,
  keyCall,
  newKey,
  rawCall,
  setupProject,
  type TestApp,
} from './support/harness.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const P = '/api/scoped/events/purchase';

for (const d of DIALECTS) {
  describe(`figures that mean something [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    before(async () => {
      t = await createTestApp(d.name);
      t.deps.rateLimiter = new MemoryRateLimiter(t.clock);
      ({ key, site } = await setupProject(t.app));
      const post = (url: string, body: unknown) => keyCall(t.app, key, 'POST', url, body);
      // Two rouble payments, one in tenge, one without a currency, one without an amount; the same event
      // type, course_paid, once as a purchase and once as a transactional send.
      await post(OC, { cart_type: 'course', email: 'a@example.com', order_id: 'F-1' });
      await post(P, { cart_type: 'course', email: 'a@example.com', order_id: 'F-1', amount: 2500, currency: 'RUB' });
      await post(P, {
        cart_type: 'course',
        email: 'b@example.com',
        order_id: 'F-2',
        amount: '1990,50',
        currency: 'rub',
      });
      await post(P, { cart_type: 'course', email: 'c@example.com', order_id: 'F-3', amount: 12000, currency: 'KZT' });
      await post(P, { cart_type: 'course', email: 'd@example.com', order_id: 'F-4', amount: 100 });
      await post(P, { cart_type: 'course', email: 'e@example.com', order_id: 'F-5' });
      await post(T, { event_type: 'course_paid', email: 'a@example.com', order_id: 'F-1' });
    });
    after(() => t.close());

    it('GET /api/stats/overview: paid amounts per currency, never one sum', async () => {
      const r = await adminCall(t.app, 'GET', '/api/stats/overview');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.orders.paid_amount_by_currency, { KZT: 12000, RUB: 4490.5, XXX: 100 });
      assert.equal(r.body.orders.paid, 5);
      assert.equal('paid_amount' in r.body.orders, false, 'no sum of roubles and tenge');
    });

    it('a test send (POST …/delivery/test) counts in no statistic of GET /api/stats/overview (SPEC §11)', async () => {
      const before = (await adminCall(t.app, 'GET', '/api/stats/overview')).body;
      const sent = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/delivery/test`, {
        template: 'paid_tpl',
        to: 'tester@example.com',
      });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      const row = await t.deps.db.db
        .selectFrom('scheduled_emails')
        .select('is_test')
        .where('id', '=', sent.body.scheduled_email_id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.is_test), 1, 'the test e-mail exists');
      const after = (await adminCall(t.app, 'GET', '/api/stats/overview')).body;
      assert.deepEqual(after.emails_by_status, before.emails_by_status);
      assert.deepEqual(after.orders, before.orders);
      assert.deepEqual(after.events, before.events);
    });

    it('the dashboard: paid amounts per currency, event types per endpoint', async () => {
      const r = await adminCall(t.app, 'GET', `/api/admin/dashboard?site_key=${site}&days=1`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.paid_amount_by_currency, { KZT: 12000, RUB: 4490.5, XXX: 100 });
      const paid = r.body.events_by_type.filter((x: { event_type: string }) => x.event_type === 'course_paid');
      assert.deepEqual(paid.map((x: { endpoint: string; total: number }) => [x.endpoint, x.total]).sort(), [
        ['purchase', 5],
        ['transactional', 1],
      ]);
    });

    it('the chronology filters by endpoint', async () => {
      const purchases = await events(t.app, `?site_key=${site}&event_type=course_paid&endpoint=purchase`);
      assert.equal(purchases.length, 5);
      assert.ok(purchases.every((e) => e.endpoint === 'purchase'));
      const sends = await events(t.app, `?site_key=${site}&event_type=course_paid&endpoint=transactional`);
      assert.equal(sends.length, 1);
      assert.equal(sends[0].order_id, 'F-1');
      const bad = await adminCall(t.app, 'GET', '/api/admin/external-events?endpoint=nowhere');
      assert.equal(bad.status, 422);
    });

    it('stats group by endpoint and by endpoint and type, and filter by endpoint', async () => {
      const r = await adminCall(t.app, 'GET', `/api/admin/external-events/stats?site_key=${site}`);
      assert.equal(r.status, 200);
      const row = (endpoint: string, type: string) =>
        r.body.by_endpoint_and_type.find(
          (x: { endpoint: string; event_type: string }) => x.endpoint === endpoint && x.event_type === type,
        );
      assert.deepEqual(row('purchase', 'course_paid'), {
        endpoint: 'purchase',
        event_type: 'course_paid',
        total: 5,
        accepted: 5,
        rejected: 0,
        repeated: 0,
      });
      assert.equal(row('transactional', 'course_paid').total, 1);
      assert.equal(r.body.by_endpoint.find((x: { endpoint: string }) => x.endpoint === 'purchase').total, 5);
      const only = await adminCall(t.app, 'GET', `/api/admin/external-events/stats?site_key=${site}&endpoint=purchase`);
      assert.equal(only.body.total, 5);
      assert.deepEqual(
        only.body.by_endpoint.map((x: { endpoint: string }) => x.endpoint),
        ['purchase'],
      );
    });

    it('a disabled key: 403 whatever the body, and the chronology records type, e-mail and order id', async () => {
      const k = await newKey(
        t.app,
        site,
        { permissions: ['cart_events_write'], allowed_cart_types: ['course'] },
        'off',
      );
      assert.equal((await adminCall(t.app, 'POST', `/api/admin/keys/${k.id}/disable`)).status, 200);
      const r = await keyCall(t.app, k.key, 'POST', P, {
        cart_type: 'course',
        email: 'Refused@Пример.рф',
        order_id: 9001,
      });
      assert.equal(r.status, 403);
      assert.equal(r.body.detail.error.code, 'api_key_disabled');
      const [logged] = await events(t.app, `?site_key=${site}&order_id=9001`);
      assert.equal(logged.error_code, 'api_key_disabled');
      assert.equal(logged.event_type, 'course_paid');
      assert.equal(logged.email, 'refused@пример.рф');
      assert.equal(logged.endpoint, 'purchase');
      assert.equal(logged.key_last4, k.key.slice(-4));
      // A body that does not parse, is too large or is not JSON: still the key's 403, logged without it.
      for (const [payload, type] of [
        ['{not json', 'application/json'],
        [JSON.stringify({ email: 'x'.repeat(70_000) }), 'application/json'],
        ['email=a', 'application/x-www-form-urlencoded'],
        [Buffer.from([0x7b, 0xff, 0x7d]), 'application/json'],
      ] as const) {
        const res = await rawCall(t.app, 'POST', P, { 'x-api-key': k.key, 'content-type': type }, payload);
        assert.equal(res.status, 403, `${type} ${String(payload).slice(0, 20)}`);
        assert.equal(res.body.detail.error.code, 'api_key_disabled');
      }
      const catalog = await keyCall(t.app, k.key, 'GET', '/api/scoped/events/catalog');
      assert.equal(catalog.status, 403);
      // A NUL (PostgreSQL refuses it in text) or a lone surrogate in a member: the same 403 on both
      // databases, and still logged, the member left out of its column and kept escaped in the payload.
      const raw = '{"cart_type":"course","email":"nul\\u0000@example.com","order_id":"9002\\ud800"}';
      const odd = await rawCall(t.app, 'POST', P, { 'x-api-key': k.key, 'content-type': 'application/json' }, raw);
      assert.equal(odd.status, 403);
      const [oddLogged] = await events(t.app, `?site_key=${site}&status=rejected&limit=1`);
      assert.equal(oddLogged.error_code, 'api_key_disabled');
      assert.deepEqual([oddLogged.email, oddLogged.order_id], [null, null]);
      assert.equal(oddLogged.payload.email, 'nul\u0000@example.com');
    });

    it('a rate-limited request: 429, and the chronology records type, e-mail and order id', async () => {
      const c = await adminCall(t.app, 'POST', '/api/admin/keys', {
        site_key: site,
        name: 'slow',
        rights: { permissions: ['transactional_send'], allowed_api_events: ['course_paid'] },
        rate_limit: { per_second: 1, burst: 1 },
      });
      const body = (n: number) => ({ event_type: 'course_paid', email: 'rl@example.com', order_id: `RL-${n}` });
      assert.equal((await keyCall(t.app, c.body.key, 'POST', T, body(1))).status, 200);
      const r = await keyCall(t.app, c.body.key, 'POST', T, body(2));
      assert.equal(r.status, 429);
      assert.ok(r.headers['retry-after']);
      const [logged] = await events(t.app, `?site_key=${site}&order_id=RL-2`);
      assert.deepEqual(
        [logged.error_code, logged.event_type, logged.email, logged.order_id, logged.http_status],
        ['rate_limited', 'course_paid', 'rl@example.com', 'RL-2', 429],
      );
      assert.equal(logged.payload.order_id, 'RL-2');
    });
  });
}
