// The example project in Russian (SPEC §15): its categories and templates as the document's project has
// them, e-mails that arrive in Russian through a real SMTP server, and a second `demo` that changes
// nothing an administrator changed or deleted, and says so. SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkTemplate } from '../src/delivery/render.js';
import { createSmtpTransport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { DEMO_CATEGORIES, describeDemo, loadDemo, type DemoResult } from '../src/services/demo.js';
import { cliActor } from '../src/cliAdmin.js';
import { PUBLIC_URL, SECRET, startSmtp, type TestSmtp } from './fixtures/delivery-support.js';
import { adminCall, createTestApp, DIALECTS, keyCall, type TestApp } from './support/harness.js';

const NBSP = '\u00a0';
const CYRILLIC = /[а-яё]/i;
// Every event type and cart step the document's project routes (its "scenario").
const ROUTED = [
  'course_abandoned_cart_1h',
  'course_abandoned_cart_1d',
  'course_abandoned_cart_3d',
  'course_order_created',
  'course_document_ready',
  'course_finished_test_missing',
  'course_paid',
  'course_test_failed',
  'course_test_passed',
  'course_track_number',
  'form_lead_collective_notify',
  'portal_abandoned_cart_1d',
  'portal_abandoned_cart_1h',
  'portal_abandoned_cart_3d',
  'contest_results',
  'contest_work_accepted',
  'olympiad_results',
  'diploma_paid',
  'publication_site_submitted',
];

for (const d of DIALECTS) {
  describe(`demo project in Russian [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let first: DemoResult;
    let smtp: TestSmtp;
    let worker: Worker;
    let transport: ReturnType<typeof createSmtpTransport>;
    const SITE = 'demo-courses';

    before(async () => {
      t = await createTestApp(d.name);
      first = await loadDemo(t.deps, cliActor());
      smtp = await startSmtp();
      transport = createSmtpTransport(smtp.url, { maxConnections: 1, timeoutMs: 5000 });
      worker = createWorker({ db: t.deps.db, transport, clock: t.clock, publicUrl: PUBLIC_URL, secret: SECRET });
    });
    after(async () => {
      await worker?.stop();
      await transport?.close();
      await smtp?.close();
      await t?.close();
    });

    const templates = async () =>
      (await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/templates`)).body.items as {
        name: string;
        subject: string;
        html: string;
        text: string;
      }[];

    it('the project is Russian: name, locale, time zone, and the twelve categories with their Russian titles', async () => {
      assert.equal(first.created, true);
      const p = (await adminCall(t.app, 'GET', '/api/admin/projects')).body.items.find(
        (x: { site_key: string }) => x.site_key === SITE,
      );
      assert.equal(p.name, 'Педагогические курсы (демо)');
      assert.deepEqual([p.locale, p.timezone], ['ru', 'Europe/Moscow']);
      const cats = (await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/course-categories`)).body.categories;
      assert.equal(cats.length, 12);
      assert.deepEqual(
        cats.map((c: { id: string; list_id: number; slug: string }) => [c.id, c.list_id, c.slug]),
        DEMO_CATEGORIES.map(([id, list, slug]) => [id, list, slug]),
        "the document's ids, list ids and slugs",
      );
      assert.equal(cats[0].title, 'Педагог дошкольного образования');
      assert.equal(cats[9].title, 'Библиотекарь');
      for (const c of cats) assert.match(c.title, CYRILLIC, c.slug);
    });

    it('every routed event type and cart step has a Russian template that parses', async () => {
      const routes = (await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/routing`)).body.routes;
      assert.deepEqual(Object.keys(routes).sort(), [...ROUTED].sort());
      const byName = new Map((await templates()).map((x) => [x.name, x]));
      for (const [key, name] of Object.entries<string>(routes)) {
        const tpl = byName.get(name)!;
        assert.ok(tpl, `${key} -> ${name}`);
        assert.equal(checkTemplate(tpl), null, name);
        for (const part of ['subject', 'html', 'text'] as const) assert.match(tpl[part], CYRILLIC, `${name}.${part}`);
        assert.doesNotMatch(tpl.html + tpl.text, /Hello|Unsubscribe|Your account/, name);
      }
      const of = (key: string) => byName.get(routes[key])!;
      for (const step of ['1h', '1d', '3d'])
        for (const cart of ['course', 'portal'])
          assert.match(of(`${cart}_abandoned_cart_${step}`).html, /href="\{\{ pay_url \}\}"/);
      assert.match(of('course_paid').html, /href="\{\{ account_url \}\}"/);
      assert.match(of('course_track_number').text, /\{\{ track_number \}\}/);
      assert.match(of('course_document_ready').html, /href="\{\{ document_url \}\}"/);
      assert.match(of('publication_site_submitted').subject, /\{\{ publication_title \}\}/);
      assert.match(of('course_order_created').subject, /сформирована/);
    });

    it('the e-mails arrive in Russian through a real SMTP server: payment with the account link', async () => {
      const key = first.keys.find((k) => k.name.startsWith('site backend'))!.key!;
      const r = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'course_paid',
        email: 'anna@school.example',
        name: 'Анна Петрова',
        order_id: 'A-100',
        amount: 2500,
        currency: 'RUB',
        fields: {
          course_name: 'Финансовая грамотность',
          account_url: 'https://courses.example/account',
          paid_at: '2026-11-20T09:00:00+03:00',
        },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(await worker.runOnce(), 1);
      await smtp.waitForReceived(1);
      const mail = smtp.accepted.at(-1)!;
      assert.equal(mail.subject, 'Анна Петрова, оплата курса «Финансовая грамотность» прошла успешно');
      assert.equal(mail.from?.value[0].name, 'Педагогические курсы (демо)');
      // A noreply sender with a Reply-To where answers reach people (issue 24).
      assert.equal(mail.replyTo?.value[0].address, 'support@courses.example');
      assert.match(String(mail.html), /<p>Здравствуйте, Анна Петрова!<\/p>/);
      assert.match(
        String(mail.html),
        /<a href="https:\/\/courses.example\/account"[^>]*>Перейти в личный кабинет<\/a>/,
      );
      assert.ok(mail.text?.includes(`Сумма: 2${NBSP}500,00${NBSP}₽.`), mail.text);
      assert.ok(mail.text?.includes('Дата оплаты: 20 ноября 2026.'), mail.text);
      assert.ok(mail.text?.includes('С уважением, команда «Педагогические курсы (демо)»'), mail.text);
    });

    it('a cart reminder carries the payment link; a document on its way its tracking number', async () => {
      const key = first.keys.find((k) => k.name.startsWith('site backend'))!.key!;
      const order = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        email: 'ivan@school.example',
        name: 'Иван',
        order_id: 'A-200',
        cart_type: 'course',
        course_name: 'Методика преподавания',
        fields: { pay_url: 'https://courses.example/pay/A-200' },
      });
      assert.equal(order.status, 200, JSON.stringify(order.body));
      t.clock.advance(61 * 60_000);
      const track = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'course_track_number',
        email: 'ivan@school.example',
        name: 'Иван',
        fields: { course_name: 'Методика преподавания', track_number: '80091234567890' },
      });
      assert.equal(track.status, 200, JSON.stringify(track.body));
      const before = smtp.accepted.length;
      assert.equal(await worker.runOnce(), 2);
      await smtp.waitForReceived(before + 2);
      const got = smtp.accepted.slice(before);
      const cart = got.find((m) => m.subject?.includes('ждёт оплаты'))!;
      assert.equal(cart.subject, 'Иван, ваша заявка на курс «Методика преподавания» ждёт оплаты');
      assert.match(String(cart.html), /<a href="https:\/\/courses.example\/pay\/A-200"[^>]*>Оплатить заказ<\/a>/);
      assert.match(String(cart.text), /Отписаться от напоминаний: https:\/\/mail\.example\.test\//);
      const sent = got.find((m) => m.subject?.includes('отправлен'))!;
      assert.equal(sent.subject, 'Иван, документ по курсу «Методика преподавания» отправлен');
      assert.ok(sent.text?.includes('Трек-номер для отслеживания: 80091234567890.'), sent.text);
    });

    it('a second demo changes nothing the administrator changed or deleted, and says what it found', async () => {
      const routing = (await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/routing`)).body.routes;
      const { course_test_failed: _dropped, ...kept } = routing;
      const changedRoutes = { ...kept, course_paid: 'course_test_passed' };
      assert.equal(
        (await adminCall(t.app, 'PUT', `/api/admin/projects/${SITE}/routing`, { routes: changedRoutes })).status,
        200,
      );
      const cats = (await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/course-categories`)).body.categories;
      const changedCats = cats
        .slice(1)
        .map((c: { title: string }, i: number) => (i === 0 ? { ...c, title: 'Учителя начальных классов' } : c));
      assert.equal(
        (await adminCall(t.app, 'PUT', `/api/admin/projects/${SITE}/course-categories`, { categories: changedCats }))
          .status,
        200,
      );
      const edited = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: SITE,
        name: 'course_payment_success',
        subject: 'Оплата получена',
        html: '<p>Спасибо</p>',
        text: 'Спасибо',
      });
      assert.equal(edited.status, 200);
      await adminCall(t.app, 'PUT', `/api/admin/projects/${SITE}/paid-lists`, { lists: {} });
      await adminCall(t.app, 'PATCH', `/api/admin/projects/${SITE}`, { name: 'Мои курсы', timezone: 'Asia/Omsk' });
      const templatesBefore = await templates();

      const again = await loadDemo(t.deps, cliActor());
      assert.equal(again.created, false);
      assert.ok(
        again.keys.every((k) => k.key === null),
        'no key is created or shown again',
      );
      assert.equal(again.keys.length, 4);
      assert.deepEqual(
        (await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/routing`)).body.routes,
        changedRoutes,
      );
      assert.deepEqual(
        (await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/course-categories`)).body.categories,
        changedCats,
      );
      assert.deepEqual(await templates(), templatesBefore);
      assert.deepEqual((await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/paid-lists`)).body.lists, {});
      const p = (await adminCall(t.app, 'GET', '/api/admin/projects')).body.items.find(
        (x: { site_key: string }) => x.site_key === SITE,
      );
      assert.deepEqual([p.name, p.timezone], ['Мои курсы', 'Asia/Omsk']);

      // What it prints is what it found: the administrator's numbers, not the demo's.
      assert.deepEqual(again.found, {
        name: 'Мои курсы',
        locale: 'ru',
        timezone: 'Asia/Omsk',
        templates: 19,
        routes: 18,
        course_categories: 11,
        address_books: 14,
        paid_lists: {},
        cart_chains: 0,
      });
      const lines = describeDemo(again);
      assert.equal(lines[0], 'The example project "demo-courses" is already loaded; nothing changed.');
      assert.match(
        lines[1],
        /^Found: «Мои курсы», locale ru, time zone Asia\/Omsk; 19 templates, 18 routes, 11 course categories, 14 address books, paid-order books: none, 0 cart-chain sequences, 4 keys\.$/,
      );
      assert.ok(!lines.join('\n').includes('egw_live_'));
      const firstLines = describeDemo(first);
      assert.match(
        firstLines[0],
        /^Loaded the example project "demo-courses": «Педагогические курсы \(демо\)».*19 routes, 12 course categories/,
      );
      assert.equal(firstLines.filter((l) => l.includes('egw_live_')).length, 4);
    });
  });
}
