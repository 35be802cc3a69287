// Every effect of SPEC §3, through the HTTP layer, on each database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  adminCall,
  createTestApp,
  DIALECTS,
  events,
  keyCall,
  newKey,
  setupProject,
  type TestApp,
} from './support/harness.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const P = '/api/scoped/events/purchase';
const contest = {
  event_type: 'contest_results',
  email: 'Anna@Example.com ',
  name: 'Anna',
  fields: { event_title: 'Spring', work_title: 'Poem', place: '1' },
};

for (const d of DIALECTS) {
  describe(`gateway effects [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    let lists: { paid: number; cat: number; leads: number };
    const emails = async (q: string) =>
      (await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}&${q}`)).body.items as any[];
    const members = async (list: number) =>
      (await adminCall(t.app, 'GET', `/api/lists/${list}/contacts`)).body.items as any[];

    before(async () => {
      t = await createTestApp(d.name);
      ({ key, site, lists } = await setupProject(t.app));
    });
    after(() => t.close());

    it("catalog: every catalog event with required fields and the project routing, and the key's events", async () => {
      const r = await keyCall(t.app, key, 'GET', '/api/scoped/events/catalog');
      assert.equal(r.status, 200);
      assert.equal(r.body.site_key, site);
      assert.equal(r.body.events.length, 25);
      const cr = r.body.events.find((e: any) => e.event_type === 'contest_results');
      assert.deepEqual(cr, {
        event_type: 'contest_results',
        description: cr.description,
        required_fields: ['event_type', 'email', 'fields.event_title', 'fields.work_title'],
        // SPEC §16: what the routed template requires, apart (the fixture's template requires nothing more).
        template_required_fields: [],
        has_api: true,
        has_template: true,
        template_key: 'contest_tpl',
      });
      const ol = r.body.events.find((e: any) => e.event_type === 'olympiad_results');
      assert.equal(ol.has_template, false);
      assert.equal(ol.template_key, null);
      assert.ok(r.body.supported_events.includes('course_paid'));
      assert.ok(!r.body.supported_events.includes('webinar_registration_created'));
      const logged = await events(t.app, `?site_key=${site}&limit=1`);
      assert.equal(logged[0].endpoint, 'catalog', 'reads are in the chronology too');
      assert.equal(logged[0].accepted, true);
    });

    it('transactional with a routed template: one queued e-mail with the request as context', async () => {
      const r = await keyCall(t.app, key, 'POST', T, { ...contest, order_id: 'A-1' }, { prefer: 'respond-async' });
      assert.equal(r.status, 200);
      assert.equal(r.body.ok, true);
      assert.equal(r.body.site_key, site);
      assert.equal(r.body.event_type, 'contest_results');
      assert.equal(r.body.email, 'anna@example.com');
      assert.equal(r.body.status, 'queued');
      assert.equal(r.body.sent, 0);
      assert.equal(r.body.failed, 0);
      assert.ok(Number.isInteger(r.body.scheduled_email_id));
      const e = (await adminCall(t.app, 'GET', `/api/admin/emails/${r.body.scheduled_email_id}`)).body;
      assert.equal(e.kind, 'transactional');
      assert.equal(e.template_key, 'contest_tpl');
      assert.equal(e.to, 'anna@example.com');
      assert.equal(e.status, 'queued');
      assert.equal(e.order_id, 'A-1');
      assert.equal(e.event_id, r.body.event_id);
      assert.equal(e.context.event_title, 'Spring');
      assert.equal(e.context.place, '1');
      assert.equal(e.context.name, 'Anna');
      assert.ok(Math.abs(Date.parse(e.due_at) - t.clock.now()) < 1000);
    });

    it('transactional without a template: accepted, logged, nothing scheduled', async () => {
      const r = await keyCall(t.app, key, 'POST', T, {
        event_type: 'olympiad_results',
        email: 'b@example.com',
        fields: { event_title: 'Math' },
      });
      assert.equal(r.status, 200);
      assert.deepEqual(
        { ...r.body, event_id: 0 },
        {
          ok: true,
          site_key: site,
          event_type: 'olympiad_results',
          email: 'b@example.com',
          event_id: 0,
          scheduled_email_id: null,
          sent: 0,
          failed: 0,
          status: 'no_template',
          plan: [
            {
              scheduled_email_id: null,
              template_key: null,
              step: null,
              due_at: null,
              status: 'skipped',
              reason: 'no_template',
            },
          ],
        },
      );
      const ev = (await adminCall(t.app, 'GET', `/api/admin/external-events/${r.body.event_id}`)).body.event;
      assert.equal(ev.accepted, true);
      assert.equal(ev.event_type, 'olympiad_results');
    });

    it('idempotent replay: same answer, Idempotent-Replayed header, nothing sent twice', async () => {
      const body = { ...contest, idempotency_key: 'A-2:contest_results' };
      const first = await keyCall(t.app, key, 'POST', T, body, { prefer: 'respond-async' });
      const again = await keyCall(t.app, key, 'POST', T, {
        ...body,
        fields: { place: '1', work_title: 'Poem', event_title: 'Spring' },
      });
      assert.equal(again.status, 200);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body.scheduled_email_id, first.body.scheduled_email_id);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      const rows = await emails('to=anna@example.com');
      assert.equal(rows.filter((e) => e.id === first.body.scheduled_email_id).length, 1);
      const log = await events(t.app, `?site_key=${site}&event_type=contest_results&limit=2`);
      assert.equal(log[0].effects.replay_of, first.body.event_id);
    });

    it('concurrent requests with one idempotency key create one e-mail', async () => {
      const body = { ...contest, email: 'race@example.com', idempotency_key: 'race-1' };
      const rs = await Promise.all(
        Array.from({ length: 6 }, () => keyCall(t.app, key, 'POST', T, body, { prefer: 'respond-async' })),
      );
      assert.ok(
        rs.every((r) => r.status === 200),
        JSON.stringify(rs.map((r) => r.body)),
      );
      assert.equal(new Set(rs.map((r) => r.body.scheduled_email_id)).size, 1);
      assert.equal((await emails('to=race@example.com')).length, 1);
    });

    it('order-created schedules the cart chain at +60, +1440, +4320 minutes', async () => {
      const res = await keyCall(t.app, key, 'POST', OC, {
        cart_type: 'course',
        email: 'cart@example.com',
        name: 'Cart',
        order_id: 'O-1',
        course_name: 'Inclusive education',
        fields: { pay_url: 'https://site.example/pay/O-1' },
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.duplicate, false);
      assert.equal(res.body.cart_type, 'course');
      assert.equal(res.body.scheduled_email_ids.length, 3);
      const rows = (await emails('order_id=O-1')).sort((a, b) => a.id - b.id);
      assert.deepEqual(
        rows.map((e) => e.template_key),
        ['cart_1h', 'cart_1d', 'cart_3d'],
      );
      assert.deepEqual(
        rows.map((e) => (Date.parse(e.due_at) - t.clock.now()) / 60_000),
        [60, 1440, 4320],
      );
      assert.ok(rows.every((e) => e.status === 'scheduled' && e.kind === 'cart'));
      const detail = (await adminCall(t.app, 'GET', `/api/admin/emails/${rows[0].id}`)).body;
      assert.equal(detail.context.course_name, 'Inclusive education');
      assert.equal(detail.context.pay_url, 'https://site.example/pay/O-1');
    });

    it('a repeated order-created schedules nothing new and says duplicate', async () => {
      const res = await keyCall(t.app, key, 'POST', OC, {
        cart_type: 'course',
        email: 'cart@example.com',
        order_id: 'O-1',
        fields: { course_name: 'Inclusive education' },
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.duplicate, true);
      assert.deepEqual(res.body.scheduled_email_ids, []);
      assert.equal((await emails('order_id=O-1')).length, 3);
    });

    it('a cart type without routed chain templates schedules nothing (steps skipped)', async () => {
      const res = await keyCall(t.app, key, 'POST', OC, {
        cart_type: 'diploma',
        email: 'dip@example.com',
        order_id: 'D-1',
      });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.scheduled_email_ids, []);
    });

    it('purchase stops the pending chain and fills the paid and category books', async () => {
      const res = await keyCall(t.app, key, 'POST', P, {
        cart_type: 'course',
        email: 'CART@example.com',
        order_id: 'O-1',
        course_id: '77',
        amount: 2500,
        currency: 'RUB',
        fields: { paid_at: '2026-11-20T10:15:00+03:00', account_url: 'https://x.example', course_category_id: '3' },
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.stopped, 3);
      assert.deepEqual(res.body.address_books, [lists.paid, lists.cat]);
      assert.deepEqual(res.body.warnings, []);
      assert.equal(res.body.duplicate, false);
      assert.ok((await emails('order_id=O-1')).every((e) => e.status === 'cancelled'));
      assert.ok((await members(lists.paid)).some((m) => m.email === 'cart@example.com'));
      assert.ok((await members(lists.cat)).some((m) => m.email === 'cart@example.com'));
    });

    it('a repeated purchase is harmless: nothing stopped twice, one membership', async () => {
      const res = await keyCall(t.app, key, 'POST', P, {
        cart_type: 'course',
        email: 'cart@example.com',
        order_id: 'O-1',
        fields: { course_category_id: 3 },
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.stopped, 0);
      assert.equal(res.body.duplicate, true);
      assert.equal((await members(lists.paid)).filter((m) => m.email === 'cart@example.com').length, 1);
    });

    it('purchase before order-created: the late order-created schedules nothing', async () => {
      const p = await keyCall(t.app, key, 'POST', P, {
        cart_type: 'course',
        email: 'early@example.com',
        order_id: 'O-2',
      });
      assert.equal(p.status, 200);
      assert.equal(p.body.stopped, 0);
      const oc = await keyCall(t.app, key, 'POST', OC, {
        cart_type: 'course',
        email: 'early@example.com',
        order_id: 'O-2',
        course_name: 'X',
      });
      assert.equal(oc.status, 200);
      assert.deepEqual(oc.body.scheduled_email_ids, []);
      assert.equal((await emails('order_id=O-2')).length, 0);
    });

    it('an unknown category or missing paid book does not reject the purchase: warnings instead', async () => {
      await keyCall(t.app, key, 'POST', OC, { cart_type: 'course', email: 'w@example.com', order_id: 'O-3' });
      const res = await keyCall(t.app, key, 'POST', P, {
        cart_type: 'course',
        email: 'w@example.com',
        order_id: 'O-3',
        fields: { course_category_id: '999' },
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.stopped, 3);
      assert.deepEqual(res.body.address_books, [lists.paid]);
      assert.match(res.body.warnings[0], /unknown course category 999/);
      const dip = await keyCall(t.app, key, 'POST', P, {
        cart_type: 'diploma',
        email: 'w@example.com',
        order_id: 'D-9',
      });
      assert.equal(dip.status, 200);
      assert.match(dip.body.warnings[0], /no address book of paid orders/);
    });

    it('the chronology tells the story of one order in order, with effects', async () => {
      const story = await events(t.app, `?site_key=${site}&order_id=O-1&order=asc`);
      assert.deepEqual(
        story.map((e) => e.event_type),
        ['course_order_created', 'course_order_created', 'course_paid', 'course_paid'],
      );
      assert.equal(story[0].effects.scheduled_email_ids.length, 3);
      assert.equal(story[2].effects.stopped_email_ids.length, 3);
      assert.deepEqual(story[2].effects.address_books, [lists.paid, lists.cat]);
    });

    it('chronology pages with a cursor, newest first, and filters by status and type', async () => {
      const first = await adminCall(t.app, 'GET', `/api/admin/external-events?site_key=${site}&limit=3`);
      assert.equal(first.body.items.length, 3);
      assert.ok(first.body.next_cursor);
      const second = await adminCall(
        t.app,
        'GET',
        `/api/admin/external-events?site_key=${site}&limit=3&cursor=${first.body.next_cursor}`,
      );
      assert.ok(second.body.items[0].id < first.body.items[2].id);
      assert.ok(first.body.items[0].id > first.body.items[1].id);
      const paid = await events(t.app, `?site_key=${site}&event_type=course_paid&status=accepted`);
      assert.ok(paid.length >= 3 && paid.every((e) => e.event_type === 'course_paid' && e.accepted));
      const bad = await adminCall(t.app, 'GET', '/api/admin/external-events?limit=0');
      assert.equal(bad.status, 422);
    });

    it('stats: totals, by type, by day, and the e-mails events caused', async () => {
      await keyCall(t.app, key, 'POST', T, { event_type: 'contest_results' });
      const s = (await adminCall(t.app, 'GET', `/api/admin/external-events/stats?site_key=${site}`)).body;
      assert.equal(s.total, s.accepted + s.rejected);
      assert.ok(s.rejected >= 1);
      const ct = s.by_event_type.find((b: any) => b.event_type === 'contest_results');
      assert.ok(ct.accepted >= 3 && ct.rejected >= 1);
      assert.equal(s.by_day.length, 1);
      assert.equal(s.by_day[0].day, new Date(t.clock.now()).toISOString().slice(0, 10));
      assert.ok(s.emails_by_status.cancelled >= 6);
      assert.ok(s.rejected_by_code.some((c: any) => c.code === 'validation_error'));
    });

    it("scoped address-book endpoint: only the key's book, contact upserted once", async () => {
      const { key: writer } = await newKey(
        t.app,
        site,
        { permissions: ['list_contacts_write'], list_id: lists.leads },
        'writer',
      );
      const url = `/api/scoped/lists/${lists.leads}/contacts`;
      const r = await keyCall(t.app, writer, 'POST', url, {
        email: 'Lead@Example.com',
        name: 'Lead',
        fields: { city: 'Kazan' },
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.list_id, lists.leads);
      const r2 = await keyCall(t.app, writer, 'POST', url, { email: 'lead@example.com', fields: { school: '5' } });
      assert.equal(r2.body.contact_id, r.body.contact_id);
      assert.equal((await members(lists.leads)).length, 1);
      const other = await keyCall(t.app, writer, 'POST', `/api/scoped/lists/${lists.paid}/contacts`, {
        email: 'x@example.com',
      });
      assert.equal(other.status, 403);
      assert.equal(other.body.detail.error.code, 'permission_denied');
      const invalid = await keyCall(t.app, writer, 'POST', url, { name: 'no email' });
      assert.equal(invalid.status, 422);
      assert.deepEqual(invalid.body.detail.error.missing_fields, ['email']);
    });
  });
}
