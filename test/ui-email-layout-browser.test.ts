// SPEC §22 / issue 39: the default layout as a person sees it. A cart reminder (open pixel and all) and
// a transactional e-mail, in Russian and in English, are sent through the worker to a real SMTP server;
// the HTML received is shown in Chromium at 390 px (a phone) and 800 px: nothing wider than the screen,
// the button and, on the reminder only, the unsubscribe and preference links on screen. With
// UPDATE_SCREENSHOTS=1 each is saved as docs/screenshots/email-<kind>-<locale>-<width>.png.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { templateGallery } from '../src/services/demoTemplates.js';
import { adminCall, createTestApp, keyCall, setupProject, type TestApp } from './support/harness.js';
import { startAppWorker, startSmtp, type TestSmtp } from './fixtures/delivery-support.js';
import { CHROMIUM_MISSING, launchChromium, openPage, saveScreenshot } from './support/browser.js';

const PUBLIC_URL = 'https://pochta.uralkursy.test';
const WIDTHS = [390, 800] as const;

const gallery = (key: string) => templateGallery().find((g) => g.routing_key === key)!;

// English texts in the gallery's form (paragraphs, a button), for the English project.
const button = (url: string, label: string) =>
  `<table role="presentation" cellpadding="0" cellspacing="0" border="0" style="margin:16px 0"><tr><td bgcolor="#1a4d8f" style="background-color:#1a4d8f;border-radius:4px"><a href="{{ ${url} }}" style="display:inline-block;padding:12px 24px;font-family:Arial,Helvetica,sans-serif;font-size:16px;line-height:20px;font-weight:bold;color:#ffffff;text-decoration:none;border-radius:4px">${label}</a></td></tr></table>\n`;
const EN = {
  cart: {
    subject: '{{ name }}, your order is waiting for payment',
    html:
      '<p>Hello, {{ name }}!</p>\n<p>You applied for {{ course_name }} (order {{ order_id }}) but have not paid yet. It takes a couple of minutes.</p>\n<p>If you have already paid, please ignore this e-mail.</p>\n' +
      button('pay_url', 'Pay for the order'),
    text: 'Hello, {{ name }}!\n\nYou applied for {{ course_name }} (order {{ order_id }}) but have not paid yet.\n\nPay: {{ pay_url }}\n',
  },
  contest: {
    subject: '{{ name }}, the results of “{{ event_title }}” are in',
    html:
      '<p>Hello, {{ name }}!</p>\n<p>The results of the contest “{{ event_title }}” are in: your work “{{ work_title }}” took place {{ place }}. Congratulations!</p>\n' +
      button('document_url', 'Download the diploma'),
    text: 'Hello, {{ name }}!\n\nThe results of “{{ event_title }}” are in: your work “{{ work_title }}” took place {{ place }}.\n',
  },
};

