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
});
