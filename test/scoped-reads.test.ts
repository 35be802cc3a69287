// Scoped reads (SPEC §13): a key reads its own project's e-mails and chronology, never another
// project's, whatever id, order, idempotency key or cursor it tries; never the rendered body.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeCursor } from '../src/repos/types.js';
import { adminCall, createTestApp, DIALECTS, keyCall, newKey, setupProject, type TestApp } from './support/harness.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const P = '/api/scoped/events/purchase';
const ASYNC = { prefer: 'respond-async' };

for (const d of DIALECTS) {
  describe(`scoped reads [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    const A = { key: '', site: '', tx: 0, cart: [] as number[] };
    const B = { key: '', site: '', tx: 0, cart: [] as number[] };

    before(async () => {
      t = await createTestApp(d.name);
      for (const [p, site] of [
        [A, 'site-a'],
        [B, 'site-b'],
      ] as const) {
        ({ key: p.key, site: p.site } = await setupProject(t.app, { site }));
        const tx = await keyCall(
          t.app,
          p.key,
          'POST',
          T,
          {
            event_type: 'contest_results',
            email: `anna@${site}.example`,
            idempotency_key: 'same-key',
            order_id: '1001',
            fields: { event_title: 'Spring', work_title: 'Poem', place: '1' },
          },
          ASYNC,
        );
        assert.equal(tx.status, 200, JSON.stringify(tx.body));
        p.tx = tx.body.scheduled_email_id;
        const oc = await keyCall(t.app, p.key, 'POST', OC, {
          email: `anna@${site}.example`,
          order_id: '1001',
          cart_type: 'course',
          course_name: 'Inclusive education',
        });
        assert.equal(oc.status, 200, JSON.stringify(oc.body));
        p.cart = oc.body.scheduled_email_ids;
      }
      // B's order is paid: its chain is cancelled by the purchase.
      const pr = await keyCall(t.app, B.key, 'POST', P, {
        email: 'anna@site-b.example',
        order_id: '1001',
        cart_type: 'course',
      });
      assert.equal(pr.status, 200, JSON.stringify(pr.body));
    });
    after(() => t.close());

    it('one e-mail: its own project, the documented members, never the body', async () => {
      const r = await keyCall(t.app, A.key, 'GET', `/api/scoped/emails/${A.tx}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(Object.keys(r.body.email).sort(), [
        'attempts',
        // SPEC §17: the first human click and open.
        'clicked_at',
        'due_at',
        'event_type',
        'id',
        'opened_at',
        'order_id',
        'outcome',
        'reason',
        'sent_at',
        'status',
        'template_key',
        'to',
      ]);
      assert.equal(r.body.email.id, A.tx);
      assert.equal(r.body.email.event_type, 'contest_results');
      assert.equal(r.body.email.template_key, 'contest_tpl');
      assert.equal(r.body.email.to, 'anna@site-a.example');
      assert.equal(r.body.email.reason, null);
      assert.ok(!/<p>|html|subject/i.test(JSON.stringify(r.body)), 'no rendered body');
      // The admin sees the body of the same e-mail once rendered; the scoped read never does.
    });

    it("another project's e-mail id is 404, like an absent one, in both directions", async () => {
      for (const id of [B.tx, ...B.cart]) {
        const r = await keyCall(t.app, A.key, 'GET', `/api/scoped/emails/${id}`);
        assert.equal(r.status, 404);
        assert.equal(r.body.detail.error.code, 'not_found');
      }
      for (const id of [A.tx, ...A.cart])
        assert.equal((await keyCall(t.app, B.key, 'GET', `/api/scoped/emails/${id}`)).status, 404);
      assert.equal((await keyCall(t.app, A.key, 'GET', '/api/scoped/emails/999999')).status, 404);
      const bad = await keyCall(t.app, A.key, 'GET', '/api/scoped/emails/abc');
      assert.equal(bad.status, 422);
      assert.equal(bad.body.detail.ok, false);
    });

    it('a cancelled e-mail says why: cancelled_by_purchase', async () => {
      const r = await keyCall(t.app, B.key, 'GET', `/api/scoped/emails/${B.cart[0]}`);
      assert.equal(r.body.email.status, 'cancelled');
      assert.equal(r.body.email.reason, 'cancelled_by_purchase');
    });

    it('e-mails by order and by idempotency key: only the calling project, whatever it asks', async () => {
      const byOrder = await keyCall(t.app, A.key, 'GET', '/api/scoped/emails?order_id=1001');
      assert.equal(byOrder.status, 200);
      assert.deepEqual(byOrder.body.items.map((e: any) => e.id).sort(), [A.tx, ...A.cart].sort());
      const byKey = await keyCall(t.app, A.key, 'GET', '/api/scoped/emails?idempotency_key=same-key');
      assert.deepEqual(
        byKey.body.items.map((e: any) => e.id),
        [A.tx],
      );
      const all = await keyCall(t.app, A.key, 'GET', '/api/scoped/emails');
      const mine = new Set([A.tx, ...A.cart]);
      assert.ok(all.body.items.every((e: any) => mine.has(e.id)));
      // A cursor pointing past B's ids still yields only A's rows.
      const cur = encodeCursor(Math.max(B.tx, ...B.cart) + 1);
      const paged = await keyCall(t.app, A.key, 'GET', `/api/scoped/emails?cursor=${cur}&limit=1`);
      assert.equal(paged.body.items.length, 1);
      assert.ok(mine.has(paged.body.items[0].id));
      assert.ok(paged.body.next_cursor);
      const page2 = await keyCall(t.app, A.key, 'GET', `/api/scoped/emails?cursor=${paged.body.next_cursor}&limit=10`);
      assert.ok(page2.body.items.every((e: any) => mine.has(e.id)));
      assert.equal(paged.body.items.length + page2.body.items.length, mine.size);
      assert.ok(!/site-b/.test(JSON.stringify([all.body, byOrder.body, byKey.body, page2.body])));
    });

    it("chronology: the project's own requests, accepted and rejected, never another project's", async () => {
      const rej = await keyCall(t.app, A.key, 'POST', T, {
        event_type: 'contest_results',
        email: 'x@site-a.example',
        order_id: '1001',
      });
      assert.equal(rej.status, 422);
      const r = await keyCall(t.app, A.key, 'GET', '/api/scoped/events?order_id=1001&order=asc');
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.items.map((e: any) => [e.endpoint, e.accepted]),
        [
          ['transactional', true],
          ['order-created', true],
          ['transactional', false],
        ],
      );
      assert.equal(r.body.items[2].error_code, 'validation_error');
      assert.ok(!('key_id' in r.body.items[0]) && !('site_key' in r.body.items[0]));
      const b = await keyCall(t.app, B.key, 'GET', '/api/scoped/events?limit=500');
      assert.ok(b.body.items.length >= 3);
      assert.ok(b.body.items.every((e: any) => !JSON.stringify(e).includes('site-a')));
      const a = await keyCall(t.app, A.key, 'GET', '/api/scoped/events?limit=500');
      assert.ok(a.body.items.every((e: any) => !JSON.stringify(e).includes('site-b')));
      // Reads are not logged: the chronology does not grow by reading it.
      const again = await keyCall(t.app, A.key, 'GET', '/api/scoped/events?limit=500');
      assert.equal(again.body.items.length, a.body.items.length);
      // since: in the future, nothing.
      const later = new Date(t.clock.now() + 60_000).toISOString();
      assert.equal((await keyCall(t.app, A.key, 'GET', `/api/scoped/events?since=${later}`)).body.items.length, 0);
      // A cursor never leaks: paging A's chronology one by one meets only A's rows.
      let cursor: string | null = null;
      let seen = 0;
      do {
        const page: any = await keyCall(
          t.app,
          A.key,
          'GET',
          `/api/scoped/events?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.ok(page.body.items.every((e: any) => !JSON.stringify(e).includes('site-b')));
        seen += page.body.items.length;
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.equal(seen, a.body.items.length);
    });

    it('any active key reads; a disabled key, no key, a bad key do not', async () => {
      const narrow = await newKey(t.app, A.site, { permissions: [] }, 'reader');
      assert.equal((await keyCall(t.app, narrow.key, 'GET', `/api/scoped/emails/${A.tx}`)).status, 200);
      assert.equal((await keyCall(t.app, null, 'GET', '/api/scoped/emails')).status, 401);
      assert.equal((await keyCall(t.app, 'nonsense', 'GET', '/api/scoped/events')).status, 401);
      const dis = await adminCall(t.app, 'POST', `/api/admin/keys/${narrow.id}/disable`);
      assert.ok(dis.status < 300, JSON.stringify(dis.body));
      const r = await keyCall(t.app, narrow.key, 'GET', `/api/scoped/emails/${A.tx}`);
      assert.equal(r.status, 403);
      assert.equal(r.body.detail.error.code, 'api_key_disabled');
    });
  });
}
