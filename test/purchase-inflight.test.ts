// Issue 30, the hand-over made visible with a relay that takes 2 s to answer DATA: the e-mail it holds is
// in flight (handed over), the ones claimed behind it (one send at a time) are not yet. A purchase then
// reports the first as in_flight, and it arrives; it cancels the claimed one, which never does. Every
// other stop (an unsubscribe, an administrator's cancel, a marketing pause) made while e-mails are
// claimed but not handed over is found at hand-over.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { createSmtpTransport, type Transport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { pauseMarketing } from '../src/repos/projects.js';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';
import { until } from './fixtures/delivery-support.js';

const DATA_DELAY_MS = 2000;
const HOUR = 3_600_000;

/** A relay that takes DATA_DELAY_MS to answer each message; notes when DATA began and when it answered. */
async function slowRelay() {
  const messages: { to: string; dataAt: number; acceptedAt: number | null }[] = [];
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onData(stream, session, cb) {
      const m = { to: session.envelope.rcptTo[0].address, dataAt: Date.now(), acceptedAt: null as number | null };
      messages.push(m);
      stream.resume();
      stream.on('end', () =>
        setTimeout(() => {
          m.acceptedAt = Date.now();
          cb(null);
        }, DATA_DELAY_MS),
      );
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    messages,
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

for (const d of DIALECTS) {
  describe(`hand-over checks with a slow relay [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let relay: Awaited<ReturnType<typeof slowRelay>>;
    let transport: Transport;
    let worker: Worker;
    let key: string;

    beforeEach(async () => {
      t = await createTestApp(d.name);
      ({ key } = await setupProject(t.app));
      relay = await slowRelay();
      transport = createSmtpTransport(relay.url);
      // One send at a time: what the relay holds is in flight, the rest of the batch waits claimed.
      worker = createWorker({
        db: t.deps.db,
        transport,
        clock: t.clock,
        publicUrl: 'https://mail.example.test',
        secret: 'test-secret-for-unsubscribe-links-0123456789',
        concurrency: 1,
        relayConcurrency: 1,
        pollMs: 20,
      });
    });
    afterEach(async () => {
      await worker.stop();
      await transport.close();
      await relay.close();
      await t.close();
    });

    const order = (id: string, email: string, k = key) =>
      keyCall(t.app, k, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email,
        order_id: id,
        course_name: 'Inclusive education',
      });
    const emailsOf = async (orderId: string) =>
      t.deps.db.db.selectFrom('scheduled_emails').selectAll().where('order_id', '=', orderId).orderBy('id').execute();

    it('a purchase while the relay holds DATA: that e-mail is in_flight and arrives; the claimed one is cancelled', async () => {
      assert.equal((await order('A-1', 'anna@example.org')).status, 200);
      t.clock.advance(25 * HOUR); // the 1h and 1d steps are due, the 3d one is not
      worker.start();
      await until(async () => relay.messages.length === 1, 10_000, 'the relay to begin DATA of the first e-mail');
      const [first, second, third] = await emailsOf('A-1');
      assert.equal(first.status, 'sending');
      assert.notEqual(first.send_started_at, null, 'handed over');
      assert.equal(second.status, 'sending', 'claimed in the same batch');
      assert.equal(second.send_started_at, null, 'claimed, not handed over');

      const p = await keyCall(t.app, key, 'POST', '/api/scoped/events/purchase', {
        cart_type: 'course',
        email: 'anna@example.org',
        order_id: 'A-1',
      });
      const answeredAt = Date.now();
      assert.equal(p.status, 200, JSON.stringify(p.body));
      assert.equal(p.body.stopped, 2, 'the claimed 1d step and the scheduled 3d step');
      const byId = new Map((p.body.plan as any[]).map((e) => [e.scheduled_email_id, e]));
      assert.deepEqual(byId.get(first.id), {
        scheduled_email_id: first.id,
        template_key: 'cart_1h',
        step: '1h',
        due_at: new Date(Number(first.due_at)).toISOString(),
        status: 'sending',
        reason: 'in_flight',
        send_started_at: new Date(Number(first.send_started_at)).toISOString(),
      });
      for (const e of [second, third]) {
        assert.equal(byId.get(e.id).status, 'cancelled');
        assert.equal(byId.get(e.id).reason, 'cancelled_by_purchase');
        assert.equal(byId.get(e.id).send_started_at, undefined);
      }

      // The in-flight e-mail arrives (after the answer: the relay was still in DATA); the other never does.
      await until(async () => (await emailsOf('A-1'))[0].status === 'sent', 10_000, 'the in-flight e-mail to be sent');
      assert.equal(relay.messages.length, 1);
      assert.ok(relay.messages[0].acceptedAt! > answeredAt, 'it arrived after the purchase was answered');
      await new Promise((r) => setTimeout(r, 300)); // the worker's hand-over of the 1d step
      assert.equal(relay.messages.length, 1, 'the cancelled e-mail never reached the relay');
      const after = await emailsOf('A-1');
      assert.deepEqual(
        after.map((e) => e.status),
        ['sent', 'cancelled', 'cancelled'],
      );

      // The record says so: the admin detail and the scoped read.
      const detail = await adminCall(t.app, 'GET', `/api/admin/emails/${first.id}`);
      assert.equal(detail.status, 200);
      assert.equal(detail.body.status, 'sent');
      assert.equal(detail.body.reason, 'in_flight');
      assert.equal(detail.body.send_started_at, new Date(Number(first.send_started_at)).toISOString());
      assert.equal(detail.body.in_flight_event_id, p.body.event_id);
      const cancelled = await adminCall(t.app, 'GET', `/api/admin/emails/${second.id}`);
      assert.equal(cancelled.body.reason, 'cancelled_by_purchase');
      assert.equal(cancelled.body.cancelled_by_event_id, p.body.event_id);
      const scoped = await keyCall(t.app, key, 'GET', `/api/scoped/emails/${first.id}`);
      assert.equal(scoped.body.email.reason, 'in_flight');
      // A repeat purchase stops nothing more and still names the e-mail it found in flight, now sent.
      const again = await keyCall(t.app, key, 'POST', '/api/scoped/events/purchase', {
        cart_type: 'course',
        email: 'anna@example.org',
        order_id: 'A-1',
      });
      assert.equal(again.body.stopped, 0);
      assert.deepEqual(again.body.plan, []);
    });

    it('an unsubscribe, an administrator’s cancel and a marketing pause made after the claim are found at hand-over', async () => {
      const other = await setupProject(t.app, { site: 'site2' });
      // The blocker is due first: the relay holds it while the others wait, claimed in the same batch.
      const blocker = await keyCall(
        t.app,
        key,
        'POST',
        '/api/scoped/send/transactional',
        {
          event_type: 'contest_results',
          email: 'blocker@example.org',
          fields: { event_title: 'Spring', work_title: 'Poem', place: '1' },
        },
        { prefer: 'respond-async' },
      );
      assert.equal(blocker.status, 200, JSON.stringify(blocker.body));
      await order('U-1', 'ulyana@example.org');
      await order('C-1', 'cyril@example.org');
      await order('P-1', 'pavel@example.org', other.key);
      t.clock.advance(HOUR + 60_000); // the 1h steps are due
      worker.start();
      await until(async () => relay.messages.length === 1, 10_000, 'the relay to begin DATA of the blocker');
      const [u, c, p] = [(await emailsOf('U-1'))[0], (await emailsOf('C-1'))[0], (await emailsOf('P-1'))[0]];
      for (const e of [u, c, p]) {
        assert.equal(e.status, 'sending', `e-mail ${e.id} claimed`);
        assert.equal(e.send_started_at, null, `e-mail ${e.id} not handed over`);
      }

      const unsub = await adminCall(t.app, 'POST', `/api/admin/contacts/${u.contact_id}/status`, {
        status: 'unsubscribed',
      });
      assert.equal(unsub.status, 200, JSON.stringify(unsub.body));
      const cancel = await adminCall(t.app, 'POST', `/api/admin/emails/${c.id}/cancel`);
      assert.equal(cancel.status, 200, 'a claimed e-mail not yet handed over can still be cancelled');
      await t.deps.db.db
        .transaction()
        .execute((trx) => pauseMarketing(trx, p.project_id, t.clock.now(), 'complaint rate above 0.3 %'));

      await until(
        async () => (await emailsOf('P-1'))[0].status !== 'sending' && (await emailsOf('U-1'))[0].status !== 'sending',
        15_000,
        'the worker to reach the claimed e-mails',
      );
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(
        relay.messages.map((m) => m.to),
        ['blocker@example.org'],
        'only the blocker reached the relay',
      );
      const [u2, c2, p2] = [(await emailsOf('U-1'))[0], (await emailsOf('C-1'))[0], (await emailsOf('P-1'))[0]];
      assert.equal(u2.status, 'suppressed');
      assert.match(u2.last_error!, /unsubscribed/);
      assert.equal(c2.status, 'cancelled');
      assert.equal(c2.last_error, 'cancelled by an administrator');
      assert.equal(p2.status, 'queued', 'held back, not lost');
      assert.match(p2.last_error!, /^paused: /);
      for (const e of [u2, c2, p2]) assert.equal(e.send_started_at, null, `e-mail ${e.id} was never handed over`);
    });
  });
}
