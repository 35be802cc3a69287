// Consent in a real browser (chromium through playwright-core, SQLite): the project's topics tab, a
// contact's subscriptions and consent history, the export link, the erasure asked for with a dialog that
// names the address; and the preference page used with the keyboard, without JavaScript. Screenshots
// only with UPDATE_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { signPreferenceToken } from '../src/delivery/unsubscribe.js';
import { installationSecret } from '../src/services/secrets.js';
import { adminCall, createTestApp, keyCall, setupProject, type TestApp } from './support/harness.js';
import {
  CHROMIUM_MISSING,
  launchChromium,
  loginWithToken,
  openPage,
  saveScreenshot,
  settled,
} from './support/browser.js';

describe('consent in a browser', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let site: string;
  let key: string;
  let contactId: number;
  const problems: string[] = [];
  const email = 'maria.ivanova@example.com';

  before(async () => {
    t = await createTestApp('sqlite');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    ({ site, key } = await setupProject(t.app));
    await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, { name: 'Педсовет', brand_color: '#0f766e' });
    await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
      email,
      name: 'Мария Иванова',
      order_id: 'UI-1',
      cart_type: 'course',
      consent: [
        {
          topic: 'newsletters',
          granted: true,
          at: '2025-09-02T10:15:00+03:00',
          text_version: 'soglasie-2025-09',
          ip: '203.0.113.24',
        },
      ],
    });
    t.clock.advance(3_600_000);
    await keyCall(t.app, key, 'POST', '/api/scoped/contacts/consent', {
      email,
      topic: 'cart_reminders',
      granted: false,
      ip: '203.0.113.24',
    });
    contactId = (await adminCall(t.app, 'GET', `/api/admin/contacts?email=maria`)).body.items[0].id;
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems, { consoleErrors: true }));
    await loginWithToken(page, base);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the topics on the project page and saves a change', async () => {
    await page.goto(`${base}/ui/projects/${site}?tab=topics`);
    await page.locator('main h2', { hasText: 'Topics' }).waitFor();
    await page.getByLabel('Title of newsletters').fill('News of the school');
    await page.getByRole('button', { name: 'Save topics' }).click();
    await page.getByText('Topics saved').waitFor();
    const r = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/topics`);
    assert.equal(r.body.topics.find((x: any) => x.key === 'newsletters').title, 'News of the school');
  });

  it("shows a contact's subscriptions and consent history with source, time, text version and IP", async () => {
    await page.goto(`${base}/ui/contacts/${contactId}`);
    await page.locator('main h2', { hasText: 'Consent records' }).waitFor();
    const rows = page.locator('table', { has: page.locator('th', { hasText: 'Text version' }) }).locator('tbody tr');
    assert.equal(await rows.count(), 2);
    const text = await rows.allTextContents();
    assert.ok(
      text.some((r) => r.includes('soglasie-2025-09') && r.includes('203.0.113.24') && r.includes('the site (API)')),
    );
    assert.ok(text.some((r) => r.includes('cart_reminders') && r.includes('withdrawn')));
    const subs = await page
      .locator('table', { has: page.locator('th', { hasText: 'Latest consent' }) })
      .locator('tbody tr')
      .allTextContents();
    assert.ok(subs.some((r) => r.includes('cart_reminders') && r.includes('left')));
    assert.equal(
      await page.getByRole('link', { name: 'Export everything (JSON)' }).getAttribute('href'),
      `/api/admin/contacts/${contactId}/export`,
    );
    await saveScreenshot(page, 'contact-consent-history');
  });

  it('the export link downloads the document through the session', async () => {
    const res = await page.request.get(`${base}/api/admin/contacts/${contactId}/export`);
    assert.equal(res.status(), 200);
    assert.equal((await res.json()).contact.email, email);
  });

  it('the preference page works with the keyboard and without JavaScript', async () => {
    const secret = await installationSecret(t.deps);
    const ctx = await browser.newContext({
      javaScriptEnabled: false,
      locale: 'ru-RU',
      viewport: { width: 900, height: 760 },
    });
    const p = await ctx.newPage();
    const c = { id: contactId, project_id: 1, email };
    const row = await t.deps.db.db
      .selectFrom('contacts')
      .select('project_id')
      .where('id', '=', contactId)
      .executeTakeFirstOrThrow();
    c.project_id = Number(row.project_id);
    const url = `${base}/p/${signPreferenceToken(secret, c)}`;
    await p.goto(url);
    await p.getByRole('heading', { name: 'Настройки писем' }).waitFor();
    assert.equal(await p.getByLabel('News of the school').isChecked(), true);
    assert.equal(await p.getByLabel('Напоминания о неоплаченных заказах').isChecked(), false);
    if (process.env.UPDATE_SCREENSHOTS === '1')
      await p.screenshot({ path: 'docs/screenshots/preference-page-ru.png', fullPage: true });
    // Keyboard only: focus the newsletters switch, toggle it with Space, submit with Enter on Save.
    await p.getByLabel('News of the school').focus();
    await p.keyboard.press('Space');
    await p.getByRole('button', { name: 'Сохранить' }).focus();
    await p.keyboard.press('Enter');
    await p.getByText('Сохранено.').waitFor();
    const d = (await adminCall(t.app, 'GET', `/api/admin/contacts/${contactId}`)).body;
    assert.equal(d.topics.find((x: any) => x.key === 'newsletters').subscribed, false);
    assert.equal(d.consent[0].source, 'preference_page');
    await ctx.close();
  });

  it('erases after a confirmation that names the address', async () => {
    await page.goto(`${base}/ui/contacts/${contactId}`);
    await settled(page);
    await page.getByRole('button', { name: 'Erase the person' }).click();
    const dialog = page.locator('dialog.confirm');
    await dialog.waitFor();
    assert.ok((await dialog.textContent())?.includes(email), 'the question names the address');
    await dialog.getByRole('button', { name: 'Erase the person' }).click();
    await page.getByText('The person was erased').waitFor();
    await page.getByText(/Erased .*Only counts/).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Erase the person' }).count(), 0);
    const audit = await adminCall(t.app, 'GET', `/api/admin/audit?limit=3`);
    assert.ok(!JSON.stringify(audit.body).includes('maria.ivanova'));
    assert.deepEqual(problems, []);
  });
});
