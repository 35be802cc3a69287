// Opens, clicks and cart steps in a real browser (chromium through playwright-core, SQLite): the
// dashboard's cart-step table, an e-mail's engagement with machine hits marked apart (and its preview,
// which must not count as an open), and a template's rates. Screenshots only with UPDATE_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { createTrackingWorker, type TrackingWorker } from '../src/workers/tracking.js';
import { adminCall, createTestApp, keyCall, setupProject, type TestApp } from './support/harness.js';
import { freePort, until } from './fixtures/delivery-support.js';
import { launchChromium, loginWithToken, openPage, saveScreenshot, CHROMIUM_MISSING } from './support/browser.js';
import { linksOf, TRACK_SECRET } from './support/tracking.js';

const BROWSER_UA =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';

describe('opens, clicks and cart steps in a browser', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let site: string;
  let key: string;
  let worker: Worker;
  let tracker: TrackingWorker;
  let emailId: number;
  const problems: string[] = [];

  const hit = async (url: string, ua = BROWSER_UA, method = 'GET') => {
    const r = await fetch(url, { method, headers: { 'user-agent': ua }, redirect: 'manual' });
    await r.arrayBuffer();
    return r.status;
  };
  const detail = async (id: number) => (await adminCall(t.app, 'GET', `/api/admin/emails/${id}`)).body;

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp('sqlite', { PUBLIC_URL: base, TRACKING_FLUSH_MS: '5' }, { secret: TRACK_SECRET });
    await t.app.listen({ port, host: '127.0.0.1' });
    ({ site, key } = await setupProject(t.app));
    // Its e-mails are transactional: a new project tracks no opens in those unless asked (SPEC §22).
    await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, { tracking: { transactional_opens: true } });
    for (const [name, link] of [
      ['cart_1h', 'https://school.example/pay/{{ order_id }}'],
      ['cart_1d', 'https://school.example/pay/{{ order_id }}?step=1d'],
    ])
      await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name,
        subject: 'Ваш заказ ждёт оплаты',
        html: `<p>{{ name }}, курс «{{ course_name }}» ждёт вас.</p><p><a href="${link}">Оплатить</a> · <a href="https://school.example/courses">Все курсы</a></p>`,
        text: '',
      });
    worker = createWorker({
      db: t.deps.db,
      transport: createCaptureTransport(),
      clock: t.clock,
      publicUrl: base,
      secret: TRACK_SECRET,
      tracking: true,
    });
    tracker = createTrackingWorker({ db: t.deps.db, clock: t.clock });

    // Five orders; the 1-hour reminders go; three people click, two of them pay, one of those after the next day's reminder.
    for (let i = 1; i <= 5; i++) {
      const r = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: `buyer${i}@example.com`,
        name: `Покупатель ${i}`,
        order_id: `K-${i}`,
        course_name: 'Инклюзивное образование',
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    t.clock.advance(61 * 60_000);
    await worker.runOnce();
    const sent = await t.deps.db.db
      .selectFrom('scheduled_emails')
      .select(['id', 'order_id', 'rendered'])
      .where('status', '=', 'sent')
      .orderBy('id')
      .execute();
    assert.equal(sent.length, 5);
    t.clock.advance(5 * 60_000);
    for (const [i, e] of sent.entries()) {
      const { hrefs, images } = linksOf(JSON.parse(e.rendered!).html);
      await hit(images[0], 'Mozilla/5.0'); // Apple's privacy proxy, on delivery
      if (i < 4) await hit(images[0]);
      if (i < 3) await hit(hrefs[0]);
      await hit(hrefs[1], 'Mozilla/5.0 (compatible; Barracuda Sentinel)');
      if (i === 0) {
        await hit(hrefs[1], BROWSER_UA, 'HEAD');
        await hit(hrefs[1]);
        emailId = e.id;
      }
    }
    for (const [i, amount] of [
      [1, 4900],
      [2, 2500],
    ] as const) {
      const p = await keyCall(t.app, key, 'POST', '/api/scoped/events/purchase', {
        cart_type: 'course',
        email: `buyer${i}@example.com`,
        order_id: `K-${i}`,
        amount,
        currency: 'RUB',
      });
      assert.equal(p.body.attributed_to?.step, '1h', JSON.stringify(p.body));
    }
    await until(async () => {
      await tracker.runOnce();
      return (await detail(emailId)).engagement.clicks === 2;
    });
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems, { consoleErrors: true }));
    await loginWithToken(page, base);
  });
  after(async () => {
    await browser?.close();
    await worker?.stop();
    await t?.close();
  });

  it('the dashboard shows each cart step: sent, opened, clicked, paid after a click and the money', async () => {
    await page.goto(`${base}/ui/`);
    const section = page.locator('section.cart-steps');
    await section.waitFor();
    const row = section.locator('tbody tr:has([data-code="1h"])');
    const cells = await row.locator('td').allTextContents();
    assert.equal(cells[0], 'Course', 'the cart type by its name (its code in the tooltip)');
    assert.equal(cells[2], '5');
    assert.match(cells[4], /^4\s/, 'four opened by people (the Apple proxy is not one)');
    assert.match(cells[5], /^3\s/, 'three clicked');
    assert.equal(cells[6], '2');
    assert.match(cells[7].replace(/\s/g, ' '), /7,400\.00/);
    await section.scrollIntoViewIfNeeded();
    await saveScreenshot(page, 'dashboard-cart-steps', true);
    assert.deepEqual(problems, []);
  });

  it("an e-mail's page shows opens and clicks with their time, machines marked apart; its preview counts no open", async () => {
    const before = (await detail(emailId)).engagement;
    await page.goto(`${base}/ui/emails/${emailId}`);
    const box = page.locator('.engagement');
    await box.waitFor();
    const text = await box.innerText();
    assert.match(text, /Opens by people\s+1/);
    assert.match(text, /Clicks by people\s+2/);
    assert.match(text, /Machines \(not counted\)\s+1 opens, 2 clicks/);
    assert.ok(
      text.includes('machine: scanner or proxy') && text.includes('machine: HEAD request') && text.includes('person'),
    );
    assert.ok(text.includes('Apple Mail privacy proxy'));
    assert.equal(await box.locator('tr.machine-hit').count(), 3);
    // The preview shows the e-mail as sent (its links are the tracked ones), without the pixel.
    const frame = page.frameLocator('iframe.preview-frame');
    await frame.locator('a', { hasText: 'Оплатить' }).waitFor();
    assert.match(String(await frame.locator('a', { hasText: 'Оплатить' }).getAttribute('href')), /\/c\/c1\./);
    assert.equal(await frame.locator('img').count(), 0);
    await saveScreenshot(page, 'email-engagement', true);
    // The administrator's preview loaded no pixel: the counts are what they were.
    await new Promise((r) => setTimeout(r, 200));
    await tracker.runOnce();
    const after = (await detail(emailId)).engagement;
    assert.equal(after.opens + after.machine_opens, before.opens + before.machine_opens);
    assert.deepEqual(problems, []);
  });

  it("a template's page shows its rates", async () => {
    await page.goto(`${base}/ui/projects/${site}/templates/cart_1h`);
    const rates = page.locator('.template-rates');
    await rates.locator('h2', { hasText: 'Last 30 days' }).waitFor();
    const text = await rates.innerText();
    assert.match(text, /Sent\s+5/);
    assert.match(text, /Opened\s+4/);
    assert.match(text, /Clicked\s+3/);
    assert.deepEqual(problems, []);
  });

  it("the delivery tab sets the project's tracking: switches and UTM parameters, saved and shown again", async () => {
    await page.goto(`${base}/ui/projects/${site}?tab=delivery`);
    const form = page.locator('form.tracking-settings');
    await form.waitFor();
    assert.equal(await form.locator('.notice').count(), 0, 'PUBLIC_URL is set: no warning');
    await form.locator('input[name=track_opens]').uncheck();
    await form.locator('input[name=utm_source]').fill('newsletter');
    await form.locator('input[name=utm_campaign]').fill('{{ template_key }}');
    await form.locator('button[type=submit]').click();
    await page.locator('.toast', { hasText: 'Tracking settings saved' }).waitFor();
    const stored = (await adminCall(t.app, 'GET', '/api/admin/projects')).body.items.find(
      (x: any) => x.site_key === site,
    );
    assert.deepEqual(stored.tracking, { opens: false, clicks: true, transactional_opens: true });
    assert.deepEqual(stored.utm, { source: 'newsletter', campaign: '{{ template_key }}' });
    await page.reload();
    await form.waitFor();
    assert.equal(await form.locator('input[name=track_opens]').isChecked(), false);
    assert.equal(await form.locator('input[name=utm_source]').inputValue(), 'newsletter');
    // Emptied fields clear the parameters; the switch goes back on.
    await form.locator('input[name=track_opens]').check();
    await form.locator('input[name=utm_source]').fill('');
    await form.locator('input[name=utm_campaign]').fill('');
    await form.locator('button[type=submit]').click();
    await until(async () => {
      const p = (await adminCall(t.app, 'GET', '/api/admin/projects')).body.items.find((x: any) => x.site_key === site);
      return p.utm === null && p.tracking.opens === true;
    });
    assert.deepEqual(problems, []);
  });

  it('the same in Russian', async () => {
    const { page: ru, context } = await openPage(browser, problems, { locale: 'ru-RU', consoleErrors: true });
    try {
      await loginWithToken(ru, base).catch(async () => {
        await ru.locator('main h1').waitFor();
      });
      await ru.goto(`${base}/ui/emails/${emailId}`);
      const box = ru.locator('.engagement');
      await box.waitFor();
      assert.match(await box.innerText(), /Открытий людьми\s+1/);
      await ru.goto(`${base}/ui/`);
      await ru.locator('section.cart-steps h2', { hasText: 'Письма о корзине по шагам' }).waitFor();
    } finally {
      await context.close();
    }
    assert.deepEqual(problems, []);
  });
});
