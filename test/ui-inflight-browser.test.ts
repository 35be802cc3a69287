// Issue 30 in the admin UI, in a real browser: a cart e-mail that its order's purchase found already
// handed to the relay says so on its page, in English and in Russian (when it was handed over, and a link
// to the purchase). The state is the one test/purchase-inflight.test.ts produces with a slow relay.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { ADMIN_TOKEN, createTestApp, keyCall, setupProject, type TestApp } from './support/harness.js';
import { CHROMIUM_MISSING, goTo, launchChromium, loginWithToken, openPage } from './support/browser.js';

describe('an in-flight cart e-mail in the admin UI', { skip: CHROMIUM_MISSING }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let emailId = 0;
  let purchaseEvent = 0;

  before(async () => {
    t = await createTestApp('sqlite');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const { key } = await setupProject(t.app);
    const order = { cart_type: 'course', email: 'anna@example.org', order_id: 'UI-30' };
    const created = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', order);
    emailId = created.body.scheduled_email_ids[0];
    // A worker's hand-over, as startSends writes it: claimed and handed to the relay.
    const now = t.clock.now();
    await t.deps.db.db
      .updateTable('scheduled_emails')
      .set({ status: 'sending', locked_by: 'w', locked_until: now + 60_000, send_started_at: now })
      .where('id', '=', emailId)
      .execute();
    const paid = await keyCall(t.app, key, 'POST', '/api/scoped/events/purchase', order);
    assert.equal(paid.body.plan.find((e: any) => e.scheduled_email_id === emailId).reason, 'in_flight');
    purchaseEvent = paid.body.event_id;
    await t.deps.db.db
      .updateTable('scheduled_emails')
      .set({ status: 'sent', sent_at: now + 500 })
      .where('id', '=', emailId)
      .execute();
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const [locale, label, note] of [
    ['en-US', 'In flight at purchase', 'handed to the relay before the purchase'],
    ['ru-RU', 'В пути при оплате', 'передано серверу отправки до оплаты'],
  ] as const) {
    it(`the e-mail's page says it was in flight [${locale}]`, async () => {
      const problems: string[] = [];
      const { page, context } = await openPage(browser, problems, { locale, consoleErrors: true });
      try {
        if (locale === 'en-US') await loginWithToken(page, base);
        else {
          // loginWithToken waits for the English dashboard; the same steps in Russian.
          await page.goto(`${base}/ui/login?via=token`);
          await page.locator('input[name=token]').fill(ADMIN_TOKEN);
          await page.keyboard.press('Enter');
          await page.locator('main h1', { hasText: 'Сводка' }).waitFor();
        }
        await goTo(page, `${base}/ui/emails/${emailId}`);
        const row = page.locator('dl.facts dt', { hasText: label });
        await row.waitFor();
        const value = page.locator('dl.facts dt', { hasText: label }).locator('xpath=following-sibling::dd[1]');
        assert.match(await value.innerText(), new RegExp(note));
        assert.equal(await value.locator('a').getAttribute('href'), `/ui/events/${purchaseEvent}`);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });
  }
});
