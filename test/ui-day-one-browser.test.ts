// SPEC §22 in a real browser (chromium, SQLite), without PUBLIC_URL: the dashboard and the Delivery tab
// say that nothing is tracked instead of showing ticked boxes; the Topics tab explains prior consent
// (38-ФЗ art. 18) and offers require_consent for newsletters (not cart reminders) to a project made
// before; the Layouts tab offers such a project the default layout, saying what changes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { ADMIN_TOKEN, adminCall, createTestApp, setupProject, type TestApp } from './support/harness.js';
import { freePort } from './fixtures/delivery-support.js';
import { goTo, launchChromium, loginWithToken, openPage, saveScreenshot, CHROMIUM_MISSING } from './support/browser.js';

describe('day-one notices in a browser', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  /** The same administrator in Russian: the offers as a Russian school sees them, for the screenshots. */
  let ruPage: Page;
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
    ({ page: ruPage } = await openPage(browser, problems, { locale: 'ru-RU' }));
    await ruPage.goto(`${base}/ui/login?via=token`);
    await ruPage.locator('input[name=token]').fill(ADMIN_TOKEN);
    await ruPage.keyboard.press('Enter');
    await ruPage.locator('main h1').waitFor();
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

  it('the Topics tab explains prior consent and offers the switch for newsletters only, after a confirmation', async () => {
    // A project made before issue 39: newsletters without consent, and an advertising topic of its own.
    const before = (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/topics`)).body.topics;
    const put = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/topics`, {
      topics: [
        ...before.map((x: any) => (x.key === 'newsletters' ? { ...x, require_consent: false } : x)),
        { key: 'webinars', title: 'Webinars', advertising: true, require_consent: false },
      ],
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    await goTo(page, `${base}/ui/projects/${site}?tab=topics`);
    assert.match(await page.locator('.topics-law').innerText(), /38-FZ/);
    // SPEC §22 changed the default of newsletters only: cart reminders are not offered it (nor a topic of
    // the project's own, whose switch is in the table).
    assert.deepEqual(
      await page.locator('.consent-offer').evaluateAll((els) => els.map((e) => e.getAttribute('data-topic'))),
      ['newsletters'],
    );
    await goTo(ruPage, `${base}/ui/projects/${site}?tab=topics`);
    assert.match(await ruPage.locator('.consent-offer').innerText(), /Новости и рассылки/);
    assert.match(await ruPage.locator('.consent-offer .offer-changes').innerText(), /^Что изменится:/);
    await saveScreenshot(ruPage, 'ru-topics-consent-offer');
    await page.locator('.consent-offer[data-topic=newsletters] button').click();
    await page.locator('dialog.confirm button[value=yes]').click();
    await page.locator('.toast', { hasText: 'Topics saved' }).waitFor();
    const topics = (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/topics`)).body.topics;
    assert.equal(topics.find((x: any) => x.key === 'newsletters').require_consent, true);
    assert.equal(topics.find((x: any) => x.key === 'cart_reminders').require_consent, false);
    assert.equal(topics.find((x: any) => x.key === 'webinars').require_consent, false);
    assert.deepEqual(problems, []);
  });

  it('a project without the default layout is offered it, with what changes, and gets it after a confirmation', async () => {
    await goTo(page, `${base}/ui/projects/${site}?tab=layouts`);
    const offer = page.locator('.default-layout-offer');
    await offer.waitFor();
    assert.match(await offer.locator('.offer-changes').innerText(), /What changes: .*project default/);
    await goTo(ruPage, `${base}/ui/projects/${site}?tab=layouts`);
    assert.match(await ruPage.locator('.default-layout-offer .offer-changes').innerText(), /^Что изменится:/);
    await saveScreenshot(ruPage, 'ru-layouts-default-offer');
    await offer.locator('button').click();
    await page.locator('dialog.confirm button[value=yes]').click();
    await page.locator('.toast', { hasText: 'now the project default' }).waitFor();
    const projects = (await adminCall(t.app, 'GET', '/api/admin/projects')).body;
    assert.equal(projects.items.find((x: any) => x.site_key === site).default_layout, 'default');
    const layout = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/layouts/default`);
    assert.equal(layout.status, 200);
    await goTo(page, `${base}/ui/projects/${site}?tab=layouts`);
    assert.equal(await page.locator('.default-layout-offer').count(), 0, 'offered no more once taken');
    assert.deepEqual(problems, []);
  });
});
