// The admin UI's first week (issue 37) in a Russian Chromium: what the event page, the dashboard, the
// contact page and the project pages show an administrator, and that they update after an action
// without a reload. The API half is test/ui-first-week.test.ts. `UPDATE_SCREENSHOTS=1` writes
// docs/screenshots/ru-week-*.png.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import {
  ADMIN_TOKEN,
  adminCall,
  createTestApp,
  keyCall,
  newKey,
  REPLAY_RIGHTS,
  replayableContest as contest,
  setupProject,
  type TestApp,
} from './support/harness.js';
import { CHROMIUM_MISSING, goTo, launchChromium, openPage, saveScreenshot, settled } from './support/browser.js';

const T = '/api/scoped/send/transactional';

describe('admin UI first week in Russian', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let site: string;
  let key: string;
  const problems: string[] = [];
  const lastEvent = async (order: string) =>
    (await adminCall(t.app, 'GET', `/api/admin/external-events?site_key=${site}&order_id=${order}`)).body.items[0];
  /** The text the page shows, spaces collapsed. */
  const shownText = async () => (await page.locator('main').innerText()).replace(/\s+/g, ' ');
  /** Sets the viewport, then reloads the current page so it is drawn at that width. */
  async function atWidth(width: number) {
    await page.setViewportSize({ width, height: 860 });
  }

  before(async () => {
    t = await createTestApp('sqlite');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    ({ site, key } = await setupProject(t.app));
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems, { locale: 'ru-RU', consoleErrors: true }));
    page.setDefaultTimeout(30_000);
    await page.goto(`${base}/ui/login?via=token`);
    await page.locator('input[name=token]').fill(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.locator('main h1').waitFor();
    await settled(page);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('1. a refused event names the missing and invalid members in Russian and offers no useless replay', async () => {
    const { email: _drop, ...body } = contest('B-1');
    assert.equal((await keyCall(t.app, key, 'POST', T, body)).status, 422);
    const missing = await lastEvent('B-1');
    await goTo(page, `${base}/ui/events/${missing.id}`);
    const list = page.locator('.refusal-missing');
    await list.waitFor();
    assert.match(await list.innerText(), /Не хватает поля\s+email/);
    const text = await shownText();
    assert.ok(!text.includes('обязательных полей не хватало'), 'the generic sentence gives way to the names');
    assert.equal(await page.locator('button', { hasText: 'Повторить' }).count(), 0, 'no replay for a request at fault');
    await page.locator('.refusal-no-replay').waitFor();
    await atWidth(1366);
    await saveScreenshot(page, 'ru-week-event-refused-1366');
    await atWidth(390);
    await saveScreenshot(page, 'ru-week-event-refused-390');
    await atWidth(1366);

    assert.equal((await keyCall(t.app, key, 'POST', T, { ...contest('B-2'), email: 'не-адрес' })).status, 422);
    await goTo(page, `${base}/ui/events/${(await lastEvent('B-2')).id}`);
    const invalid = page.locator('.refusal-invalid li');
    await invalid.first().waitFor();
    assert.equal((await invalid.first().innerText()).replace(/\s+/g, ' '), 'email — не адрес электронной почты');

    // A refusal of the key's rights: fixable, so «Повторить» is there.
    const narrow = await newKey(t.app, site, { ...REPLAY_RIGHTS, allowed_api_events: ['olympiad_results'] });
    assert.equal((await keyCall(t.app, narrow.key, 'POST', T, contest('B-3'))).status, 403);
    await goTo(page, `${base}/ui/events/${(await lastEvent('B-3')).id}`);
    await page.locator('button', { hasText: 'Повторить' }).waitFor();
    assert.deepEqual(problems, []);
  });

  it('2. the dashboard: delivered agrees between the card and the cart steps, opens and clicks beside sent, names not codes', async () => {
    const oc = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
      cart_type: 'course',
      email: 'cart@example.com',
      order_id: 'B-D1',
      course_name: 'Педагогика',
    });
    assert.equal(oc.status, 200, JSON.stringify(oc.body));
    const db = t.deps.db.db;
    const cart = await db
      .selectFrom('scheduled_emails')
      .select('id')
      .where('order_id', '=', 'B-D1')
      .orderBy('id')
      .execute();
    const now = t.clock.now();
    await db
      .updateTable('scheduled_emails')
      .set({ status: 'sent', sent_at: now })
      .where('id', '=', cart[0].id)
      .execute();
    await db
      .updateTable('scheduled_emails')
      .set({ status: 'delivered', sent_at: now })
      .where('id', '=', cart[1].id)
      .execute();

    await page.setViewportSize({ width: 1366, height: 860 });
    await goTo(page, `${base}/ui/?site_key=${site}`);
    const delivered = page.locator('[data-figure="delivered"]');
    await delivered.waitFor();
    assert.match(await delivered.innerText(), /^2\b/);
    await page.locator('[data-figure="opened"]').waitFor();
    await page.locator('[data-figure="clicked"]').waitFor();
    const title = await page.locator('.cards .defined', { hasText: 'Доставлено' }).getAttribute('title');
    assert.match(title ?? '', /не вернулись/, 'the definition is in the tooltip');
    const steps = page.locator('.cart-steps table');
    await steps.waitFor();
    const head = await steps.locator('thead').innerText();
    assert.ok(head.includes('Оплачено после напоминаний'), head);
    assert.ok(!head.includes('Возвращено'), head);
    const firstRow = (await steps.locator('tbody tr').first().innerText()).replace(/\s+/g, ' ');
    assert.match(firstRow, /^Курс через 1 час 1 1 /, firstRow);
    const text = await shownText();
    for (const c of ['course_abandoned', 'course_order_created', 'contest_results', ' step1'])
      assert.ok(!text.includes(c), `no code ${c} on the dashboard`);
    await saveScreenshot(page, 'ru-week-dashboard-1366');
    await atWidth(390);
    await goTo(page, `${base}/ui/?site_key=${site}`);
    await delivered.waitFor();
    await saveScreenshot(page, 'ru-week-dashboard-390');
    await atWidth(1366);
    assert.deepEqual(problems, []);
  });

  it('3. no English or raw data: a purchase with warnings, a cancelled reminder, webhook kinds, the connection check', async () => {
    const order = { cart_type: 'course', email: 'buyer@example.com', order_id: 'B-P1', course_name: 'Педагогика' };
    assert.equal((await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', order)).status, 200);
    const paid = await keyCall(t.app, key, 'POST', '/api/scoped/events/purchase', {
      ...order,
      cart_type: 'diploma',
      amount: 'две тысячи',
    });
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    assert.ok(paid.body.warnings.length >= 2, JSON.stringify(paid.body.warnings));
    await goTo(page, `${base}/ui/events/${paid.body.event_id}`);
    const warnings = page.locator('ul.warnings li');
    await warnings.first().waitFor();
    const text = await shownText();
    for (const english of ['no address book', 'was recorded', 'in_flight_email_ids', 'attributed_to', 'null', '[]'])
      assert.ok(!text.includes(english), `no "${english}" on the event page: ${text}`);
    assert.ok(text.includes('не выбрана адресная книга оплаченных заказов'), text);

    // The order's cart e-mails that the purchase stopped: the reason in words, not «order paid».
    const purchase = await keyCall(t.app, key, 'POST', '/api/scoped/events/purchase', order);
    assert.equal(purchase.status, 200, JSON.stringify(purchase.body));
    const cancelled = (
      await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}&order_id=B-P1&status=cancelled`)
    ).body.items;
    assert.ok(cancelled.length > 0);
    await goTo(page, `${base}/ui/emails/${cancelled[0].id}`);
    await page.locator('[data-reason="cancelled_by_purchase"]').waitFor();
    assert.ok(!(await shownText()).includes('order paid'));
    await goTo(page, `${base}/ui/emails?site_key=${site}&order_id=B-P1`);
    await page.locator('[data-reason="cancelled_by_purchase"]').first().waitFor();
    assert.ok(!(await shownText()).includes('order paid'));

    // Webhook kinds by name, the identifier beside it.
    await goTo(page, `${base}/ui/projects/${site}?tab=webhooks`);
    const kinds = page.locator('fieldset label.check', { hasText: 'email.sent' });
    await kinds.waitFor();
    assert.match(await kinds.innerText(), /письмо отправлено/);
    assert.deepEqual(problems, []);
  });

  it('6. contacts: search by name, ё or е; a status option says its help once', async () => {
    const oc = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
      cart_type: 'course',
      email: 'alena@example.com',
      name: 'Алёна Петрова',
      order_id: 'B-C1',
      course_name: 'Педагогика',
    });
    assert.equal(oc.status, 200, JSON.stringify(oc.body));
    await goTo(page, `${base}/ui/contacts?email=${encodeURIComponent('алена')}`);
    const link = page.locator('main table a', { hasText: 'alena@example.com' });
    await link.waitFor();
    await link.click();
    await page.locator('main h1', { hasText: 'alena@example.com' }).waitFor();
    await settled(page);
    const options = await page.locator('main select option').allInnerTexts();
    for (const o of options) assert.ok(!/адрес не существует: адрес не существует/.test(o), o);
    await saveScreenshot(page, 'ru-week-contact-1366');
    await atWidth(390);
    await saveScreenshot(page, 'ru-week-contact-390');
    await atWidth(1366);
    assert.deepEqual(problems, []);
  });

  it('4. pages update after an action: the checklist ticks the key, a new key has no stale warning, a webhook error goes', async () => {
    const fresh = await adminCall(t.app, 'POST', '/api/sites', {
      site_key: 'week4',
      name: 'Курсы «Развитие»',
      from_email: 'noreply@week4.example',
    });
    assert.ok(fresh.status < 300, JSON.stringify(fresh.body));
    await goTo(page, `${base}/ui/projects/week4?tab=keys`);
    const keyStep = page.locator('section.checklist li[data-step=key]');
    await keyStep.waitFor();
    assert.notEqual(await keyStep.getAttribute('class'), 'done', 'no key yet');
    await page.locator('.tab-body form input[name=name]').fill('Сайт');
    await page.locator('input[name=permissions][value=transactional_send]').check();
    await page.locator('input[name=allowed_api_events][value=contest_results]').check();
    await page.getByRole('button', { name: 'Создать ключ' }).click();
    await page.locator('.new-key code.secret').waitFor();
    // Ticked without a reload, and no empty form under the new key saying it can send nothing.
    await page.locator('section.checklist li[data-step=key].done').waitFor();
    assert.equal(await page.locator('.empty-events:visible').count(), 0);
    const another = page.getByRole('button', { name: 'Создать ещё один ключ' });
    await another.waitFor();
    await saveScreenshot(page, 'ru-week-key-created-1366');
    await another.click();
    await page.locator('.tab-body form input[name=name]').waitFor();

    // A webhook refused (a private address), then accepted once development addresses are allowed:
    // the old error does not stay beside the new secret.
    await goTo(page, `${base}/ui/projects/week4?tab=webhooks`);
    const form = page.locator('form', { has: page.locator('input[name=url]') });
    await form.locator('input[name=url]').fill('http://127.0.0.1:9/hook');
    await form.getByRole('button', { name: 'Добавить адрес' }).click();
    await form.locator('.error').first().waitFor();
    await page.getByLabel(/Разрешить адреса для разработки/).check();
    await page.locator('.toast').first().waitFor();
    await form.getByRole('button', { name: 'Добавить адрес' }).click();
    await page.locator('.new-key', { hasText: 'Адрес добавлен' }).waitFor();
    assert.equal(await form.locator('.error').count(), 0, 'the old error is gone');
    assert.equal(await form.locator('[aria-invalid="true"]').count(), 0);
    assert.deepEqual(problems, []);
  });

  it('6b. contacts: the export as tables in Russian; after an erasure the topics read «удалён»', async () => {
    const c = (await adminCall(t.app, 'GET', `/api/admin/contacts?site_key=${site}&email=alena`)).body.items[0];
    await goTo(page, `${base}/ui/contacts/${c.id}`);
    await page.getByRole('button', { name: 'Показать все данные' }).click();
    const doc = page.locator('.contact-export');
    await doc.locator('h3', { hasText: 'Подписки' }).waitFor();
    const text = (await doc.innerText()).replace(/\s+/g, ' ');
    for (const english of ['subscriptions', 'created_at', 'order_id', '"email"', 'true', 'false', 'unpaid'])
      assert.ok(!text.includes(english), `no "${english}" in the export: ${text}`);
    assert.ok(text.includes('Номер заказа'), text);
    await saveScreenshot(page, 'ru-week-contact-export-1366');

    await page.getByRole('button', { name: 'Удалить человека' }).click();
    await page.locator('dialog').getByRole('button', { name: 'Удалить человека' }).click();
    await page.locator('.badge', { hasText: 'удалён' }).first().waitFor();
    const shown = await page.locator('main').innerText();
    assert.ok(!shown.includes('подписан'), 'no topic reads «подписан» after the erasure');
    await saveScreenshot(page, 'ru-week-contact-erased-1366');
    assert.deepEqual(problems, []);
  });

  it('7. the time zone is chosen from a list; a Cyrillic site key is explained', async () => {
    await goTo(page, `${base}/ui/projects`);
    const tz = page.locator('main form select[name=timezone]').first();
    await tz.waitFor();
    assert.equal(await tz.inputValue(), 'Europe/Moscow');
    const siteKey = page.locator('main form input[name=site_key]');
    await siteKey.fill('курсы');
    const message = await siteKey.evaluate((el) => (el as HTMLInputElement).validationMessage);
    assert.match(message, /русскими буквами/);
    assert.deepEqual(problems, []);
  });
});
