// The admin UI's layout from 1280 px down to a 390 px phone, in Russian (issue 28): no page scrolls
// sideways, the top menu's labels stay on one line each, wide tables scroll inside their own box, and
// the e-mail list shows each e-mail's subject. Screenshots (both widths) only with UPDATE_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { ADMIN_TOKEN, createTestApp, keyCall, setupProject, type TestApp } from './support/harness.js';
import { CHROMIUM_MISSING, goTo, launchChromium, openPage, saveScreenshot } from './support/browser.js';

const PAGES = [
  ['dashboard', '/ui/'],
  ['projects', '/ui/projects'],
  ['project', '/ui/projects/site1'],
  ['keys', '/ui/projects/site1?tab=keys'],
  ['routing', '/ui/projects/site1?tab=routing'],
  ['delivery', '/ui/projects/site1?tab=delivery'],
  ['webhooks', '/ui/projects/site1?tab=webhooks'],
  ['events', '/ui/events'],
  ['emails', '/ui/emails'],
  ['contacts', '/ui/contacts'],
  ['audit', '/ui/audit'],
  ['users', '/ui/users'],
  // Issue 37: the dashboard of one project (its select), the template editor and a contact's page.
  ['dashboard-project', '/ui/?site_key=site1'],
  ['template-editor', '/ui/projects/site1/templates/contest_tpl'],
  ['contact', '/ui/contacts/1'],
] as const;

describe('admin UI layout at 1280 px and 390 px', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const problems: string[] = [];

  before(async () => {
    t = await createTestApp('sqlite');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const { key } = await setupProject(t.app);
    const sent = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
      event_type: 'contest_results',
      email: 'anna@example.com',
      name: 'Анна',
      fields: { event_title: 'Весна', work_title: 'Работа', place: '1' },
    });
    assert.equal(sent.status, 200);
    await createWorker({
      db: t.deps.db,
      transport: createCaptureTransport(),
      clock: t.clock,
      publicUrl: base,
      secret: 'x'.repeat(32),
    }).runOnce();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function login(width: number, height: number): Promise<Page> {
    const { page } = await openPage(browser, problems, {
      locale: 'ru-RU',
      consoleErrors: true,
      width,
      height,
    });
    await page.goto(`${base}/ui/login?via=token`);
    await page.locator('input[name=token]').fill(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.locator('main h1', { hasText: 'Сводка' }).waitFor();
    return page;
  }

  for (const [width, height] of [
    [1366, 768],
    [1280, 800],
    [390, 844],
  ] as const) {
    it(`no page scrolls sideways at ${width} px, and menu labels stay on one line`, async () => {
      const page = await login(width, height);
      const wide: string[] = [];
      for (const [name, path] of PAGES) {
        await goTo(page, `${base}${path}`);
        const [scroll, client] = await page.evaluate(() => [
          document.documentElement.scrollWidth,
          document.documentElement.clientWidth,
        ]);
        if (scroll > client) wide.push(`${path}: ${scroll} > ${client}`);
        const tall = await page.evaluate(() =>
          [...document.querySelectorAll('.topbar nav a, .topbar .brand')]
            .filter((a) => a.getBoundingClientRect().height > 2 * parseFloat(getComputedStyle(a).lineHeight))
            .map((a) => a.textContent),
        );
        assert.deepEqual(tall, [], `menu labels wrapped on ${path} at ${width} px`);
        if (name === 'dashboard' || name === 'emails') await saveScreenshot(page, `ru-${name}-${width}`, false);
      }
      await page.close();
      assert.deepEqual(wide, [], `pages that scroll sideways at ${width} px`);
      assert.deepEqual(problems, []);
    });
  }

  it("the project's tabs fit one row at 1366 px, the less used ones under «Ещё»", async () => {
    const page = await login(1366, 768);
    for (const tab of ['keys', 'layouts']) {
      await goTo(page, `${base}/ui/projects/site1?tab=${tab}`);
      const tops = await page.evaluate(() =>
        [...document.querySelectorAll('nav.tabs > ul > li')].map((li) => Math.round(li.getBoundingClientRect().top)),
      );
      assert.ok(tops.length > 1 && new Set(tops).size === 1, `tabs in more than one row: ${tops.join(', ')}`);
    }
    // The open tab of the menu is named on it; the menu opens to its links.
    const more = page.locator('nav.tabs .tabs-more summary');
    assert.equal(await more.innerText(), 'Ещё: Макеты');
    await more.click();
    await page.locator('nav.tabs .tabs-more a', { hasText: 'Цепочка корзины' }).click();
    await page.locator('.tab-body h2', { hasText: 'Цепочка корзины' }).waitFor();
    await page.close();
    assert.deepEqual(problems, []);
  });

  it('the e-mail list shows the subject of a rendered e-mail', async () => {
    const page = await login(1280, 800);
    await goTo(page, `${base}/ui/emails`);
    await page.locator('th', { hasText: 'Тема' }).waitFor();
    await page.locator('main table td', { hasText: 'contest_tpl' }).first().waitFor();
    const row = page.locator('main table tbody tr').first();
    assert.match(await row.innerText(), /Анна: contest_tpl/);
    await page.close();
  });
});
