// Administrators in the browser (SPEC §14): the first-run setup page, a project admin who sees only their
// project, a viewer who finds no control that would change anything, an owner's accounts page and the
// audit log, and a personal token shown once. Screenshots only with UPDATE_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { SetupCode } from '../src/services/setup.js';
import { PASSWORD } from './support/accounts.js';
import { createTestApp, keyCall, type TestApp } from './support/harness.js';
import { goTo, launchChromium, openPage, saveScreenshot, CHROMIUM_MISSING } from './support/browser.js';

const skip = CHROMIUM_MISSING;

describe('administrators in a browser', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let setupCode = '';
  let emailId = 0;
  const problems: string[] = [];

  const go = (path: string) => goTo(page, base + path);
  const heading = () => page.locator('main h1');
  const shot = (name: string, fullPage = true) => saveScreenshot(page, name, fullPage);
  const login = async (email: string) => {
    await go('/ui/login');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await heading().filter({ hasText: 'Dashboard' }).waitFor();
  };
  const logout = async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/ui\/login/);
  };
  /** Texts of the visible buttons in the page's main part. */
  const visibleButtons = async () =>
    page.evaluate(() =>
      [...document.querySelectorAll('main button, main input[type=submit]')]
        .filter((b) => (b as HTMLElement).offsetParent !== null)
        .map((b) => (b.textContent ?? '').trim()),
    );

  before(async () => {
    // No ADMIN_TOKEN and no account: the first run, with the code serve would have printed.
    t = await createTestApp('sqlite', { ADMIN_TOKEN: '' });
    t.deps.setup = new SetupCode();
    setupCode = t.deps.setup.issue(t.clock.now());
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems, { consoleErrors: true }));
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('the setup link creates the first owner, who is then logged in; the link works once', async () => {
    await go(`/ui/setup?code=${setupCode}`);
    await heading().filter({ hasText: 'First run' }).waitFor();
    await shot('setup');
    await page.getByLabel('E-mail').fill('owner@school.example');
    await page.getByLabel('Name').fill('Olga Owner');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create the owner and log in' }).click();
    await heading().filter({ hasText: 'Dashboard' }).waitFor();
    assert.ok(await page.locator('.topbar .who', { hasText: 'owner@school.example' }).isVisible());
    await logout();
    await go(`/ui/setup?code=${setupCode}`);
    await page.getByLabel('E-mail').fill('second@school.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create the owner and log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'setup link is not valid' }).waitFor();
  });

  it('an owner creates accounts on the accounts page, and the audit log shows it', async () => {
    // Two projects and their data, made through the API with a personal token of the owner.
    const owner = await t.app.inject({
      method: 'POST',
      url: '/api/admin/session',
      payload: { email: 'owner@school.example', password: PASSWORD },
    });
    const cookie = String(owner.headers['set-cookie']).split(';')[0];
    const tok = await t.app.inject({
      method: 'POST',
      url: '/api/admin/tokens',
      headers: { cookie, 'x-csrf-token': owner.json().csrf_token },
      payload: { name: 'setup' },
    });
    const token = tok.json().token as string;
    const asOwner = { authorization: `Bearer ${token}` };
    for (const site of ['mine', 'other']) {
      await t.app.inject({
        method: 'POST',
        url: '/api/sites',
        headers: asOwner,
        payload: { site_key: site, name: site, from_email: `noreply@${site}.example` },
      });
      await t.app.inject({
        method: 'POST',
        url: '/api/templates',
        headers: asOwner,
        payload: { site_key: site, name: 'contest_tpl', subject: 'Hi {{ name }}', html: '<p>Hi</p>', text: 'Hi' },
      });
      await t.app.inject({
        method: 'PUT',
        url: `/api/admin/projects/${site}/routing`,
        headers: asOwner,
        payload: { routes: { contest_results: 'contest_tpl' } },
      });
      const key = await t.app.inject({
        method: 'POST',
        url: '/api/admin/keys',
        headers: asOwner,
        payload: {
          site_key: site,
          name: 'main',
          rights: { permissions: ['transactional_send'], allowed_api_events: ['contest_results'] },
        },
      });
      const sent = await keyCall(t.app, key.json().key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
        email: `anna@${site}.example`,
        name: 'Anna',
        fields: { event_title: 'Spring', work_title: 'Poem', place: '1' },
      });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
    }
    const emails = await t.app.inject({ method: 'GET', url: '/api/admin/emails?site_key=mine', headers: asOwner });
    emailId = emails.json().items[0].id;

    await login('owner@school.example');
    await page.getByRole('link', { name: 'Accounts' }).click();
    await heading().filter({ hasText: 'Accounts' }).waitFor();
    for (const [email, role] of [
      ['admin@school.example', 'project admin'],
      ['viewer@school.example', 'viewer'],
    ]) {
      await page.getByRole('button', { name: 'New account' }).click();
      const form = page.locator('form.card');
      await form.getByLabel('E-mail').fill(email);
      await form.getByLabel('Password').fill(PASSWORD);
      await form.getByLabel('Role').selectOption({ label: role });
      await form.getByLabel('mine').check();
      await form.getByRole('button', { name: 'Create' }).click();
      await page.locator('main td', { hasText: email }).first().waitFor();
    }
    await shot('accounts');
    await page.getByRole('link', { name: 'Audit log' }).click();
    await heading().filter({ hasText: 'Audit log' }).waitFor();
    await page.locator('main td', { hasText: 'user.create' }).first().waitFor();
    assert.ok((await page.locator('main tbody tr').count()) >= 8);
    await shot('audit');
    // Filtered by action: only the account creations are left.
    await page.locator('main form.filters select[name="action"]').selectOption('user.create');
    await page.locator('main form.filters').getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/action=user\.create/);
    await page.locator('main tbody tr').first().waitFor();
    const actions = await page.locator('main tbody tr td:nth-child(3)').allInnerTexts();
    assert.ok(actions.length >= 3, JSON.stringify(actions));
    for (const a of actions) assert.equal(a.trim(), 'user.create');
    await logout();
  });

  it('a project admin sees only their project, cannot create projects, and has no accounts page', async () => {
    await login('admin@school.example');
    assert.equal(await page.getByRole('link', { name: 'Accounts' }).count(), 0);
    await page.getByRole('link', { name: 'Projects' }).click();
    await heading().filter({ hasText: 'Projects' }).waitFor();
    const rows = await page.locator('main tbody tr').allTextContents();
    assert.equal(rows.length, 1);
    assert.match(rows[0], /mine/);
    assert.equal(await page.getByRole('heading', { name: 'New project' }).isVisible(), false);
    // The same pages show their change controls to a project admin (so the viewer's check below can fail).
    await go('/ui/projects/mine?tab=routing');
    assert.ok((await visibleButtons()).includes('Save routing'));
    await go(`/ui/emails/${emailId}`);
    await page.locator('main h1').waitFor();
    await go('/ui/projects/other');
    await heading().filter({ hasText: 'Not found' }).waitFor();
    // Their own token, shown once.
    await go('/ui/tokens');
    await page.getByLabel('Name').fill('deploy');
    await page.getByRole('button', { name: 'Create the token' }).click();
    const shown = (await page.locator('.new-key code').textContent())!;
    assert.match(shown, /^egwa_/);
    await shot('tokens');
    await go('/ui/tokens');
    assert.equal(await page.locator('main', { hasText: shown }).count(), 0, 'gone after a reload');
    await logout();
  });

  it('a viewer finds no button that would change anything', async () => {
    await login('viewer@school.example');
    // Paging, filters and copying (the key's PHP snippet: a viewer is the site developer's role) only.
    const allowed = new Set(['← Previous', 'Next →', 'Apply', 'Copy']);
    const pages = [
      '/ui/projects',
      '/ui/projects/mine',
      '/ui/projects/mine?tab=keys',
      '/ui/projects/mine?tab=routing',
      '/ui/projects/mine?tab=templates',
      '/ui/projects/mine?tab=lists',
      '/ui/projects/mine?tab=categories',
      '/ui/projects/mine?tab=paid',
      '/ui/projects/mine?tab=chain',
      '/ui/projects/mine?tab=webhooks',
      `/ui/emails/${emailId}`,
      '/ui/contacts',
      '/ui/events',
      '/ui/emails',
    ];
    const found: string[] = [];
    for (const path of pages) {
      await go(path);
      for (const b of await visibleButtons()) if (!allowed.has(b)) found.push(`${path}: ${b}`);
    }
    assert.deepEqual(found, []);
    assert.deepEqual(problems, []);
  });
});
