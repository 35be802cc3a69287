// Topics at send time (SPEC §18) on each database, with the real delivery worker: a cart e-mail carries
// an unsubscribe link bound to its topic and the preference page link, a transactional one neither; the
// worker suppresses an e-mail whose topic the contact may no longer receive; and withdrawals racing with
// the requests that schedule e-mails (real concurrent transactions on PostgreSQL) let none through.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';

const PUBLIC = 'https://mail.example.test';
const OC = '/api/scoped/events/order-created';

for (const d of DIALECTS) {
  describe(`consent at send time [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    const work = () =>
      createWorker({
        db: t.deps.db,
        transport: createCaptureTransport(),
        clock: t.clock,
        publicUrl: PUBLIC,
        secret: 's'.repeat(32),
      }).runOnce();
    const emailsTo = async (to: string) =>
      (await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}&to=${encodeURIComponent(to)}&limit=100`)).body
        .items as any[];

    before(async () => {
      t = await createTestApp(d.name, { PUBLIC_URL: PUBLIC });
      ({ key, site } = await setupProject(t.app));
      for (const name of ['cart_1h', 'contest_tpl'])
        await adminCall(t.app, 'POST', '/api/templates', {
          site_key: site,
          name,
          subject: 's',
          html: '<p><a href="{{ unsubscribe_url }}">u</a> [{{ preferences_url }}]</p>',
          text: 'x',
        });
    });
    after(() => t.close());

    it('a cart e-mail links its topic and the preference page; a transactional one has neither', async () => {
      await keyCall(t.app, key, 'POST', OC, { email: 'links@example.com', order_id: 'L-1', cart_type: 'course' });
      await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
        email: 'links@example.com',
        fields: { event_title: 'A', work_title: 'B' },
      });
      t.clock.advance(61 * 60_000);
      await work();
      const sent = (await emailsTo('links@example.com')).filter((e) => e.status === 'sent');
      assert.equal(sent.length, 2, JSON.stringify(await emailsTo('links@example.com')));
      const detail = async (id: number) => (await adminCall(t.app, 'GET', `/api/admin/emails/${id}`)).body;
      const cart = await detail(sent.find((e) => e.template_key === 'cart_1h').id);
      const header = JSON.stringify(cart);
      assert.match(
        header,
        /List-Unsubscribe[^<]*<https:\/\/mail\.example\.test\/u\/u2\.[0-9a-z]+\.[0-9a-z]+\.cart_reminders\./,
      );
      assert.match(header, /\[https:\/\/mail\.example\.test\/p\/p1\./);
      const tx = JSON.stringify(await detail(sent.find((e) => e.template_key === 'contest_tpl').id));
      assert.ok(!tx.includes('List-Unsubscribe'), 'a transactional e-mail offers no unsubscribing');
      assert.match(tx, /\[\]/, 'no preferences_url in a transactional e-mail');
    });

    it('the worker suppresses an e-mail whose topic now needs consent the contact never gave', async () => {
      await keyCall(t.app, key, 'POST', OC, { email: 'late@example.com', order_id: 'LATE-1', cart_type: 'course' });
      await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/topics`, {
        topics: [{ key: 'cart_reminders', title: 'R', advertising: true, require_consent: true }],
      });
      t.clock.advance(61 * 60_000);
      await work();
      const first = (await emailsTo('late@example.com')).find((e) => e.template_key === 'cart_1h');
      assert.equal(first.status, 'suppressed');
      assert.match(first.last_error, /no consent/);
      await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/topics`, {
        topics: [{ key: 'cart_reminders', title: 'R', advertising: true, require_consent: false }],
      });
    });

    it('withdrawals racing with the scheduling requests: no advertising e-mail goes to anyone who withdrew', async () => {
      const n = 40;
      const people = Array.from({ length: n }, (_, i) => `race${i}@example.com`);
      await Promise.all(
        people.flatMap((email, i) => [
          keyCall(t.app, key, 'POST', OC, { email, order_id: `R-${i}`, cart_type: 'course' }),
          keyCall(t.app, key, 'POST', '/api/scoped/contacts/consent', {
            email,
            topic: 'cart_reminders',
            granted: false,
          }),
        ]),
      );
      t.clock.advance(5 * 24 * 3_600_000);
      while ((await work()) > 0);
      for (const email of people) {
        const mails = (await emailsTo(email)).filter((e) => e.template_key?.startsWith('cart_'));
        assert.equal(mails.length, 3, email);
        assert.ok(
          mails.every((e) => e.status === 'suppressed'),
          `${email}: ${mails.map((m) => m.status).join(',')}`,
        );
      }
    });
  });
}
