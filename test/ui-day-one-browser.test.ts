// SPEC §22 in a real browser (chromium, SQLite), without PUBLIC_URL: the dashboard and the Delivery tab
// say that nothing is tracked instead of showing ticked boxes; the Topics tab explains prior consent
// (38-ФЗ art. 18) and turns require_consent on for an advertising topic after a confirmation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { adminCall, createTestApp, setupProject, type TestApp } from './support/harness.js';
import { freePort } from './fixtures/delivery-support.js';
import { goTo, launchChromium, loginWithToken, openPage, CHROMIUM_MISSING } from './support/browser.js';

describe('day-one notices in a browser', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let site: string;
  const problems: string[] = [];

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp('sqlite', {});
    await t.app.listen({ port, host: '127.0.0.1' });
    ({ site } = await setupProject(t.app));
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems));
    await loginWithToken(page, base);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('without PUBLIC_URL, the dashboard and the Delivery tab say nothing is tracked', async () => {
    const m = await adminCall(t.app, 'GET', '/api/admin/ui/meta');
    assert.equal(m.body.tracking_active, false);
    await goTo(page, `${base}/ui/`);
    await page.locator('[data-notice=tracking-inactive]', { hasText: 'PUBLIC_URL' }).waitFor();
    await goTo(page, `${base}/ui/projects/${site}?tab=delivery`);
    await page.locator('form.tracking-settings [data-notice=tracking-inactive]').waitFor();
    assert.equal(await page.locator('input[name=track_transactional_opens]').isChecked(), false);
    assert.deepEqual(problems, []);
  });

  it('the Topics tab explains prior consent and turns it on for an advertising topic after a confirmation', async () => {
    await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/topics`, {
      topics: [{ key: 'webinars', title: 'Webinars', advertising: true, require_consent: false }],
    });
    await goTo(page, `${base}/ui/projects/${site}?tab=topics`);
    assert.match(await page.locator('.topics-law').innerText(), /38-FZ/);
    // newsletters requires consent in a new project: only the advertising topics without it are offered it.
    assert.deepEqual(
      await page.locator('.consent-offer').evaluateAll((els) => els.map((e) => e.getAttribute('data-topic'))),
      ['webinars', 'cart_reminders'],
    );
    await page.locator('.consent-offer[data-topic=webinars] button').click();
    await page.locator('dialog.confirm button[value=yes]').click();
    await page.locator('.toast', { hasText: 'Topics saved' }).waitFor();
    const topics = (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/topics`)).body.topics;
    assert.equal(topics.find((x: any) => x.key === 'webinars').require_consent, true);
    assert.equal(topics.find((x: any) => x.key === 'newsletters').require_consent, true);
    assert.deepEqual(problems, []);
  });
});
