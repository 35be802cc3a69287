// Bounces in a real browser (chromium via playwright-core): a DSN recorded for a sent e-mail shows on the
// e-mail's page (outcome, code, effect, raw report), the contact's page names the hard bounce, the project
// page lists the provider webhook URLs, the dashboard the rates and a paused project's Resume button. With
// UPDATE_SCREENSHOTS=1 the pages go to docs/screenshots/.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { parseReportMessage } from '../src/reports/parseReport.js';
import { PAUSE_REASON } from '../src/domain/bounces.js';
import { findProjectBySiteKey, pauseMarketing } from '../src/repos/projects.js';
import { bounceContext, recordReport } from '../src/services/reports.js';
import { addContact, addEmail } from './fixtures/delivery-support.js';
import { bounceFixture } from './support/bounces.js';
import { createTestApp, setupProject, type TestApp } from './support/harness.js';
import { goTo, launchChromium, loginWithToken, openPage, saveScreenshot, CHROMIUM_MISSING } from './support/browser.js';

const skip = CHROMIUM_MISSING;

describe('bounces in a browser', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let emailId: number;
  let contactId: number;
  const problems: string[] = [];

  const shot = (name: string, fullPage = true) => saveScreenshot(page, name, fullPage);

  before(async () => {
    t = await createTestApp('sqlite', { PUBLIC_URL: 'https://gateway.example.org' });
    await setupProject(t.app);
    const project = await t.deps.db.db
      .selectFrom('projects')
      .select('id')
      .where('site_key', '=', 'site1')
      .executeTakeFirstOrThrow();
    const template = await t.deps.db.db
      .selectFrom('templates')
      .select('id')
      .where('project_id', '=', project.id)
      .executeTakeFirstOrThrow();
    contactId = await addContact(t.deps.db, project.id, 'gone@example.net');
    emailId = await addEmail(t.deps.db, {
      projectId: project.id,
      templateId: template.id,
      contactId,
      to: 'gone@example.net',
    });
    const messageId = `<email-${emailId}.site1.test@site1.example>`;
    const now = t.clock.now();
    await t.deps.db.db
      .updateTable('scheduled_emails')
      .set({ status: 'sent', message_id: messageId, sent_at: now })
      .where('id', '=', emailId)
      .execute();
    const raw = bounceFixture('postfix-user-unknown.eml', {
      VERP: 'b-1-0@bounces.example.org',
      RCPT: 'gone@example.net',
      MESSAGE_ID: messageId,
    });
    const [p] = await parseReportMessage(raw);
    await recordReport(bounceContext(t.deps), {
      ...p,
      source: 'smtp',
      projectId: null,
      verpEmailId: emailId,
      raw: raw.toString('utf8'),
    });

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

  it("shows the report on the e-mail's page, with its effect and the raw DSN", async () => {
    await goTo(page, `${base}/ui/emails/${emailId}`);
    await page.locator('h2', { hasText: 'Reports after sending' }).waitFor();
    const row = page.locator('.reports tbody tr').first();
    assert.match(await row.innerText(), /Bounce address \(SMTP\)[\s\S]*bounced[\s\S]*5\.1\.1/);
    assert.match(await row.innerText(), /e-mail → bounced; contact → invalid/);
    await page.locator('.reports summary').first().click();
    await page.locator('.reports pre', { hasText: 'Recipient address rejected' }).waitFor();
    await shot('email-reports');
  });

  it("names the hard bounce on the contact's page", async () => {
    await goTo(page, `${base}/ui/contacts/${contactId}`);
    await page.getByText('a hard bounce').waitFor();
    assert.ok(await page.locator(`a[href="/ui/emails/${emailId}"]`, { hasText: `e-mail #${emailId}` }).count());
  });

  it('lists the provider webhook URLs on the project page, and the rates on the dashboard', async () => {
    await goTo(page, `${base}/ui/projects/site1`);
    await page.locator('.report-webhooks summary').click();
    await page.getByText('https://gateway.example.org/api/webhooks/postmark/site1').waitFor();
    await page.getByText('https://gateway.example.org/api/webhooks/unisender_go/site1').waitFor();
    await shot('project-report-webhooks');
    await goTo(page, `${base}/ui/`);
    await page.locator('h2', { hasText: 'Bounces and complaints' }).waitFor();
    await page.getByText('100%').first().waitFor();
    await page.getByText('warning').first().waitFor();
    assert.deepEqual(problems, []);
  });

  it("shows a paused project's notice on the dashboard; Resume resumes it", async () => {
    const site = (await findProjectBySiteKey(t.deps.db.db, 'site1'))!;
    await pauseMarketing(t.deps.db.db, site.id, t.clock.now(), PAUSE_REASON);
    await goTo(page, `${base}/ui/`);
    const notice = page.locator('[data-paused="site1"]');
    await notice.getByText('Campaigns and cart chains of site1 are paused').waitFor();
    await shot('dashboard-marketing-paused');
    await notice.getByRole('button', { name: 'Resume' }).click();
    await page.locator('dialog.confirm button[value=yes]').click();
    await notice.waitFor({ state: 'detached' });
    assert.equal((await findProjectBySiteKey(t.deps.db.db, 'site1'))!.marketing_paused_at, null);
    assert.deepEqual(problems, []);
  });
});
