// The Delivery tab in a real browser (chromium via playwright-core): save a project's relay with its
// password and a DKIM key, see them masked after saving (the page holds no secret), the DNS record to
// publish, verify the connection (a real relay with AUTH) and DNS ("not found"), send a test e-mail and
// read its attempts on the e-mail's page. With UPDATE_SCREENSHOTS=1 the pages go to docs/screenshots/.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { installationSecret } from '../src/services/secrets.js';
import { createTestApp, setupProject, type TestApp } from './support/harness.js';
import { startSmtp, type TestSmtp } from './fixtures/delivery-support.js';
import {
  goTo,
  launchChromium,
  loginWithToken,
  openPage,
  saveScreenshot,
  settled,
  CHROMIUM_MISSING,
} from './support/browser.js';

const skip = CHROMIUM_MISSING;
const PASSWORD = 'ui-relay-Secret-4471';

describe('delivery tab in a browser', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let relay: TestSmtp;
  let worker: Worker;
  const problems: string[] = [];
  const pem = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();

  const shot = (name: string, fullPage = true) => saveScreenshot(page, name, fullPage);

  before(async () => {
    relay = await startSmtp({ auth: { user: 'mailer', pass: PASSWORD }, acceptReply: (n) => `Ok: queued as UI${n}` });
    t = await createTestApp(
      'sqlite',
      {},
      {
        dnsTxt: async (name) => {
          throw Object.assign(new Error(`queryTxt ECONNREFUSED ${name}`), { code: 'ECONNREFUSED' });
        },
      },
    );
    await setupProject(t.app);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    worker = createWorker({
      db: t.deps.db,
      transport: createCaptureTransport(),
      clock: t.clock,
      publicUrl: base,
      secret: await installationSecret(t.deps),
    });
    browser = await launchChromium();
    ({ page } = await openPage(browser, problems, { height: 900 }));
    await loginWithToken(page, base);
  });
  after(async () => {
    await browser?.close();
    await worker?.stop();
    await t?.close();
    await relay?.close();
  });

  it('saves the relay and DKIM key, and shows them masked with the DNS record', async () => {
    await goTo(page, `${base}/ui/projects/site1?tab=delivery`);
    await page.getByText('uses the capture transport').waitFor();
    await page.getByLabel('SMTP URL').first().fill(`smtp://mailer:${PASSWORD}@127.0.0.1:${relay.port}`);
    await page.getByLabel('From name').fill('Site One News');
    await page.getByLabel('Domain', { exact: true }).fill('site1.example');
    await page.getByLabel('Selector').fill('ui2026');
    await page.getByLabel('Private key').fill(pem);
    await page.getByRole('button', { name: 'Save delivery settings' }).click();
    await page.locator('.toast', { hasText: 'Delivery settings saved' }).waitFor();
    await page.getByText('sends through its own relays').waitFor();
    await page.getByText(`Password set (…${PASSWORD.slice(-4)})`).waitFor();
    // Shown under the key and again beside the sender domains (SPEC §21): both are published together.
    const domains = page.locator('.sender-domains');
    await domains.getByText('ui2026._domainkey.site1.example').waitFor();
    await domains.getByText(/v=DKIM1; k=rsa; p=MII/).waitFor();
    await page.locator('fieldset').getByText('ui2026._domainkey.site1.example').waitFor();
    const html = await page.content();
    assert.ok(!html.includes(PASSWORD), 'the page holds no password');
    assert.ok(!html.includes(pem.split('\n')[3]), 'the page holds no private key');
    assert.equal(await page.getByLabel('SMTP URL').first().inputValue(), `smtp://mailer@127.0.0.1:${relay.port}`);
  });

  it('verifies the connection and the DNS record', async () => {
    await page.getByRole('button', { name: 'Verify connection' }).click();
    const out = page.locator('.verify-result');
    await out.getByText(/accepted/).waitFor();
    await out.getByText(/not found: no TXT record at ui2026\._domainkey\.site1\.example/).waitFor();
    await shot('delivery');
  });

  it('sends a test e-mail and shows its attempt with the relay reply', async () => {
    await page.getByLabel('To', { exact: true }).fill('admin@site1.example');
    await page.getByRole('button', { name: 'Send a test e-mail' }).click();
    const link = page.locator('a', { hasText: /^#\d+$/ }).last();
    await page.getByText('Test e-mail queued').waitFor();
    await worker.runOnce();
    assert.equal(relay.accepted.length, 1);
    await link.click();
    await settled(page);
    await page.locator('main h1', { hasText: 'test' }).waitFor();
    await page.getByRole('cell', { name: 'primary relay' }).waitFor();
    await page.getByText('250 Ok: queued as UI1').waitFor();
    await page.getByRole('cell', { name: 'UI1', exact: true }).waitFor();
    await shot('email-attempts');
    assert.deepEqual(problems, []);
  });
});
