// SPEC §10: a purchase whose email, order_id and cart_type are valid always commits its effects (the cart
// chain stops, the books are filled, the payment is recorded); every malformed or misplaced optional member
// is named in the warnings and recorded as absent.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, createTestApp, DIALECTS, events, keyCall, setupProject, type TestApp } from './support/harness.js';

const OC = '/api/scoped/events/order-created';
const P = '/api/scoped/events/purchase';

for (const d of DIALECTS) {
  describe(`a purchase always stops the chain [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    let lists: { paid: number; cat: number };
    before(async () => {
      t = await createTestApp(d.name);
      ({ key, site, lists } = await setupProject(t.app));
    });
    after(() => t.close());
    const post = (url: string, body: unknown) => keyCall(t.app, key, 'POST', url, body);
    const members = async (listId: number) =>
      ((await adminCall(t.app, 'GET', `/api/lists/${listId}/contacts`)).body.items as { email: string }[]).map(
        (c) => c.email,
      );
    const order = (orderId: string) =>
      t.deps.db.db.selectFrom('orders').selectAll().where('order_id', '=', orderId).executeTakeFirstOrThrow();
    const pending = async (orderId: string) =>
      (
        await t.deps.db.db.selectFrom('scheduled_emails').select('status').where('order_id', '=', orderId).execute()
      ).filter((r) => r.status === 'scheduled').length;

    const cases: { member: string; body: Record<string, unknown>; problem: RegExp }[] = [
      { member: 'amount', body: { amount: 'две тысячи' }, problem: /decimal string.*without an amount/ },
      { member: 'amount', body: { amount: -5 }, problem: /between 0 and 1000000000/ },
      { member: 'amount', body: { amount: 10.555 }, problem: /at most 2 decimals/ },
      { member: 'amount', body: { amount: { value: 1 } }, problem: /must be a number/ },
      { member: 'currency', body: { currency: 'рубли' }, problem: /three-letter.*without a currency/ },
      { member: 'currency', body: { currency: 643 }, problem: /three-letter/ },
      {
        member: 'fields.paid_at',
        body: { fields: { paid_at: '2026-11-20 10:15:00' } },
        problem: /UTC offset.*arrived/,
      },
      { member: 'fields.paid_at', body: { fields: { paid_at: 1763622900 } }, problem: /ISO 8601/ },
      { member: 'fields.account_url', body: { fields: { account_url: 'javascript:alert(1)' } }, problem: /http/ },
      { member: 'fields.account_url', body: { fields: { account_url: 17 } }, problem: /http/ },
      {
        member: 'fields.course_category_id',
        body: { fields: { course_category_id: { id: 3 } } },
        problem: /category id.*not added/,
      },
      // PostgreSQL refuses U+0000 in a text parameter: the lookup must not reach it (issue 24).
      {
        member: 'fields.course_category_id',
        body: { fields: { course_category_id: '3\u0000' } },
        problem: /category id.*not added/,
      },
      {
        member: 'fields.course_category_id',
        body: { fields: { course_category_id: '\ud800' } },
        problem: /category id.*not added/,
      },
      {
        member: 'course_category_id',
        body: { course_category_id: '3' },
        problem: /belongs inside fields/,
      },
      { member: 'fields', body: { fields: 'paid' }, problem: /object.*ignored/ },
      { member: 'name', body: { name: ['Анна'] }, problem: /string.*name was left/ },
      { member: 'course_id', body: { course_id: 'x'.repeat(201) }, problem: /at most 200/ },
      { member: 'idempotency_key', body: { idempotency_key: 'k'.repeat(201) }, problem: /deduplicated/ },
    ];

    for (const [i, c] of cases.entries()) {
      it(`a malformed ${c.member} (${JSON.stringify(c.body).slice(0, 50)}) stops the chain and is a warning`, async () => {
        const orderId = `PT-${i}`;
        const email = `pt${i}@example.com`;
        const oc = await post(OC, { cart_type: 'course', email, order_id: orderId, course_name: 'Курс' });
        assert.equal(oc.status, 200);
        assert.equal(await pending(orderId), 3);

        const r = await post(P, { cart_type: 'course', email, order_id: orderId, ...c.body });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.stopped, 3);
        assert.equal(await pending(orderId), 0);
        assert.ok(r.body.address_books.includes(lists.paid));
        assert.ok((await members(lists.paid)).includes(email));
        const w = r.body.warning_details.find((x: { member: string }) => x.member === c.member);
        assert.ok(w, `${c.member} named: ${JSON.stringify(r.body.warning_details)}`);
        assert.match(w.problem, c.problem);
        assert.ok(
          r.body.warnings.some((s: string) => s.startsWith(`${c.member}: `)),
          'the sentence names the member too',
        );
        const o = await order(orderId);
        assert.equal(o.status, 'paid');
        if (c.member === 'amount') assert.equal(o.amount_minor, null);
        if (c.member === 'currency') assert.equal(o.currency, null);
        if (c.member === 'fields.paid_at') assert.equal(o.paid_at, new Date(t.clock.now()).toISOString());
        if (c.member.endsWith('course_category_id')) assert.ok(!(await members(lists.cat)).includes(email));
        const [logged] = await events(t.app, `?site_key=${site}&order_id=${orderId}&endpoint=purchase`);
        assert.equal(logged.accepted, true);
        assert.deepEqual(logged.effects.warning_details, r.body.warning_details);
      });
    }

    it('several problems at once: each is named, the valid members are kept', async () => {
      await post(OC, { cart_type: 'course', email: 'many@example.com', order_id: 'PT-many' });
      const r = await post(P, {
        cart_type: 'course',
        email: 'many@example.com',
        order_id: 'PT-many',
        name: 'Мария',
        amount: '2500,00',
        currency: 'rub',
        course_category_id: 3,
        fields: { paid_at: 'вчера', course_category_id: '3', account_url: 'https://site.example/account' },
      });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.warning_details.map((w: { member: string }) => w.member).sort(), [
        'course_category_id',
        'fields.paid_at',
      ]);
      const o = await order('PT-many');
      assert.equal(Number(o.amount_minor), 250000, 'stored in hundredths');
      assert.equal(o.currency, 'RUB', 'a lower-case code is the same currency');
      assert.ok(r.body.address_books.includes(lists.cat), 'fields.course_category_id still routes');
    });

    it('a bad email, order_id or cart_type, or a list_id, still refuses the purchase (and stops nothing)', async () => {
      await post(OC, { cart_type: 'course', email: 'ref@example.com', order_id: 'PT-ref' });
      for (const [body, member] of [
        [{ email: 'not an address' }, 'email'],
        [{ order_id: { id: 1 } }, 'order_id'],
        [{ cart_type: 'subscription' }, 'cart_type'],
        [{ list_id: 35 }, 'list_id'],
      ] as const) {
        const r = await post(P, { cart_type: 'course', email: 'ref@example.com', order_id: 'PT-ref', ...body });
        assert.equal(r.status, 422, member);
        assert.ok(member in r.body.detail.error.invalid_fields, member);
      }
      assert.equal(await pending('PT-ref'), 3);
    });
  });
}
