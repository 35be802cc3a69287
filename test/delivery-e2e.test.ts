// Delivery through the HTTP layer: the transactional answer tells the truth about the first attempt,
// the cart chain follows the clock and a purchase stops it, and the admin API shows what was sent.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSmtpTransport, type Transport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';
import { rawHeader, startSmtp, type TestSmtp } from './fixtures/delivery-support.js';

const T = '/api/scoped/send/transactional';
const contest = (email: string) => ({
  event_type: 'contest_results',
  email,
  name: 'Anna <b>',
  fields: { event_title: 'Spring', work_title: 'Poem' },
});

function attachWorker(t: TestApp, transport: Transport, opts: { pollMs?: number } = {}): Worker {
  const worker = createWorker({
    db: t.deps.db,
    transport,
    clock: t.clock,
    publicUrl: 'https://gw.example.test',
    secret: 'e2e-secret-0123456789',
    pollMs: opts.pollMs ?? 100,
    retry: { maxAttempts: 2, baseMs: 60_000, capMs: 60_000 },
  });
  t.deps.delivery = { wake: () => worker.wake(), waitForOutcome: (id, ms) => worker.waitForOutcome(id, ms) };
  return worker;
}

for (const d of DIALECTS) {
  describe(`delivery end to end [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let smtp: TestSmtp;
    let transport: Transport;
    let worker: Worker;
    let key: string;
    let site: string;
    before(async () => {
      // The server refuses one recipient permanently and accepts everyone else.
      smtp = await startSmtp({
        onRcpt: (_n, address) =>
          address.startsWith('nobody@') ? { code: 550, message: '5.1.1 No such user' } : undefined,
      });
      t = await createTestApp(d.name, { SEND_WAIT_MS: '3000' });
      ({ key, site } = await setupProject(t.app));
      transport = createSmtpTransport(smtp.url);
      worker = attachWorker(t, transport);
      worker.start();
    });
    after(async () => {
      await worker.stop();
      await transport.close();
      await t.close();
      await smtp.close();
    });

    it('a transactional request waits for the first attempt and reports sent', async () => {
      const r = await keyCall(t.app, key, 'POST', T, contest('anna@example.com'));
      assert.equal(r.status, 200);
      assert.equal(r.body.status, 'sent');
      assert.equal(r.body.sent, 1);
      assert.equal(r.body.failed, 0);
      const mail = smtp.accepted.find((m) => m.messageId && m.to && JSON.stringify(m.to).includes('anna@example.com'));
      assert.ok(mail, 'the SMTP server received the message');
      assert.equal(mail.subject, 'Anna <b>: contest_tpl');
      assert.match(String(mail.html), /Anna &lt;b&gt;/);
      assert.equal(rawHeader(mail, 'List-Unsubscribe'), undefined, 'transactional e-mails carry no List-Unsubscribe');
      const detail = (await adminCall(t.app, 'GET', `/api/admin/emails/${r.body.scheduled_email_id}`)).body;
      assert.equal(detail.status, 'sent');
      assert.equal(detail.subject, 'Anna <b>: contest_tpl');
      assert.match(detail.html, /Anna &lt;b&gt;/);
      assert.equal(`<${mail.messageId!.replace(/^<|>$/g, '')}>`, detail.message_id);
    });

    it('a permanent rejection is reported failed and marks the contact invalid', async () => {
      const r = await keyCall(t.app, key, 'POST', T, contest('nobody@example.com'));
      assert.equal(r.body.status, 'failed');
      assert.equal(r.body.failed, 1);
      const detail = (await adminCall(t.app, 'GET', `/api/admin/emails/${r.body.scheduled_email_id}`)).body;
      assert.match(detail.last_error, /550/);
      // The next e-mail to that address is suppressed, recorded, never sent.
      const again = await keyCall(t.app, key, 'POST', T, {
        ...contest('nobody@example.com'),
        fields: { event_title: 'Autumn', work_title: 'Poem' },
      });
      assert.equal(again.body.status, 'suppressed');
    });

    it('Prefer: respond-async answers queued at once, and the worker sends it anyway', async () => {
      const r = await keyCall(t.app, key, 'POST', T, contest('async@example.com'), { prefer: 'respond-async' });
      assert.equal(r.body.status, 'queued');
      assert.equal(r.headers['preference-applied'], 'respond-async');
      const id = r.body.scheduled_email_id;
      const outcome = await worker.waitForOutcome(id, 3000);
      assert.equal(outcome, 'sent');
      const replay = await keyCall(t.app, key, 'POST', T, {
        ...contest('async@example.com'),
        idempotency_key: 'never-used',
      });
      assert.equal(replay.status, 200);
    });

    it('the cart chain follows the clock; a purchase stops what has not gone', async () => {
      const oc = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: 'cart@example.com',
        name: 'Cart',
        order_id: 'C-1',
        course_name: 'Inclusive education',
        fields: { pay_url: 'https://site.example/pay/C-1' },
      });
      assert.equal(oc.body.scheduled_email_ids.length, 3);
      const [h1, d1, d3] = oc.body.scheduled_email_ids;
      assert.equal(await worker.runOnce(), 0, 'nothing is due yet');
      t.clock.advance(61 * 60_000);
      worker.wake();
      assert.equal(await worker.waitForOutcome(h1, 3000), 'sent');
      const mail = smtp.accepted.find((m) => m.subject === 'Cart: cart_1h');
      assert.ok(mail, 'the 1 h e-mail went');
      assert.match(String(rawHeader(mail, 'List-Unsubscribe')), /^<https:\/\/gw\.example\.test\/u\//);
      assert.equal(rawHeader(mail, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
      const p = await keyCall(t.app, key, 'POST', '/api/scoped/events/purchase', {
        cart_type: 'course',
        email: 'cart@example.com',
        order_id: 'C-1',
      });
      assert.equal(p.body.stopped, 2);
      t.clock.advance(4 * 24 * 60 * 60_000);
      await worker.runOnce();
      for (const id of [d1, d3]) {
        assert.equal((await adminCall(t.app, 'GET', `/api/admin/emails/${id}`)).body.status, 'cancelled');
      }
      assert.equal(
        smtp.accepted.filter((m) => m.subject?.startsWith('Cart: cart_1d') || m.subject?.startsWith('Cart: cart_3d'))
          .length,
        0,
      );
    });

    it('an unsubscribed contact gets no cart e-mails but still gets transactional ones', async () => {
      const oc = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: 'quiet@example.com',
        order_id: 'C-2',
      });
      const contactId = (await adminCall(t.app, 'GET', `/api/admin/emails/${oc.body.scheduled_email_ids[0]}`)).body
        .contact_id;
      await adminCall(t.app, 'POST', `/api/admin/contacts/${contactId}/status`, { status: 'unsubscribed' });
      t.clock.advance(61 * 60_000);
      worker.wake();
      assert.equal(await worker.waitForOutcome(oc.body.scheduled_email_ids[0], 3000), 'suppressed');
      const r = await keyCall(t.app, key, 'POST', T, contest('quiet@example.com'));
      assert.equal(r.body.status, 'sent');
      const list = (
        await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}&to=quiet@example.com&status=suppressed`)
      ).body.items;
      // SPEC §18: unsubscribing suppresses every waiting cart e-mail at once (before, the worker
      // suppressed each when it came due, so only the first was suppressed by now).
      assert.equal(list.length, 3);
    });
  });
}
