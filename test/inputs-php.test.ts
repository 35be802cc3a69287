// SPEC §10, what PHP sends: null for an optional member is absent, "fields": [] is {}, an integer order_id is
// its decimal string, amount may be a decimal string. Nothing else is coerced.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, DIALECTS, events, keyCall, setupProject, type TestApp } from './support/harness.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const P = '/api/scoped/events/purchase';

for (const d of DIALECTS) {
  describe(`PHP tolerances [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    before(async () => {
      t = await createTestApp(d.name);
      ({ key, site } = await setupProject(t.app));
    });
    after(() => t.close());
    const post = (url: string, body: unknown) => keyCall(t.app, key, 'POST', url, body);
    const order = (orderId: string) =>
      t.deps.db.db.selectFrom('orders').selectAll().where('order_id', '=', orderId).executeTakeFirstOrThrow();

    it('null for an optional member is the member absent, in the body and in fields', async () => {
      const r = await post(T, {
        event_type: 'contest_results',
        email: 'php-null@example.com',
        name: null,
        order_id: null,
        idempotency_key: null,
        amount: null,
        currency: null,
        course_name: null,
        fields: { event_title: 'Олимпиада', work_title: 'Эссе', place: null },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const row = await t.deps.db.db
        .selectFrom('scheduled_emails')
        .selectAll()
        .where('id', '=', r.body.scheduled_email_id)
        .executeTakeFirstOrThrow();
      assert.equal(row.order_id, null);
      assert.equal('place' in JSON.parse(row.context).fields, false);
      // A later null name does not erase the name an earlier event gave.
      await post(T, {
        event_type: 'contest_results',
        email: 'php-null@example.com',
        name: 'Анна',
        fields: { event_title: 'A', work_title: 'B' },
      });
      await post(T, {
        event_type: 'contest_results',
        email: 'php-null@example.com',
        name: null,
        fields: { event_title: 'A', work_title: 'B' },
      });
      const c = await t.deps.db.db
        .selectFrom('contacts')
        .select('name')
        .where('email', '=', 'php-null@example.com')
        .executeTakeFirstOrThrow();
      assert.equal(c.name, 'Анна');
    });

    it('null for a required member is still missing (422 lists it)', async () => {
      const r = await post(T, { event_type: 'contest_results', email: null, fields: { event_title: null } });
      assert.equal(r.status, 422);
      assert.deepEqual(r.body.detail.error.missing_fields, ['email', 'fields.event_title', 'fields.work_title']);
      const oc = await post(OC, { cart_type: 'course', email: 'x@example.com', order_id: null });
      assert.equal(oc.status, 422);
      assert.deepEqual(oc.body.detail.error.missing_fields, ['order_id']);
    });

    it('"fields": [] is {} (and other arrays stay wrong)', async () => {
      const r = await post(OC, { cart_type: 'course', email: 'arr@example.com', order_id: 'A-1', fields: [] });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const missing = await post(T, { event_type: 'contest_results', email: 'arr@example.com', fields: [] });
      assert.equal(missing.status, 422);
      assert.deepEqual(missing.body.detail.error.missing_fields, ['fields.event_title', 'fields.work_title']);
      const bad = await post(OC, { cart_type: 'course', email: 'arr@example.com', order_id: 'A-2', fields: ['x'] });
      assert.equal(bad.status, 422);
      assert.equal(bad.body.detail.error.invalid_fields.fields, 'must be a object');
    });

    it('an integer order_id is its decimal string, on every endpoint; a fraction is not', async () => {
      const oc = await post(OC, { cart_type: 'course', email: 'int@example.com', order_id: 1001 });
      assert.equal(oc.status, 200, JSON.stringify(oc.body));
      assert.equal(oc.body.order_id, '1001');
      assert.equal(oc.body.scheduled_email_ids.length, 3);
      const p = await post(P, { cart_type: 'course', email: 'int@example.com', order_id: 1001 });
      assert.equal(p.status, 200);
      assert.equal(p.body.order_id, '1001');
      assert.equal(p.body.stopped, 3, 'the integer and the string name the same order');
      const tr = await post(T, {
        event_type: 'contest_results',
        email: 'int@example.com',
        order_id: 1001,
        fields: { event_title: 'A', work_title: 'B' },
      });
      assert.equal(tr.status, 200);
      const logged = await events(t.app, `?site_key=${site}&order_id=1001&order=asc`);
      assert.deepEqual(
        logged.map((e) => e.endpoint),
        ['order-created', 'purchase', 'transactional'],
      );
      for (const bad of [10.5, 1e300, -1.5]) {
        const r = await post(OC, { cart_type: 'course', email: 'int@example.com', order_id: bad });
        assert.equal(r.status, 422, String(bad));
        assert.equal(r.body.detail.error.invalid_fields.order_id, 'must be a string');
      }
    });

    it('amount as a decimal string: "2500", "2500.00", "2500,00"', async () => {
      for (const [i, amount] of ['2500', '2500.00', '2500,00', '2500,5', '0.99'].entries()) {
        const r = await post(P, {
          cart_type: 'course',
          email: 'amount@example.com',
          order_id: `AM-${i}`,
          amount,
          currency: 'RUB',
        });
        assert.equal(r.status, 200, amount);
        assert.deepEqual(r.body.warnings, [], amount);
        assert.equal(Number((await order(`AM-${i}`)).amount_minor) / 100, Number(amount.replace(',', '.')), amount);
      }
      const tr = await post(T, {
        event_type: 'contest_results',
        email: 'amount@example.com',
        amount: '1990,50',
        fields: { event_title: 'A', work_title: 'B' },
      });
      assert.equal(tr.status, 200);
      const row = await t.deps.db.db
        .selectFrom('scheduled_emails')
        .select('context')
        .where('id', '=', tr.body.scheduled_email_id)
        .executeTakeFirstOrThrow();
      assert.equal(JSON.parse(row.context).amount, 1990.5);
    });

    it('nothing else is coerced', async () => {
      const base = {
        event_type: 'contest_results',
        email: 'strict@example.com',
        fields: { event_title: 'A', work_title: 'B' },
      };
      const cases: [Record<string, unknown>, string][] = [
        [{ amount: '2 500' }, 'amount'],
        [{ amount: '2,500' }, 'amount'],
        [{ amount: '2500.001' }, 'amount'],
        [{ amount: '1e3' }, 'amount'],
        [{ amount: '' }, 'amount'],
        [{ amount: true }, 'amount'],
        [{ name: 42 }, 'name'],
        [{ currency: 643 }, 'currency'],
        [{ order_id: true }, 'order_id'],
        [{ fields: { event_title: 5, work_title: 'B' } }, 'fields.event_title'],
      ];
      for (const [extra, member] of cases) {
        const r = await post(T, { ...base, ...extra });
        assert.equal(r.status, 422, JSON.stringify(extra));
        assert.ok(member in r.body.detail.error.invalid_fields, `${JSON.stringify(extra)}: ${JSON.stringify(r.body)}`);
      }
      const oc = await post(OC, { cart_type: 'course', email: 'strict@example.com', order_id: '7', course_name: 5 });
      assert.equal(oc.status, 422);
    });
  });
}
