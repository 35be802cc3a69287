// The Domains card of the Delivery tab (SPEC §21) in chromium, in Russian: a domain is added, its TXT
// record shown to copy, checked against a DNS server of the test's own (DNS_SERVERS) and shown verified;
// a name that is no domain is refused in Russian. With UPDATE_SCREENSHOTS=1 it saves
// docs/screenshots/ru-domains-pending.png and ru-domains-verified.png.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createTestApp, setupProject, type TestApp } from './support/harness.js';
import { CHROMIUM_MISSING, goTo, launchChromium, loginWithToken, openPage, saveScreenshot } from './support/browser.js';
import { dnsServer } from './support/dns.js';

describe('sender domains card in a browser', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let dns: Awaited<ReturnType<typeof dnsServer>>;
  const records = new Map<string, string[]>();
  let browser: Browser;
  let page: Page;
  let base: string;
  const problems: string[] = [];
  before(async () => {
    dns = await dnsServer(records);
    t = await createTestApp('sqlite', { DNS_SERVERS: `127.0.0.1:${dns.port}` });
    await setupProject(t.app);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems, { height: 900, consoleErrors: true }));
    await loginWithToken(page, base);
    await page.evaluate(() => localStorage.setItem('egw.lang', 'ru'));
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    dns?.close();
  });

  it('adds a domain, shows its TXT record, checks it and shows it verified', async () => {
    await goTo(page, `${base}/ui/projects/site1?tab=delivery`);
    const card = page.locator('.sender-domains');
    await card.getByRole('heading', { name: 'Домены отправителя' }).waitFor();
    // The owner's project creation approved its sender's domain.
    await card.locator('tr.domain-approved', { hasText: 'site1.example' }).waitFor();

    await card.getByLabel('Добавить домен').fill('не домен');
    await card.getByRole('button', { name: 'Добавить', exact: true }).click();
    await card.getByText('Это не доменное имя').waitFor();

    await card.getByLabel('Добавить домен').fill('News.Site1.example');
    await card.getByRole('button', { name: 'Добавить', exact: true }).click();
    const row = card.locator('tr.domain-pending', { hasText: 'news.site1.example' });
    await row.getByText('ждёт TXT-запись').waitFor();
    const name = await row.locator('code', { hasText: '_edu-mail-gateway.' }).innerText();
    const value = await row.locator('code', { hasText: 'edu-mail-gateway-verification=' }).innerText();
    assert.equal(name, '_edu-mail-gateway.news.site1.example');
    await card.evaluate((el) => el.scrollIntoView()); // the card from its heading on
    await saveScreenshot(page, 'ru-domains-pending', false);

    // Not published yet: the check says so and the domain stays pending.
    await row.getByRole('button', { name: 'Проверить' }).click();
    await page.locator('.toast', { hasText: 'Подходящей TXT-записи' }).waitFor();
    records.set(name, [value]);
    await row.getByRole('button', { name: 'Проверить' }).click();
    const verified = card.locator('tr.domain-verified', { hasText: 'news.site1.example' });
    await verified.getByText('подтверждён').waitFor();
    await card.evaluate((el) => el.scrollIntoView());
    await saveScreenshot(page, 'ru-domains-verified', false);
    assert.deepEqual(problems, []);
  });
});
