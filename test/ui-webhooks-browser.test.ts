// The webhooks tab in a real browser (chromium through playwright-core, SQLite): add an endpoint and
// see its secret once, see a failing delivery with its attempts, send it again, and see a disabled
// endpoint with its reason and turn it back on; then replay a template-less event from its page.
// Screenshots only with UPDATE_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { createWebhookWorker, type WebhookWorker } from '../src/workers/siteWebhooks.js';
import { sealingSecret } from '../src/services/delivery.js';
import { adminCall, createTestApp, keyCall, setupProject, type TestApp } from './support/harness.js';
import { startReceiver, type Receiver } from './support/webhookReceiver.js';
import { launchChromium, loginWithToken, openPage, saveScreenshot, CHROMIUM_MISSING } from './support/browser.js';

const skip = CHROMIUM_MISSING;

describe('webhooks tab in a browser', { skip }, () => {
  let t: TestApp;
  let rx: Receiver;
  let browser: Browser;
  let page: Page;
  let base: string;
  let site: string;
  let key: string;
  let hooks: WebhookWorker;
  const problems: string[] = [];

  const shot = (name: string, fullPage = true) => saveScreenshot(page, name, fullPage);
  const tab = async () => {
    await page.goto(`${base}/ui/projects/${site}?tab=webhooks`);
    await page.locator('main h2', { hasText: 'Webhooks' }).waitFor();
  };

  before(async () => {
    rx = await startReceiver();
    t = await createTestApp('sqlite', { WEBHOOKS_ALLOW_PRIVATE: 'true' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    ({ site, key } = await setupProject(t.app));
    hooks = createWebhookWorker({
      db: t.deps.db,
      config: t.config.webhooks,
      secret: await sealingSecret(t.deps),
      clock: t.clock,
    });
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems));
    await loginWithToken(page, base);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await rx?.close();
  });

  it('adds an endpoint and shows its secret once', async () => {
    await tab();
    await page.getByText('No webhook endpoints yet.').waitFor();
    await page.getByLabel('URL', { exact: true }).fill(`${rx.url}/hook`);
    await page.getByLabel('Description').fill('orders of the school site');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = page.locator('.new-key code.secret');
    await secret.waitFor();
    rx.secret = (await secret.textContent()) ?? '';
    assert.match(rx.secret, /^whsec_/);
    await page.locator('table code', { hasText: `${rx.url}/hook` }).waitFor();
    await tab();
    assert.equal(await page.locator('.new-key').count(), 0, 'the secret is not shown again');
  });

  it('shows a failing delivery with its attempts and sends it again', async () => {
    rx.mode = 'fail';
    const sent = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
      event_type: 'contest_results',
      email: 'pupil@example.com',
      order_id: 'UI-1',
      fields: { event_title: 'Spring', work_title: 'Poem', place: '1' },
    });
    assert.equal(sent.status, 200);
    await createWorker({
      db: t.deps.db,
      transport: createCaptureTransport(),
      clock: t.clock,
      publicUrl: base,
      secret: 'x'.repeat(32),
    }).runOnce();
    assert.equal(await hooks.runOnce(), 1);
    await tab();
    await page.getByRole('button', { name: 'Deliveries' }).click();
    await page.locator('h3', { hasText: 'Deliveries to' }).waitFor();
    const row = page.locator('tr', { hasText: 'email.sent' });
    await row.locator('.badge', { hasText: 'pending' }).waitFor();
    await row.locator('summary').click();
    await row.getByText('HTTP 500').first().waitFor();
    await row
      .getByText(/upstream broke/)
      .first()
      .waitFor();
    await shot('project-webhooks');
    rx.mode = 'ok';
    await row.getByRole('button', { name: 'Send again' }).click();
    await page.locator('.toast', { hasText: 'Queued to be sent again' }).first().waitFor();
    assert.equal(await hooks.runOnce(), 1);
    await page.getByRole('button', { name: 'Deliveries' }).click();
    await page.locator('tr', { hasText: 'email.sent' }).locator('.badge', { hasText: 'delivered' }).waitFor();
    assert.equal(rx.received.length, 2);
    assert.ok(rx.received[1].verified, 'the re-sent delivery verifies with the secret the page showed');
  });

  it('lets an owner allow development addresses for this project, with a warning while on', async () => {
    await tab();
    const sw = page.getByLabel(/Allow development addresses/);
    await sw.check();
    await page.locator('.toast', { hasText: 'Development addresses allowed' }).first().waitFor();
    await page.getByText(/may go to localhost and private networks/).waitFor();
    const on = await adminCall(t.app, 'GET', '/api/admin/projects');
    assert.equal(on.body.items.find((x: { site_key: string }) => x.site_key === site).allow_private_webhooks, true);
    await sw.uncheck();
    await page.locator('.toast', { hasText: 'Development addresses refused again' }).first().waitFor();
    assert.equal(await page.getByText(/may go to localhost and private networks/).count(), 0);
    const off = await adminCall(t.app, 'GET', '/api/admin/projects');
    assert.equal(off.body.items.find((x: { site_key: string }) => x.site_key === site).allow_private_webhooks, false);
  });

  it('shows a disabled endpoint with its reason and enables it again', async () => {
    await t.deps.db.db
      .updateTable('webhook_endpoints')
      .set({ status: 'disabled', disabled_at: t.clock.now(), disabled_reason: 'every attempt failed since yesterday' })
      .execute();
    await tab();
    await page.getByText(/every attempt failed since yesterday/).waitFor();
    await shot('project-webhooks-disabled');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.locator('.toast', { hasText: 'Endpoint enabled' }).first().waitFor();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
  });

  it('replays a send that found no template, once one is routed, from the event page', async () => {
    const first = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
      event_type: 'olympiad_results',
      email: 'olymp@example.com',
      order_id: 'UI-2',
      fields: { event_title: 'O', work_title: 'W', place: '2', olympiad_title: 'X' },
    });
    assert.equal(first.body.status, 'no_template');
    const routed = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, {
      routes: { contest_results: 'contest_tpl', olympiad_results: 'contest_tpl' },
    });
    assert.ok(routed.status < 300);
    await page.goto(`${base}/ui/events/${first.body.event_id}`);
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.locator('dialog button', { hasText: 'Replay' }).click();
    await page.getByText(`Replay of event #${first.body.event_id}`).waitFor();
    await shot('event-replayed');
    assert.deepEqual(problems, []);
  });
});