describe('e-mails in the default layout in a browser', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let smtp: TestSmtp;
  let worker: ReturnType<typeof startAppWorker>['worker'];
  let stopWorker: (() => Promise<void>) | undefined;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  /** locale → kind → the HTML received. */
  const received: Record<string, Record<'cart' | 'transactional', string>> = {};

  before(async () => {
    smtp = await startSmtp();
    t = await createTestApp('sqlite', { SEND_WAIT_MS: '5000', PUBLIC_URL });
    ({ worker, stop: stopWorker } = startAppWorker(t, smtp.url, {
      publicUrl: PUBLIC_URL,
      secret: 'email-layout-secret-0123456789abcdef',
      tracking: true,
    }));

    for (const locale of ['ru', 'en'] as const) {
      const { site, key } = await setupProject(t.app, { site: `${locale}1`, defaultLayout: true });
      const patch = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, {
        name: locale === 'ru' ? 'Педагогические курсы «Урал»' : 'Ural Teacher Courses',
        postal_address: locale === 'ru' ? '620000, Екатеринбург, ул. Ленина, 1' : '1 Lenin St, Yekaterinburg 620000',
        locale,
      });
      assert.equal(patch.status, 200, JSON.stringify(patch.body));
      if (locale === 'en') {
        // The project was made in Russian: its default layout is replaced by the English one, as the
        // Layouts tab's offer saves it.
        const d = (await adminCall(t.app, 'GET', '/api/admin/ui/default-layout?locale=en')).body;
        const put = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/layouts/${d.name}`, {
          html: d.html,
          text: d.text,
          confirm: true,
        });
        assert.ok(put.status < 300, JSON.stringify(put.body));
      }
      const cart =
        locale === 'ru' ? gallery('course_abandoned_cart_1h') : { ...gallery('course_abandoned_cart_1h'), ...EN.cart };
      const contest = locale === 'ru' ? gallery('contest_results') : { ...gallery('contest_results'), ...EN.contest };
      for (const [name, g] of [
        ['cart_1h', cart],
        ['contest_tpl', contest],
      ] as const) {
        const saved = await adminCall(t.app, 'POST', '/api/templates', {
          site_key: site,
          name,
          subject: g.subject,
          html: g.html,
          text: g.text,
          confirm: true,
        });
        assert.ok(saved.status < 300, JSON.stringify(saved.body));
      }
      const tr = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
        email: `boris-${locale}@example.com`,
        name: locale === 'ru' ? 'Борис Иванов' : 'Boris Ivanov',
        fields: {
          event_title: locale === 'ru' ? 'Педагогический дебют' : 'Teaching Debut',
          work_title: locale === 'ru' ? 'Урок-исследование' : 'A research lesson',
          place: 2,
          document_url: 'https://site1.example/diploma/7',
          account_url: 'https://site1.example/account',
        },
      });
      assert.equal(tr.status, 200, JSON.stringify(tr.body));
      assert.equal(await worker.waitForOutcome(tr.body.plan[0].scheduled_email_id, 20_000), 'sent');
      const oc = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: `anna-${locale}@example.com`,
        name: locale === 'ru' ? 'Анна Петрова' : 'Anna Petrova',
        order_id: `${locale.toUpperCase()}-1`,
        course_name: locale === 'ru' ? 'Инклюзивное образование' : 'Inclusive education',
        pay_url: 'https://site1.example/pay/1',
      });
      assert.equal(oc.status, 200, JSON.stringify(oc.body));
      t.clock.advance(61 * 60_000);
      worker.wake();
      assert.equal(await worker.waitForOutcome(oc.body.scheduled_email_ids[0], 20_000), 'sent');
      const html = (to: string) =>
        String(smtp.received.find((m) => m.to && 'text' in m.to && m.to.text.includes(to))?.html);
      received[locale] = {
        cart: html(`anna-${locale}@example.com`),
        transactional: html(`boris-${locale}@example.com`),
      };
    }
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems));
    // The e-mail's images (the open pixel) and links go nowhere from the test.
    await page.route('**/*', (r) => r.abort());
  });
  after(async () => {
    await browser?.close();
    await stopWorker?.();
    await t?.close();
    await smtp?.close();
  });

  for (const locale of ['ru', 'en'] as const)
    for (const kind of ['cart', 'transactional'] as const)
      it(`${kind} e-mail in ${locale} fits 390 and 800 px, button and footer on screen`, async () => {
        const html = received[locale][kind];
        assert.match(html, new RegExp(`<html lang="${locale}"`));
        assert.equal(/\/o\/[^"]+\.gif/.test(html), kind === 'cart', 'the open pixel only in the reminder');
        for (const width of WIDTHS) {
          await page.setViewportSize({ width, height: 900 });
          await page.setContent(html, { waitUntil: 'domcontentloaded' });
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          assert.ok(overflow <= 0, `${width} px: ${overflow} px wider than the screen`);
          const onScreen = async (selector: string) => {
            if ((await page.locator(selector).count()) === 0) return false;
            const box = await page.locator(selector).first().boundingBox();
            return box !== null && box.x >= 0 && box.x + box.width <= width && box.height > 0;
          };
          assert.ok(await onScreen('td[bgcolor] > a'), `${width} px: the button`);
          const footer = kind === 'cart';
          assert.equal(await onScreen(`a[href^="${PUBLIC_URL}/u/"]`), footer, `${width} px: unsubscribe`);
          assert.equal(await onScreen(`a[href^="${PUBLIC_URL}/p/"]`), footer, `${width} px: preferences`);
          await saveScreenshot(page, `email-${kind}-${locale}-${width}`);
        }
        assert.deepEqual(problems, []);
      });
});
