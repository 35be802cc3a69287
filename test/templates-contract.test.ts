// SPEC §16 through HTTP on both databases: variables, the 422 of a request lacking what its template
// requires (logged), the catalog, the impact check, versions, layouts, MJML, and a real SMTP delivery of
// a whole document with inlined CSS; an e-mail whose data no longer satisfies the template fails.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createSmtpTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { PUBLIC_URL, SECRET, startSmtp } from './fixtures/delivery-support.js';
import {
  adminCall,
  createTestApp,
  DIALECTS,
  events,
  keyCall,
  newKey,
  withoutDefaultLayout,
  type TestApp,
} from './support/harness.js';
import { bodyOf, documentHead } from './support/document.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const PAID = {
  subject: '{{ name }}, оплата курса «{{ course_name }}» получена',
  html: '<style>p.lead { color: #c00; }</style><p class="lead">Здравствуйте, {{ name }}!</p><p>{{ fields.place | default: "—" }}</p>{% if order_id %}<p>Заказ {{ order_id }}</p>{% endif %}',
  text: 'Курс: {{ course_name }}',
};

for (const d of DIALECTS) {
  describe(`templates with a contract [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    const site = 'contract1';
    const save = (name: string, body: Record<string, unknown>) =>
      adminCall(t.app, 'POST', '/api/templates', { site_key: site, name, ...body });
    const send = (body: Record<string, unknown>) => keyCall(t.app, key, 'POST', T, body);
    // E-mails queued by the earlier cases would go out with the next one: the SMTP cases start clean.
    const cancelPending = () =>
      sql`update scheduled_emails set status = 'cancelled' where status in ('queued', 'scheduled')`.execute(
        t.deps.db.db,
      );
    const paidRequest = (extra: Record<string, unknown> = {}) => ({
      event_type: 'course_paid',
      email: 'irina@school.example',
      ...extra,
    });

    before(async () => {
      t = await createTestApp(d.name);
      await adminCall(t.app, 'POST', '/api/sites', {
        site_key: site,
        name: 'Педсовет',
        from_email: 'noreply@c1.example',
      });
      await withoutDefaultLayout(t.app, site);
      ({ key } = await newKey(t.app, site, {
        permissions: ['transactional_send', 'cart_events_write'],
        allowed_api_events: ['course_paid', 'contest_results'],
        allowed_cart_types: ['course'],
      }));
    });
    after(() => t.close());

    it('analyses variables at save: request members, required unless default/if or supplied by the gateway', async () => {
      const r = await save('paid', PAID);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.version, 1);
      assert.equal(r.body.published, true);
      assert.deepEqual(r.body.variables, [
        { name: 'fields.course_name', required: true },
        { name: 'fields.place', required: false },
        { name: 'name', required: false },
        { name: 'order_id', required: false },
      ]);
      const list = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`);
      const tpl = list.body.items.find((i: any) => i.name === 'paid');
      assert.deepEqual(tpl.variables, r.body.variables);
      assert.equal(tpl.unchecked, false);
      assert.equal(tpl.version, 1);
    });

    it('a Liquid or MJML error is a 422 naming the line', async () => {
      const bad = await save('broken', { subject: 'x', html: '<p>ok</p>\n<p>{% if name %}open</p>', text: '' });
      assert.equal(bad.status, 422);
      assert.equal(bad.body.detail.error.template_problem.part, 'html');
      const mjml = await save('broken_mjml', {
        format: 'mjml',
        subject: 'x',
        text: 'x',
        html: '<mjml><mj-body>\n<mj-section>\n<mj-colum><mj-text>x</mj-text></mj-colum></mj-section></mj-body></mjml>',
      });
      assert.equal(mjml.status, 422, JSON.stringify(mjml.body));
      assert.equal(mjml.body.detail.error.template_problem.line, 3);
      assert.match(mjml.body.detail.error.message, /line 3/);
    });

    it('routing a template to an event with no recent requests saves at once', async () => {
      const r = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, {
        routes: { course_paid: 'paid' },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    });

    it('a request lacking what the routed template requires is the seed’s 422, logged like every refusal', async () => {
      for (const blank of [{}, { fields: { course_name: '   ' } }, { fields: { course_name: null } }]) {
        const r = await send(paidRequest(blank));
        assert.equal(r.status, 422, JSON.stringify(r.body));
        const e = r.body.detail.error;
        assert.equal(e.code, 'validation_error');
        assert.deepEqual(e.missing_fields, ['fields.course_name']);
        assert.deepEqual(e.required_fields, ['event_type', 'email', 'fields.course_name']);
        assert.equal(e.event_type, 'course_paid');
      }
      const logged = await events(t.app, `?site_key=${site}&limit=1`);
      assert.equal(logged[0].http_status, 422);
      assert.equal(logged[0].error_code, 'validation_error');
      // From fields or top level, as templates see it: accepted.
      assert.equal((await send(paidRequest({ fields: { course_name: 'Методика' } }))).status, 200);
      assert.equal((await send(paidRequest({ course_name: 'Методика' }))).status, 200);
    });

    it('the catalog tells what a request must carry, templates’ needs included and apart', async () => {
      const r = await keyCall(t.app, key, 'GET', '/api/scoped/events/catalog');
      assert.equal(r.status, 200);
      const paid = r.body.extra_events.find((e: any) => e.event_type === 'course_paid');
      assert.deepEqual(paid.required_fields, ['event_type', 'email', 'fields.course_name']);
      assert.deepEqual(paid.template_required_fields, ['fields.course_name']);
      const contest = r.body.events.find((e: any) => e.event_type === 'contest_results');
      assert.deepEqual(contest.template_required_fields, []);
    });

    it('a change making a member newly required is 409 template_impact with the counts; confirm saves it', async () => {
      // Two accepted requests above carried course_name, one as a top-level member; none carried order_id.
      const changed = { ...PAID, html: `${PAID.html}<p>{{ order_id }}</p>` };
      const r = await save('paid', changed);
      assert.equal(r.status, 409, JSON.stringify(r.body));
      const e = r.body.detail.error;
      assert.equal(e.code, 'template_impact');
      assert.deepEqual(e.impact, [
        {
          event_type: 'course_paid',
          template_key: 'paid',
          newly_required: ['order_id'],
          requests_7d: 2,
          would_fail_7d: 2,
        },
      ]);
      assert.match(e.message, /2 of the 2 course_paid requests of the last 7 days had no order_id/);
      // The live version did not change.
      assert.equal((await send(paidRequest({ course_name: 'Методика' }))).status, 200);
      // A draft is not checked (nothing goes live), a confirmed save is.
      const draft = await save('paid', { ...changed, draft: true });
      assert.equal(draft.status, 200, JSON.stringify(draft.body));
      assert.equal(draft.body.published, false);
      assert.equal(draft.body.version, 2);
      const confirmed = await save('paid', { ...changed, confirm: true });
      assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
      assert.equal(confirmed.body.version, 3);
      assert.equal(confirmed.body.impact[0].would_fail_7d, 3);
      const refused = await send(paidRequest({ course_name: 'Методика' }));
      assert.equal(refused.status, 422);
      assert.deepEqual(refused.body.detail.error.missing_fields, ['order_id']);
    });

    it('routing is checked the same way; the impact is read with one query per event type', async () => {
      await save('contest', { subject: '{{ event_title }}', html: '<p>{{ fields.diploma_url }}</p>', text: '' });
      await send({
        event_type: 'contest_results',
        email: 'a@c1.example',
        fields: { event_title: 'Весна', work_title: 'Стих' },
      });
      const routes = { course_paid: 'paid', contest_results: 'contest' };
      const r = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, { routes });
      assert.equal(r.status, 409);
      assert.deepEqual(
        r.body.detail.error.impact.map((i: any) => [i.event_type, i.newly_required, i.requests_7d, i.would_fail_7d]),
        [['contest_results', ['fields.diploma_url'], 1, 1]],
      );
      const ok = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, { routes, confirm: true });
      assert.equal(ok.status, 200);
    });

    it('versions: listed, read whole, diffed against the published one; publishing an older one rolls back', async () => {
      const base = `/api/admin/projects/${site}/templates/paid/versions`;
      const list = await adminCall(t.app, 'GET', base);
      assert.deepEqual(
        list.body.items.map((v: any) => [v.version, v.published]),
        [
          [3, true],
          [2, false],
          [1, false],
        ],
      );
      assert.equal(list.body.items[0].actor, 'root');
      const v1 = await adminCall(t.app, 'GET', `${base}/1`);
      assert.equal(v1.body.html, PAID.html);
      assert.equal(v1.body.format, 'html');
      const diff = await adminCall(t.app, 'GET', `${base}/1/diff`);
      assert.equal(diff.body.against, 3);
      assert.ok(diff.body.html.some((c: any) => c.op === 'removed' && c.value.includes('{{ order_id }}')));
      // Rolling back to 1 makes order_id optional again: no impact, published at once.
      const back = await adminCall(t.app, 'POST', `${base}/1/publish`, {});
      assert.equal(back.status, 200, JSON.stringify(back.body));
      assert.equal((await send(paidRequest({ course_name: 'Методика' }))).status, 200);
      const missing = await adminCall(t.app, 'GET', `${base}/99`);
      assert.equal(missing.status, 404);
      const after = await adminCall(t.app, 'GET', base);
      assert.deepEqual(
        after.body.items.map((v: any) => [v.version, v.published]),
        [
          [3, false],
          [2, false],
          [1, true],
        ],
        'a rollback publishes version 1 again; it creates, changes or removes no version',
      );
    });

    it('previews take a stored event or a saved version; a test send names the draft it tries', async () => {
      const stored = (await events(t.app, `?site_key=${site}&event_type=course_paid&limit=50`)).find(
        (e) => e.accepted && e.payload?.fields?.course_name === 'Методика',
      )!;
      const byEvent = await adminCall(t.app, 'POST', '/api/admin/templates/preview', {
        site_key: site,
        ...PAID,
        event_id: stored.id,
      });
      assert.equal(byEvent.status, 200, JSON.stringify(byEvent.body));
      assert.equal(byEvent.body.sample.event_type, 'course_paid');
      assert.match(byEvent.body.subject, /«Методика»/);
      const other = await adminCall(t.app, 'POST', '/api/admin/templates/preview', {
        site_key: site,
        ...PAID,
        event_id: 999_999,
      });
      assert.equal(other.status, 404);
      // Version 2 is a draft that prints the order id; the Russian sample fills it.
      const draft = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/templates/paid/preview`, {
        version: 2,
      });
      assert.equal(draft.status, 200, JSON.stringify(draft.body));
      assert.equal(draft.body.version, 2);
      assert.ok(draft.body.html.includes('<p>ORDER-1001</p>'), draft.body.html);
      assert.match(draft.body.subject, /^Ирина Петрова, оплата курса «Методика преподавания/);
      const sent = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/delivery/test`, {
        template: 'paid',
        to: 'ирина@пример.рф',
        version: 2,
      });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      const detail = await adminCall(t.app, 'GET', `/api/admin/emails/${sent.body.scheduled_email_id}`);
      assert.equal(detail.body.template_version, 2);
      assert.equal(detail.body.to, 'ирина@пример.рф');
      const none = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/delivery/test`, {
        template: 'paid',
        to: 'ирина@пример.рф',
        version: 77,
      });
      assert.equal(none.status, 404);
    });

    it('layouts: {{ content }} exactly once, used by templates and the project default, 409 on delete while used', async () => {
      const L = `/api/admin/projects/${site}/layouts`;
      const twice = await adminCall(t.app, 'PUT', `${L}/main`, {
        html: '{{ content }}{{ content }}',
        text: '{{ content }}',
      });
      assert.equal(twice.status, 422);
      assert.match(twice.body.detail.error.invalid_fields.html, /exactly once/);
      const ok = await adminCall(t.app, 'PUT', `${L}/main`, {
        html: '<div class="frame"><h1>{{ site_name }}</h1>{{ content }}<p class="foot">{{ unsubscribe_url | default: "" }}</p></div>',
        text: '{{ site_name }}\n\n{{ content }}',
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.created, true);
      const patch = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, { default_layout: 'nope' });
      assert.equal(patch.status, 422);
      const set = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, {
        default_layout: 'main',
        fallback_name: 'дорогой коллега',
      });
      assert.equal(set.status, 200);
      assert.equal(set.body.project.default_layout, 'main');
      // A layout that newly needs a member counts against the templates rendered in it.
      const needy = await adminCall(t.app, 'PUT', `${L}/main`, {
        html: '{{ content }}<p>{{ fields.teacher }}</p>',
        text: '{{ content }}',
      });
      assert.equal(needy.status, 409, JSON.stringify(needy.body));
      assert.equal(needy.body.detail.error.impact[0].newly_required[0], 'fields.teacher');
      const del = await adminCall(t.app, 'DELETE', `${L}/main`);
      assert.equal(del.status, 409);
      assert.equal(del.body.detail.error.project_default, true);
      const listed = await adminCall(t.app, 'GET', L);
      assert.deepEqual(
        listed.body.items.map((l: any) => l.name),
        ['main'],
      );
    });

    it('the e-mail that goes out is a whole document with inlined CSS, layout and fallback name (real SMTP)', async () => {
      const smtp = await startSmtp();
      const transport = createSmtpTransport(smtp.url, { maxConnections: 1, timeoutMs: 5000 });
      const worker = createWorker({ db: t.deps.db, transport, clock: t.clock, publicUrl: PUBLIC_URL, secret: SECRET });
      try {
        await cancelPending();
        // Re-saving picks up the project's default layout.
        const saved = await save('paid', PAID);
        assert.equal(saved.status, 200, JSON.stringify(saved.body));
        assert.ok(saved.body.variables.some((v: any) => v.name === 'site_name' && !v.required));
        const r = await send(paidRequest({ fields: { course_name: 'Методика <b>' } }));
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(await worker.runOnce(), 1);
        await smtp.waitForReceived(1);
        const mail = smtp.accepted[0];
        assert.equal(mail.subject, 'Дорогой коллега, оплата курса «Методика <b>» получена');
        const html = mail.html as string;
        assert.ok(html.startsWith('<!doctype html>'), html.slice(0, 80));
        assert.deepEqual(documentHead(html), {
          lang: 'ru',
          title: 'Дорогой коллега, оплата курса «Методика <b>» получена',
          charset: 'utf-8',
        });
        const body = bodyOf(html);
        assert.ok(body.includes('<h1>Педсовет</h1>'), body);
        assert.ok(body.includes('<p class="lead" style="color: #c00;">Здравствуйте, дорогой коллега!</p>'), body);
        assert.ok(!html.includes('<style>'), 'the only rule was inlined');
        const detail = await adminCall(t.app, 'GET', `/api/admin/emails/${r.body.scheduled_email_id}`);
        assert.equal(detail.body.template_version, saved.body.version);
      } finally {
        await worker.stop();
        await transport.close();
        await smtp.close();
      }
    });

    it('an e-mail whose data no longer satisfies the published template fails with the members named', async () => {
      await cancelPending();
      const r = await send(paidRequest({ fields: { course_name: 'Методика' } }));
      assert.equal(r.status, 200);
      const id = r.body.scheduled_email_id as number;
      // Published meanwhile: now needs fields.teacher (confirmed over the impact warning).
      const changed = await save('paid', {
        ...PAID,
        text: 'Курс: {{ course_name }} {{ fields.teacher }}',
        confirm: true,
      });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      const smtp = await startSmtp();
      const transport = createSmtpTransport(smtp.url, { maxConnections: 1, timeoutMs: 5000 });
      const worker = createWorker({ db: t.deps.db, transport, clock: t.clock, publicUrl: PUBLIC_URL, secret: SECRET });
      try {
        assert.equal(await worker.runOnce(), 1);
        const detail = await adminCall(t.app, 'GET', `/api/admin/emails/${id}`);
        assert.equal(detail.body.status, 'failed');
        assert.match(detail.body.last_error, /fields\.teacher/);
        const scoped = await keyCall(t.app, key, 'GET', `/api/scoped/emails/${id}`);
        assert.equal(scoped.body.email.reason, 'missing_fields');
        assert.equal(smtp.accepted.length, 0);
      } finally {
        await worker.stop();
        await transport.close();
        await smtp.close();
      }
    });

    it('a template saved before this version is unchecked: no 422 from an upgrade', async () => {
      await save('legacy', { subject: '{{ fields.anything }}', html: '<p>{{ x }}</p>', text: '' });
      // As migration 017 leaves a template that existed before it.
      await sql`update templates set variables = null where name = 'legacy'`.execute(t.deps.db.db);
      await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, {
        routes: { course_paid: 'legacy', contest_results: 'contest' },
        confirm: true,
      });
      const list = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`);
      assert.equal(list.body.items.find((i: any) => i.name === 'legacy').unchecked, true);
      assert.equal((await send(paidRequest())).status, 200);
    });

    it('an order-created whose cart chain needs a member is refused without it', async () => {
      await save('cart1', { subject: 'Корзина', html: '<a href="{{ fields.pay_url }}">Оплатить</a>', text: '' });
      const routed = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, {
        routes: { course_abandoned_cart_1h: 'cart1' },
        confirm: true,
      });
      assert.equal(routed.status, 200);
      const order = { cart_type: 'course', email: 'o@c1.example', order_id: 'O-1' };
      const r = await keyCall(t.app, key, 'POST', OC, order);
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.deepEqual(r.body.detail.error.missing_fields, ['fields.pay_url']);
      assert.deepEqual(r.body.detail.error.required_fields, ['email', 'order_id', 'cart_type', 'fields.pay_url']);
      const ok = await keyCall(t.app, key, 'POST', OC, { ...order, fields: { pay_url: 'https://c1.example/pay' } });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    });
  });
}
