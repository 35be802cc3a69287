// Errors in Russian in a real browser (issue 28): a webhook to a private address and an SMTP URL that
// is not smtp:// each show the catalogue's Russian sentence exactly once, beside the field they concern
// (the field marked invalid), with no English left on the page; the connection check says in Russian
// what the mail server's reply means and shows the reply itself as the detail.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { CHECK_SENTENCES, REASON_SENTENCES } from '../src/domain/errorCatalog.js';
import { ADMIN_TOKEN, adminCall, createTestApp, setupProject, type TestApp } from './support/harness.js';
import { launchChromium, openPage, settled, CHROMIUM_MISSING } from './support/browser.js';

describe('errors in Russian in a browser', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let site: string;
  const problems: string[] = [];

  /** How many times a text appears in what the page shows. */
  const shown = (text: string) => page.evaluate((s) => document.body.innerText.split(s).length - 1, text);
  /** Submits the form holding the control and waits for its error beside the control. */
  async function submitAndExpectBeside(control: string, sentence: string) {
    const input = page.locator(control);
    await page.locator('form', { has: input }).locator('button[type=submit]').first().click();
    const beside = page.locator(`${control} + p.field-error`);
    await beside.waitFor();
    assert.equal(await beside.textContent(), sentence);
    assert.equal(await input.getAttribute('aria-invalid'), 'true');
    assert.equal(await shown(sentence), 1, `"${sentence}" is shown exactly once`);
    assert.equal(await page.locator('p.error').count(), 1, 'one error on the page, not two');
  }

  before(async () => {
    t = await createTestApp('sqlite');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    ({ site } = await setupProject(t.app));
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems, { locale: 'ru-RU', consoleErrors: true }));
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

  it('a webhook to a local address: the Russian sentence once, beside the address field', async () => {
    await page.goto(`${base}/ui/projects/${site}?tab=webhooks`);
    await settled(page);
    await page.locator('input[name=url]').fill('http://127.0.0.1:8080/hooks');
    const sentence = REASON_SENTENCES.webhook_url_private.ru;
    await submitAndExpectBeside('input[name=url]', sentence);
    assert.equal(await shown('loopback'), 0, 'no English sentence');
    // Typing in the field clears its error.
    await page.locator('input[name=url]').fill('https://school.example/hooks');
    assert.equal(await page.locator('p.field-error').count(), 0);
  });

  it('an SMTP URL that is not smtp://: the Russian sentence once, beside the SMTP field', async () => {
    await page.goto(`${base}/ui/projects/${site}?tab=delivery`);
    await settled(page);
    await page.locator('input[name=primary_url]').fill('http://mail.school.example:587');
    await submitAndExpectBeside('input[name=primary_url]', REASON_SENTENCES.smtp_url_scheme.ru);
    assert.equal(await shown('must start with'), 0, 'no English sentence');
  });

  it('the connection check says in Russian what the reply means, with the raw reply as the detail', async () => {
    const saved = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/delivery`, {
      primary: { smtp_url: 'smtp://127.0.0.1:1' },
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    await page.goto(`${base}/ui/projects/${site}?tab=delivery`);
    await settled(page);
    await page.locator('.verify-result').waitFor({ state: 'attached' });
    await page.locator('h3 + .actions button').first().click();
    const result = page.locator('.check-result[data-reason="connection_refused"]');
    await result.waitFor();
    const text = (await result.innerText()).replace(/\s+/g, ' ');
    assert.ok(text.includes(CHECK_SENTENCES.connection_refused.ru), text);
    assert.match(text, /Ответ сервера: .*ECONNREFUSED/);
    assert.deepEqual(problems, []);
  });
});
