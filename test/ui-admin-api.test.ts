// The admin endpoints the web UI adds (src/http/routes/admin/: uiMeta, templates, emails, contacts, dashboard): metadata, template preview, e-mail
// preview/cancel/retry, contact search and detail, dashboard figures; on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WEBHOOK_KINDS } from '../src/domain/statuses.js';
import { adminCall, createTestApp, DIALECTS, keyCall, rawCall, setupProject, type TestApp } from './support/harness.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const P = '/api/scoped/events/purchase';
const DAY = 86_400_000;

for (const d of DIALECTS) {
  describe(`admin UI endpoints [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    let key: string;
    before(async () => {
      t = await createTestApp(d.name);
      ({ site, key } = await setupProject(t.app));
    });
    after(() => t.close());

    it('every new endpoint wants the admin token', async () => {
      for (const [m, u] of [
        ['GET', '/api/admin/ui/meta'],
        ['GET', '/api/admin/dashboard'],
        ['GET', '/api/admin/contacts'],
        ['GET', '/api/admin/contacts/1'],
        ['POST', '/api/admin/emails/1/cancel'],
        ['POST', '/api/admin/emails/1/retry'],
        ['GET', '/api/admin/emails/1/preview'],
      ]) {
        const r = await rawCall(t.app, m, u, {});
        assert.equal(r.status, 401, `${m} ${u}`);
        assert.equal(r.body.detail.error.code, 'unauthorized');
      }
      const r = await rawCall(
        t.app,
        'POST',
        '/api/admin/templates/preview',
        {},
        { site_key: site, subject: 'x', html: 'x', text: 'x' },
      );
      assert.equal(r.status, 401);
    });

    it('meta lists the catalog, further event types, rights vocabularies and every routing key', async () => {
      const r = await adminCall(t.app, 'GET', '/api/admin/ui/meta');
      assert.equal(r.status, 200);
      assert.equal(r.body.catalog.length, 25);
      assert.deepEqual(r.body.catalog.find((e: any) => e.event_type === 'contest_results').fields, [
        'event_title',
        'work_title',
      ]);
      assert.equal(r.body.extra_event_types.length, 12);
      assert.deepEqual(r.body.permissions, ['transactional_send', 'cart_events_write', 'list_contacts_write']);
      assert.deepEqual(r.body.cart_types, ['course', 'diploma', 'portal']);
      assert.equal(r.body.routing_keys.length, 25 + 12 + 9);
      assert.ok(r.body.routing_keys.includes('portal_abandoned_cart_3d'));
      assert.ok(r.body.contact_statuses.includes('admin_blocked'));
      assert.deepEqual(r.body.webhook_kinds, [...WEBHOOK_KINDS], 'the kinds the webhooks page offers');
    });

    it('template preview renders unsaved source with sample values for the event, escaping the HTML part', async () => {
      const r = await adminCall(t.app, 'POST', '/api/admin/templates/preview', {
        site_key: site,
        event_type: 'contest_results',
        subject: '{{ name }}: {{ event_title }}',
        html: '<p>{{ work_title }} by {{ name }}</p>',
        text: '{{ work_title }}',
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      // A Russian project (the default locale) previews with Russian sample values (issue 25), and the HTML
      // is the whole document the worker would send (SPEC §16).
      assert.equal(r.body.subject, 'Ирина Петрова: Всероссийская педагогическая олимпиада «Мастерство учителя»');
      assert.ok(r.body.html.includes('<p>Конспект урока «Дроби на пицце» by Ирина Петрова</p>'), r.body.html);
      assert.ok(r.body.html.startsWith('<!doctype html>'), r.body.html);
      assert.equal(r.body.sample.event_type, 'contest_results');

      const own = await adminCall(t.app, 'POST', '/api/admin/templates/preview', {
        site_key: site,
        subject: 'Hi {{ name }}',
        html: '<p>{{ name }}</p>{% if unsubscribe_url %}<a href="{{ unsubscribe_url }}">u</a>{% endif %}',
        text: '{{ name }}',
        sample: { name: '<script>alert(1)</script>\r\nBcc: x@evil.example' },
      });
      assert.equal(own.status, 200);
      assert.ok(own.body.html.includes('<p>&lt;script&gt;alert(1)&lt;/script&gt;'), own.body.html);
      assert.ok(!own.body.subject.includes('\n'), 'no line break can reach the subject');
      assert.ok(own.body.html.includes('/u/'), 'a campaign template (no event type) gets an unsubscribe link');
    });

    it('a template that does not parse is a 422 naming the part and the line', async () => {
      const r = await adminCall(t.app, 'POST', '/api/admin/templates/preview', {
        site_key: site,
        subject: 'ok',
        html: '<p>fine</p>\n<p>{% if name %}never closed</p>',
        text: 'ok',
      });
      assert.equal(r.status, 422);
      assert.equal(r.body.detail.error.code, 'validation_error');
      assert.equal(r.body.detail.error.template_problem.part, 'html');
      assert.equal(r.body.detail.error.template_problem.line, 2);
      assert.ok(r.body.detail.error.invalid_fields.html.startsWith('line 2'));
      const unknown = await adminCall(t.app, 'POST', '/api/admin/templates/preview', {
        site_key: 'nope',
        subject: 'a',
        html: 'b',
        text: 'c',
      });
      assert.equal(unknown.status, 404);
    });

    it('an e-mail not yet rendered is previewed from its template; a rendered one shows what was sent', async () => {
      const sent = await keyCall(t.app, key, 'POST', T, {
        event_type: 'contest_results',
        email: 'preview@example.org',
        name: 'Vera',
        fields: { event_title: 'Spring', work_title: 'Poem' },
      });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      const id = sent.body.scheduled_email_id;
      const fresh = await adminCall(t.app, 'GET', `/api/admin/emails/${id}/preview`);
      assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
      assert.equal(fresh.body.stored, false);
      assert.equal(fresh.body.subject, 'Vera: contest_tpl');
      assert.equal(fresh.body.headers.To, '"Vera" <preview@example.org>');

      const rendered = {
        subject: 'As sent',
        html: '<p>sent</p>',
        text: 'sent',
        headers: { From: 'x', 'Message-ID': '<m@x>' },
      };
      await t.deps.db.db
        .updateTable('scheduled_emails')
        .set({ rendered: JSON.stringify(rendered), status: 'sent' })
        .where('id', '=', id)
        .execute();
      const stored = await adminCall(t.app, 'GET', `/api/admin/emails/${id}/preview`);
      assert.equal(stored.body.stored, true);
      assert.equal(stored.body.subject, 'As sent');
      assert.deepEqual(stored.body.headers, rendered.headers);
      assert.equal((await adminCall(t.app, 'GET', '/api/admin/emails/999999/preview')).status, 404);
    });

    it('cancel stops a pending e-mail once; a sent one cannot be cancelled (409)', async () => {
      const oc = await keyCall(t.app, key, 'POST', OC, {
        cart_type: 'course',
        email: 'cart@example.org',
        order_id: 'UI-CANCEL',
        course_name: 'Math',
      });
      assert.equal(oc.status, 200, JSON.stringify(oc.body));
      const [first, second] = oc.body.scheduled_email_ids;
      const r = await adminCall(t.app, 'POST', `/api/admin/emails/${first}/cancel`);
      assert.deepEqual(r.body, { ok: true, id: first, status: 'cancelled' });
      const row = (await adminCall(t.app, 'GET', `/api/admin/emails/${first}`)).body;
      assert.equal(row.status, 'cancelled');
      assert.equal(row.last_error, 'cancelled by an administrator');
      const again = await adminCall(t.app, 'POST', `/api/admin/emails/${first}/cancel`);
      assert.equal(again.status, 409);
      assert.equal(again.body.detail.error.code, 'conflict');
      assert.match(again.body.detail.error.message, /is cancelled/);
      assert.equal(
        (await adminCall(t.app, 'GET', `/api/admin/emails/${second}`)).body.status,
        'scheduled',
        'the other steps are untouched',
      );
      await t.deps.db.db.updateTable('scheduled_emails').set({ status: 'sent' }).where('id', '=', second).execute();
      assert.equal((await adminCall(t.app, 'POST', `/api/admin/emails/${second}/cancel`)).status, 409);
      assert.equal((await adminCall(t.app, 'POST', '/api/admin/emails/999999/cancel')).status, 404);
    });

    it('retry makes a failed e-mail due now with its attempts starting over; only failed ones', async () => {
      const sent = await keyCall(t.app, key, 'POST', T, {
        event_type: 'contest_results',
        email: 'retry@example.org',
        fields: { event_title: 'A', work_title: 'B' },
      });
      const id = sent.body.scheduled_email_id;
      assert.equal(
        (await adminCall(t.app, 'POST', `/api/admin/emails/${id}/retry`)).status,
        409,
        'a queued e-mail is not retried',
      );
      await t.deps.db.db
        .updateTable('scheduled_emails')
        .set({ status: 'failed', attempts: 5, last_error: '550 5.1.1 no such user', due_at: t.clock.now() - DAY })
        .where('id', '=', id)
        .execute();
      t.clock.advance(1000);
      const r = await adminCall(t.app, 'POST', `/api/admin/emails/${id}/retry`);
      assert.deepEqual(r.body, { ok: true, id, status: 'queued' });
      const row = await t.deps.db.db
        .selectFrom('scheduled_emails')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'queued');
      assert.equal(row.attempts, 0);
      assert.equal(Number(row.due_at), t.clock.now());
      assert.match(row.last_error!, /previous error: 550 5\.1\.1/);
      assert.equal((await adminCall(t.app, 'POST', `/api/admin/emails/${id}/retry`)).status, 409, 'not twice');
    });

    it("contacts: search by part of the address, paged; a contact's page has its books, events and e-mails", async () => {
      for (const n of ['olga', 'oleg', 'irina']) {
        await keyCall(t.app, key, 'POST', T, {
          event_type: 'contest_results',
          email: `${n}.search@example.org`,
          fields: { event_title: 'A', work_title: 'B' },
        });
      }
      const page1 = await adminCall(t.app, 'GET', `/api/admin/contacts?email=OL&site_key=${site}&limit=1`);
      assert.equal(page1.status, 200);
      assert.equal(page1.body.items.length, 1);
      assert.ok(page1.body.next_cursor);
      const page2 = await adminCall(
        t.app,
        'GET',
        `/api/admin/contacts?email=ol&limit=1&cursor=${page1.body.next_cursor}`,
      );
      const found = [...page1.body.items, ...page2.body.items].map((c: any) => c.email).sort();
      assert.deepEqual(found, ['oleg.search@example.org', 'olga.search@example.org']);
      assert.equal(page2.body.next_cursor, null);
      assert.equal(
        (await adminCall(t.app, 'GET', '/api/admin/contacts?email=%25')).body.items.length,
        0,
        'LIKE wildcards are not patterns',
      );
      assert.equal(
        (await adminCall(t.app, 'GET', '/api/admin/contacts?email=o_ga')).body.items.length,
        0,
        'an underscore is a character, not "any"',
      );

      const buy = await keyCall(t.app, key, 'POST', P, {
        cart_type: 'course',
        email: 'olga.search@example.org',
        order_id: 'UI-BUY-1',
        amount: 100,
        currency: 'RUB',
      });
      assert.equal(buy.status, 200, JSON.stringify(buy.body));
      const olga = page1.body.items[0].email === 'olga.search@example.org' ? page1.body.items[0] : page2.body.items[0];
      const c = await adminCall(t.app, 'GET', `/api/admin/contacts/${olga.id}`);
      assert.equal(c.status, 200);
      assert.equal(c.body.contact.email, 'olga.search@example.org');
      assert.equal(c.body.contact.site_key, site);
      assert.deepEqual(
        c.body.lists.map((l: any) => l.name),
        ['paid courses'],
      );
      assert.deepEqual(
        c.body.events.map((e: any) => e.endpoint),
        ['purchase', 'transactional'],
        'newest first',
      );
      assert.equal(c.body.emails.length, 1);
      assert.equal(c.body.emails_more, false);
      assert.equal((await adminCall(t.app, 'GET', '/api/admin/contacts/999999')).status, 404);
    });

    it('dashboard: events by day and type, e-mails by outcome, outbox depth and cart recovery', async () => {
      const local = await createTestApp(d.name);
      // Noon UTC: the minutes this test moves the clock never cross midnight.
      local.clock.t = Date.UTC(2026, 2, 14, 12, 0, 0);
      try {
        const s = await setupProject(local.app, { site: 'dash' });
        const call = (u: string, b: unknown) => keyCall(local.app, s.key, 'POST', u, b);
        // Yesterday: one accepted, one rejected event.
        local.clock.advance(-DAY);
        await call(T, {
          event_type: 'contest_results',
          email: 'a@example.org',
          fields: { event_title: 'A', work_title: 'B' },
        });
        await call(T, { event_type: 'contest_results', email: 'a@example.org' });
        local.clock.advance(DAY);
        // Today: two orders; the first gets a cart e-mail out, then is paid; the second stays unpaid.
        const o1 = await call(OC, {
          cart_type: 'course',
          email: 'b@example.org',
          order_id: 'D-1',
          course_name: 'Math',
        });
        await call(OC, { cart_type: 'course', email: 'c@example.org', order_id: 'D-2', course_name: 'Art' });
        await local.deps.db.db
          .updateTable('scheduled_emails')
          .set({ status: 'sent', sent_at: local.clock.now() })
          .where('id', '=', o1.body.scheduled_email_ids[0])
          .execute();
        local.clock.advance(60_000);
        await call(P, {
          cart_type: 'course',
          email: 'b@example.org',
          order_id: 'D-1',
          amount: 2490.5,
          currency: 'RUB',
        });

        const r = await adminCall(local.app, 'GET', '/api/admin/dashboard?site_key=dash&days=7');
        assert.equal(r.status, 200, JSON.stringify(r.body));
        const b = r.body;
        assert.equal(b.events_by_day.length, 7);
        const today = new Date(local.clock.now()).toISOString().slice(0, 10);
        const yesterday = new Date(local.clock.now() - DAY).toISOString().slice(0, 10);
        assert.equal(b.events_by_day[6].day, today);
        assert.deepEqual(
          { a: b.events_by_day[5].accepted, r: b.events_by_day[5].rejected, day: b.events_by_day[5].day },
          { a: 1, r: 1, day: yesterday },
        );
        assert.deepEqual(b.events_by_day[6].by_type, {
          'order-created course_order_created': 2,
          'purchase course_paid': 1,
        });
        assert.deepEqual(
          b.events_by_type.find((x: any) => x.event_type === 'contest_results'),
          {
            key: 'transactional contest_results',
            endpoint: 'transactional',
            event_type: 'contest_results',
            accepted: 1,
            rejected: 1,
            repeated: 0,
            total: 2,
          },
        );
        // 1 transactional + 2×3 cart e-mails; one cart e-mail sent, the paid order's other two cancelled.
        assert.deepEqual(b.emails_by_outcome, {
          sent: 1,
          delivered: 0,
          bounced: 0,
          soft_bounced: 0,
          complained: 0,
          failed: 0,
          suppressed: 0,
          cancelled: 2,
          pending: 4,
        });
        assert.deepEqual(b.outbox, {
          scheduled: 3,
          queued: 1,
          sending: 0,
          over_quota: 0,
          oldest_due_at: b.outbox.oldest_due_at,
          oldest_due_age_seconds: 86_460,
        });
        assert.equal(b.carts.orders_created, 2);
        assert.equal(b.carts.orders_paid, 1);
        assert.equal(b.carts.paid_after_cart_email, 1);
        assert.deepEqual(b.carts.amounts, [{ currency: 'RUB', paid: 2490.5, recovered: 2490.5 }]);
        assert.deepEqual(b.paid_amount_by_currency, { RUB: 2490.5 });
        assert.deepEqual(b.carts.by_cart_type, [{ cart_type: 'course', created: 2, paid: 1, recovered: 1 }]);
        assert.deepEqual(b.carts.by_day[6], { day: today, created: 2, paid: 1, recovered: 1 });

        const other = await adminCall(local.app, 'GET', '/api/admin/dashboard?days=1');
        assert.equal(other.body.events_by_day.length, 1);
        assert.equal(other.body.events_by_day[0].accepted, 3, 'yesterday is outside a one-day window');
        for (const bad of ['0', '91', 'x'])
          assert.equal((await adminCall(local.app, 'GET', `/api/admin/dashboard?days=${bad}`)).status, 422, bad);
        assert.equal((await adminCall(local.app, 'GET', '/api/admin/dashboard?site_key=nope')).status, 404);
      } finally {
        await local.close();
      }
    });
  });
}
