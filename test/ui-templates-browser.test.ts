// The template editor with a contract (issue 25) in a real browser: variables (required marked) appear as
// the author types, the impact warning shows before saving and a confirmed save goes through, versions
// list with a diff and a rollback, layouts have a page, the routing page marks what the catalog lacks,
// the test-send field takes an internationalised address. Screenshots with UPDATE_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { adminCall, createTestApp, keyCall, newKey, type TestApp } from './support/harness.js';
import { goTo, launchChromium, loginWithToken, openPage, saveScreenshot, CHROMIUM_MISSING } from './support/browser.js';

const SITE = 'kursy';

describe('template editor with a contract, in a browser', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const go = (path: string) => goTo(page, base + path);
  // The preview's iframe is drawn before the picture is taken.
  const shot = async (name: string) => {
    await page.frameLocator('iframe.preview-frame').locator('p').first().waitFor();
    await page.locator('iframe.preview-frame').scrollIntoViewIfNeeded();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await saveScreenshot(page, name, true);
  };

  before(async () => {
    t = await createTestApp('sqlite');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await adminCall(t.app, 'POST', '/api/sites', {
      site_key: SITE,
      name: 'Курсы для педагогов',
      from_email: 'noreply@kursy.example',
    });
    await adminCall(t.app, 'POST', '/api/templates', {
      site_key: SITE,
      name: 'course_payment_success',
      subject: '{{ name }}, оплата курса «{{ course_name }}» получена',
      html: '<p>Здравствуйте, {{ name }}!</p>\n<p>Курс «{{ course_name }}» оплачен.</p>\n',
      text: 'Курс «{{ course_name }}» оплачен.',
    });
    await adminCall(t.app, 'PUT', `/api/admin/projects/${SITE}/routing`, {
      routes: { course_paid: 'course_payment_success' },
    });
    const { key } = await newKey(t.app, SITE, {
      permissions: ['transactional_send'],
      allowed_api_events: ['course_paid'],
    });
    // Recent requests: 3 of 4 carry no fields.teacher, which the edit below will require.
    for (let i = 0; i < 4; i++) {
      const r = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'course_paid',
        email: `p${i}@kursy.example`,
        name: 'Ирина',
        fields: { course_name: 'Методика', ...(i === 0 ? { teacher: 'Анна Сергеевна' } : {}) },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems, { consoleErrors: true }));
    await loginWithToken(page, base);
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the variables as the author types, required ones marked, and the routed event’s needs', async () => {
    await go(`/ui/projects/${SITE}/templates/course_payment_success`);
    const variable = (name: string) => page.locator(`.variables li[data-variable="${name}"]`);
    await variable('fields.course_name').waitFor();
    assert.equal(await variable('fields.course_name').getAttribute('data-required'), 'true');
    assert.equal(await variable('name').getAttribute('data-required'), 'false');
    await page
      .getByLabel('HTML part', { exact: true })
      .fill(
        '<p>Здравствуйте, {{ name }}!</p>\n<p>Курс «{{ course_name }}» оплачен.</p>\n<p>Преподаватель: {{ fields.teacher }}</p>\n<p>{{ fields.note | default: "" }}</p>\n',
      );
    await variable('fields.teacher').waitFor();
    assert.equal(await variable('fields.teacher').getAttribute('data-required'), 'true');
    assert.equal(await variable('fields.note').getAttribute('data-required'), 'false');
    await page.locator('.contract td', { hasText: 'fields.teacher' }).waitFor();
    // The impact answer before saving: 3 of the 4 course_paid requests had no fields.teacher.
    await page
      .locator('.contract .impact', {
        hasText: '3 of the 4 course_paid requests of the last 7 days had no fields.teacher',
      })
      .waitFor();
    // A Russian project previews with Russian sample values.
    await page.locator('.preview-subject', { hasText: 'Ирина Петрова, оплата курса' }).waitFor();
    await shot('template-editor-variables');
  });

  it('publishing answers with the impact warning; "save anyway" publishes', async () => {
    await page.getByRole('button', { name: 'Save template' }).click();
    const warning = page.locator('form .impact');
    await warning.waitFor();
    assert.match((await warning.textContent()) ?? '', /3 of the 4 course_paid requests/);
    await shot('template-impact-warning');
    await warning.getByRole('button', { name: 'Save anyway' }).click();
    await page.locator('.toast', { hasText: 'version 2 published' }).waitFor();
    const tpl = await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/templates/course_payment_success`);
    assert.equal(tpl.body.template.version, 2);
  });

  it('lists versions with a diff against the published one; publishing an older one rolls back', async () => {
    const row = page.locator('.versions tr', { hasText: 'not published' }).first();
    await row.getByRole('button', { name: 'Diff with published' }).click();
    await page.locator('.diff-removed', { hasText: 'fields.teacher' }).waitFor();
    await shot('template-versions');
    await row.getByRole('button', { name: 'Publish this version' }).click();
    await page.locator('.toast', { hasText: 'Version 1 is now published' }).waitFor();
    const tpl = await adminCall(t.app, 'GET', `/api/admin/projects/${SITE}/templates/course_payment_success`);
    assert.equal(tpl.body.template.version, 1);
  });

  it('layouts have a page: {{ content }} is checked, a saved layout is listed', async () => {
    await go(`/ui/projects/${SITE}?tab=layouts`);
    await page.getByLabel('Layout name', { exact: true }).fill('main');
    await page.getByLabel('HTML part', { exact: true }).fill('<div>{{ site_name }}</div>');
    await page.getByRole('button', { name: 'Save layout' }).click();
    await page.locator('.error, [role=alert]', { hasText: 'exactly once' }).first().waitFor();
    await page.getByLabel('HTML part', { exact: true }).fill('<div>{{ site_name }}</div>{{ content }}');
    await page.getByRole('button', { name: 'Save layout' }).click();
    await page.locator('main table code', { hasText: 'main' }).waitFor();
  });

  it('the routing page marks a template whose needs the catalog does not list; test send takes an IDN address', async () => {
    await adminCall(t.app, 'POST', '/api/templates', {
      site_key: SITE,
      name: 'results',
      subject: '{{ event_title }}',
      html: '<p>{{ fields.diploma_url }}</p>',
      text: '',
    });
    await adminCall(t.app, 'PUT', `/api/admin/projects/${SITE}/routing`, {
      routes: { course_paid: 'course_payment_success', contest_results: 'results' },
    });
    await go(`/ui/projects/${SITE}?tab=routing`);
    const row = page.locator('tr', { has: page.locator('code', { hasText: /^contest_results$/ }) });
    await row.locator('.route-needs', { hasText: 'fields.diploma_url' }).waitFor();
    await go(`/ui/projects/${SITE}?tab=delivery`);
    const to = page.locator('input[name=test_to]');
    await to.fill('ирина@пример.рф');
    assert.equal(await to.evaluate((el: HTMLInputElement) => el.checkValidity()), true);
    assert.deepEqual(problems, []);
  });
});
