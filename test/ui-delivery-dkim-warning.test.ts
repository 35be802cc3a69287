// The Delivery page warns, in Russian and English, when a project sends cart or campaign e-mail without
// DKIM (no receiver offers one-click unsubscribe then, RFC 8058 §4); the API says it as a warning code on
// both databases, and the warning goes once a key is set. The browser half runs in chromium (with
// UPDATE_SCREENSHOTS=1 it saves docs/screenshots/delivery-dkim-warning.png).
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';
import { CHROMIUM_MISSING, goTo, launchChromium, loginWithToken, openPage, saveScreenshot } from './support/browser.js';

const DELIVERY = '/api/admin/projects/site1/delivery';
const pem = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

async function order(t: TestApp, key: string) {
  const r = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
    email: 'cart@example.com',
    order_id: 'O-1',
    cart_type: 'course',
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

for (const d of DIALECTS) {
  describe(`delivery warnings in the API (${d.name})`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    before(async () => {
      t = await createTestApp(d.name);
      ({ key } = await setupProject(t.app));
    });
    after(() => t.close());

    it('marketing_without_dkim appears once cart e-mail exists and goes when a DKIM key is set', async () => {
      assert.deepEqual((await adminCall(t.app, 'GET', DELIVERY)).body.warnings, [], 'nothing sent yet');
      await order(t, key);
      assert.deepEqual((await adminCall(t.app, 'GET', DELIVERY)).body.warnings, ['marketing_without_dkim']);
      const put = await adminCall(t.app, 'PUT', DELIVERY, {
        primary: { smtp_url: 'smtp://relay.example:587' },
        dkim: { domain: 'site1.example', selector: 's1', private_key: pem() },
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.deepEqual(put.body.warnings, []);
      assert.deepEqual((await adminCall(t.app, 'GET', DELIVERY)).body.warnings, []);
    });
  });
}

describe('delivery warning in a browser', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  const problems: string[] = [];
  before(async () => {
    t = await createTestApp('sqlite');
    const { key } = await setupProject(t.app);
    await order(t, key);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems, { height: 900 }));
    await loginWithToken(page, base);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the warning in English and in Russian', async () => {
    await goTo(page, `${base}/ui/projects/site1?tab=delivery`);
    const warning = page.locator('[data-warning="marketing_without_dkim"]');
    await warning.waitFor();
    assert.match(await warning.innerText(), /without DKIM.*one-click unsubscribe/s);
    await saveScreenshot(page, 'delivery-dkim-warning', false);
    await page.evaluate(() => localStorage.setItem('egw.lang', 'ru'));
    await goTo(page, `${base}/ui/projects/site1?tab=delivery`);
    await warning.waitFor();
    assert.match(await warning.innerText(), /без подписи DKIM.*отписку в один клик/s);
    assert.deepEqual(problems, []);
  });

  // The save is asynchronous in the page: the API is polled until it shows the change (5 s at most).
  it("sets the project's Reply-To from its edit form, and clears it", async () => {
    await page.evaluate(() => localStorage.setItem('egw.lang', 'en'));
    await goTo(page, `${base}/ui/projects/site1`);
    const reply = () => adminCall(t.app, 'GET', '/api/admin/projects').then((r) => r.body.items[0].reply_to);
    await page.locator('details.edit-project summary').click();
    await page.getByLabel('Reply-To address').fill('help@site1.example');
    await page.locator('details.edit-project button[type=submit]').click();
    for (let i = 0; i < 50 && (await reply()) !== 'help@site1.example'; i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.equal(await reply(), 'help@site1.example');
    await goTo(page, `${base}/ui/projects/site1`);
    await page.locator('details.edit-project summary').click();
    assert.equal(await page.getByLabel('Reply-To address').inputValue(), 'help@site1.example');
    await page.getByLabel('Reply-To address').fill('');
    await page.locator('details.edit-project button[type=submit]').click();
    for (let i = 0; i < 50 && (await reply()) !== null; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await reply(), null);
    assert.deepEqual(problems, []);
  });
});
