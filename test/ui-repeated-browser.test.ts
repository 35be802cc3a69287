// A repeated call in a real browser, in Russian (issue 28): the event page says it is a repeat of an
// earlier call, links to it, shows what that call did (its e-mail), offers no replay, and the events
// filter tells repeats from rejections. Screenshot only with UPDATE_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { ADMIN_TOKEN, createTestApp, keyCall, setupProject, type TestApp } from './support/harness.js';
import { CHROMIUM_MISSING, goTo, launchChromium, openPage, saveScreenshot } from './support/browser.js';

describe('a repeated call in a browser', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let firstId: number;
  let repeatId: number;
  const problems: string[] = [];

  before(async () => {
    t = await createTestApp('sqlite');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const { key } = await setupProject(t.app);
    const send = (paidAt: string) =>
      keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
        email: 'anna@example.com',
        name: 'Анна',
        idempotency_key: '1001:contest_results',
        fields: { event_title: 'Весна', work_title: 'Работа', place: '1', paid_at: paidAt },
      });
    const first = await send('2026-11-25 10:00:00');
    assert.equal(first.status, 200);
    firstId = first.body.event_id;
    const again = await send('2026-11-25 10:00:05');
    assert.equal(again.status, 422);
    repeatId = Number(
      (
        await t.deps.db.db
          .selectFrom('events')
          .select('id')
          .where('error_code', '=', 'idempotency_key_reused')
          .executeTakeFirstOrThrow()
      ).id,
    );
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems, { locale: 'ru-RU', consoleErrors: true }));
    await page.goto(`${base}/ui/login?via=token`);
    await page.locator('input[name=token]').fill(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.locator('main h1', { hasText: 'Сводка' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('the event page names the call it repeats and what that call did, and offers no replay', async () => {
    await goTo(page, `${base}/ui/events/${repeatId}`);
    await page.getByRole('heading', { name: 'Повторный вызов, а не ошибка' }).waitFor();
    await page.getByRole('link', { name: `события №${firstId}` }).waitFor();
    await page.getByText('Первый вызов:').waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Почему отклонено' }).count(), 0, 'not shown as rejected');
    assert.equal(await page.getByRole('button', { name: 'Повторить' }).count(), 0, 'no replay offered');
    // The first call's e-mail is listed in the repeat's box.
    assert.ok((await page.locator('.notice table tbody tr').count()) >= 1);
    await saveScreenshot(page, 'ru-event-repeated');
    await page.getByRole('link', { name: `события №${firstId}` }).click();
    await page.getByRole('heading', { name: new RegExp(`Событие №${firstId}`) }).waitFor();
  });

  it('the events filter has repeated calls apart from rejections', async () => {
    await goTo(page, `${base}/ui/events?status=repeated`);
    await page.locator('main table tbody tr').first().waitFor();
    assert.equal(await page.locator('main table tbody tr').count(), 1);
    await page.locator('main table .badge', { hasText: 'повтор' }).waitFor();
    await goTo(page, `${base}/ui/events?status=rejected`);
    await page.getByText('Нет событий по этим фильтрам.').waitFor();
    assert.deepEqual(problems, []);
  });
});
