// The worker against a real SMTP server (smtp-server), messages parsed back with mailparser: content and
// headers, retries on 4xx and on a dead server, permanent 5xx, and the 5.1.1 invalid-address rule.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createSmtpTransport, type Transport } from '../src/delivery/transports.js';
import { resolveUnsubscribeToken } from '../src/delivery/unsubscribe.js';
import { createWorker, type Worker, type WorkerOptions } from '../src/delivery/worker.js';
import {
  PUBLIC_URL,
  SECRET,
  addContact,
  addEmail,
  freePort,
  contactStatus,
  emailRow,
  openTestDb,
  seedProject,
  startSmtp,
  type Seeded,
  type TestDb,
  type TestSmtp,
  rawHeader,
} from './fixtures/delivery-support.js';

const TEMPLATE = {
  subject: 'Hello {{ name }}: {{ course_name }}',
  html: '<h1>{{ project_name }}</h1><p>Dear {{name}}, your course {{ course_name }} is paid.</p><a href="{{ unsubscribe_url }}">unsubscribe</a>',
  text: 'Dear {{ name }}, your course {{ course_name }} is paid. Order {{ order_id }}.',
};

/** The raw value of a header as received (mailparser folds List-* headers into one parsed object). */
describe('delivery over SMTP', () => {
  let t: TestDb;
  let seeded: Seeded;
  let smtp: TestSmtp | undefined;
  let transport: Transport | undefined;
  let worker: Worker | undefined;

  before(async () => {
    t = await openTestDb('sqlite');
    seeded = await seedProject(t.db, {
      name: 'Pedsovet "Academy"',
      fromEmail: 'noreply@pedsovet.example',
      template: TEMPLATE,
    });
  });
  after(async () => t?.cleanup());
  beforeEach(async () => {
    await worker?.stop();
    await transport?.close();
    await smtp?.close();
    worker = transport = smtp = undefined;
  });
  after(async () => {
    await worker?.stop();
    await transport?.close();
    await smtp?.close();
  });

  const startWorker = (url: string, extra: Partial<WorkerOptions> = {}) => {
    transport = createSmtpTransport(url, { maxConnections: 2, timeoutMs: 5000 });
    worker = createWorker({
      db: t.db,
      transport,
      publicUrl: PUBLIC_URL,
      secret: SECRET,
      pollMs: 50,
      leaseMs: 10_000,
      retry: { maxAttempts: 4, baseMs: 20, capMs: 40 },
      ...extra,
    });
    worker.start();
    return worker;
  };
  let n = 0;
  const contact = (
    status?: 'active' | 'unsubscribed' | 'invalid' | 'admin_blocked',
    name: string | null = 'Anna <Ivanova>',
  ) =>
    addContact(t.db, seeded.projectId, `person${++n}@example.org`, name, status).then((id) => ({
      id,
      email: `person${n}@example.org`,
    }));

  it('sends a transactional e-mail with escaped HTML, both parts, a stable Message-ID and no unsubscribe headers', async () => {
    smtp = await startSmtp();
    const c = await contact();
    const id = await addEmail(t.db, {
      ...seeded,
      contactId: c.id,
      to: c.email,
      toName: 'Anna <Ivanova>',
      context: {
        name: 'Anna\r\nBcc: victim@example.org',
        order_id: 'A-1',
        fields: { course_name: '<script>alert(1)</script>' },
      },
    });
    const w = startWorker(smtp.url);
    assert.equal(await w.waitForOutcome(id, 5000), 'sent');
    assert.equal(smtp.accepted.length, 1);
    const mail = smtp.accepted[0];
    assert.deepEqual(mail.from?.value, [{ address: 'noreply@pedsovet.example', name: 'Pedsovet "Academy"' }]);
    assert.deepEqual(mail.to && !Array.isArray(mail.to) ? mail.to.value : null, [
      { address: c.email, name: 'Anna <Ivanova>' },
    ]);
    assert.equal(mail.subject, 'Hello Anna Bcc: victim@example.org: <script>alert(1)</script>');
    assert.equal(mail.bcc, undefined, 'no header was injected');
    assert.ok(!mail.headers.has('bcc'));
    assert.match(
      String(mail.html),
      /Dear Anna\s+Bcc: victim@example.org, your course &lt;script&gt;alert\(1\)&lt;\/script&gt; is paid/,
    );
    assert.ok(!String(mail.html).includes('<script>'));
    assert.match(String(mail.html), /<h1>Pedsovet &#34;Academy&#34;<\/h1>/);
    assert.match(mail.text ?? '', /your course <script>alert\(1\)<\/script> is paid\. Order A-1\./);
    assert.ok(
      mail.headerLines.some((h) => h.key === 'message-id'),
      'rawHeader sees real headers',
    );
    assert.equal(rawHeader(mail, 'List-Unsubscribe'), undefined);
    assert.equal(rawHeader(mail, 'List-Unsubscribe-Post'), undefined);

    const row = await emailRow(t.db, id);
    assert.deepEqual([row.status, row.attempts, row.last_error], ['sent', 1, null]);
    assert.ok(row.sent_at && Number(row.sent_at) <= Date.now());
    assert.equal(mail.messageId, row.message_id);
    assert.match(row.message_id ?? '', /^<email-\d+\.pedsovet\.[0-9a-f]{8}@pedsovet\.example>$/);
    const rendered = JSON.parse(row.rendered ?? '{}');
    assert.equal(rendered.subject, mail.subject);
    assert.match(rendered.html, /&lt;script&gt;/);
    assert.match(rendered.text, /<script>/);
    assert.equal(rendered.headers['Message-ID'], row.message_id);
    assert.equal(rendered.headers.From, '"Pedsovet Academy" <noreply@pedsovet.example>');
  });

  it('adds working one-click List-Unsubscribe headers to cart e-mails', async () => {
    smtp = await startSmtp();
    const c = await contact();
    const id = await addEmail(t.db, {
      ...seeded,
      contactId: c.id,
      to: c.email,
      kind: 'cart',
      context: { course_name: 'Pedagogy' },
    });
    const w = startWorker(smtp.url);
    assert.equal(await w.waitForOutcome(id, 5000), 'sent');
    const mail = smtp.accepted[0];
    const raw = rawHeader(mail, 'List-Unsubscribe') ?? '';
    const link = /^<(https:\/\/mail\.example\.test\/u\/[^>]+)>$/.exec(raw)?.[1];
    assert.ok(link, `List-Unsubscribe carries the https link: ${raw}`);
    assert.equal(rawHeader(mail, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
    const token = link.split('/u/')[1];
    assert.equal((await resolveUnsubscribeToken(t.db.db, SECRET, token))?.id, c.id);
    assert.ok(String(mail.html).includes(link), 'the same link is available to the template');
    const rendered = JSON.parse((await emailRow(t.db, id)).rendered ?? '{}');
    assert.equal(rendered.headers['List-Unsubscribe'], `<${link}>`);
  });

  it('retries 421 and 451 replies, then sends', async () => {
    smtp = await startSmtp({
      onConnect: (i) => (i === 1 ? { code: 421, message: '4.3.2 Try again later' } : undefined),
      onData: (i) => (i === 1 ? { code: 451, message: '4.7.1 Greylisted, come back later' } : undefined),
    });
    const c = await contact();
    const id = await addEmail(t.db, { ...seeded, contactId: c.id, to: c.email });
    const w = startWorker(smtp.url);
    assert.equal(await w.waitForOutcome(id, 5000), 'queued', 'the first attempt schedules a retry');
    await smtp.waitForReceived(2);
    assert.equal(await w.waitForOutcome(id, 5000), 'sent');
    const row = await emailRow(t.db, id);
    assert.deepEqual([row.status, row.attempts, row.last_error], ['sent', 3, null]);
    assert.equal(smtp.accepted.length, 1);
    assert.equal(smtp.received.length, 2, 'the 451-rejected message and the accepted one');
    assert.equal(smtp.received[0].messageId, smtp.accepted[0].messageId, 'a retry reuses the Message-ID');
  });

  it('fails on 550 5.1.1, keeps the reply, marks the contact invalid and sends it nothing more', async () => {
    smtp = await startSmtp({
      onRcpt: () => ({ code: 550, message: '5.1.1 <nobody@example.org>: Recipient address rejected: User unknown' }),
    });
    const c = await contact();
    const id = await addEmail(t.db, { ...seeded, contactId: c.id, to: c.email });
    const w = startWorker(smtp.url);
    assert.equal(await w.waitForOutcome(id, 5000), 'failed');
    const row = await emailRow(t.db, id);
    assert.equal(row.status, 'failed');
    assert.equal(row.attempts, 1, 'a permanent failure is not retried');
    assert.match(
      row.last_error ?? '',
      /^RCPT TO: 550 5\.1\.1 <nobody@example\.org>: Recipient address rejected: User unknown/,
    );
    assert.equal(await contactStatus(t.db, c.id), 'invalid');

    const next = await addEmail(t.db, { ...seeded, contactId: c.id, to: c.email });
    w.wake();
    assert.equal(await w.waitForOutcome(next, 5000), 'suppressed');
    assert.equal(smtp.received.length, 0);
  });

  it('fails on other 5xx replies without touching the contact', async () => {
    smtp = await startSmtp({ onData: () => ({ code: 554, message: '5.7.1 Message rejected as spam' }) });
    const c = await contact();
    const id = await addEmail(t.db, { ...seeded, contactId: c.id, to: c.email });
    const w = startWorker(smtp.url);
    assert.equal(await w.waitForOutcome(id, 5000), 'failed');
    const row = await emailRow(t.db, id);
    assert.match(row.last_error ?? '', /554 5\.7\.1 Message rejected as spam/);
    assert.equal(row.attempts, 1);
    assert.equal(await contactStatus(t.db, c.id), 'active');
  });

  it('retries a server that is down, then fails after the attempt limit', async () => {
    const port = await freePort();
    const c = await contact();
    const id = await addEmail(t.db, { ...seeded, contactId: c.id, to: c.email });
    const w = startWorker(`smtp://127.0.0.1:${port}`, { retry: { maxAttempts: 3, baseMs: 10, capMs: 20 } });
    assert.equal(await w.waitForOutcome(id, 5000), 'queued');
    const deadline = Date.now() + 5000;
    while ((await emailRow(t.db, id)).status !== 'failed' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const row = await emailRow(t.db, id);
    assert.equal(row.status, 'failed');
    assert.equal(row.attempts, 3);
    assert.match(row.last_error ?? '', /ECONNREFUSED/);
    assert.match(row.last_error ?? '', /gave up after 3 attempts/);
    assert.equal(await contactStatus(t.db, c.id), 'active', 'our outage says nothing about the address');
  });

  it('suppresses at send time: blocked and invalid get nothing, unsubscribed only transactional', async () => {
    smtp = await startSmtp();
    const cases = [];
    for (const status of ['admin_blocked', 'invalid', 'unsubscribed'] as const) {
      const c = await contact();
      // Scheduled while active; the status changes before the e-mails are due.
      const tx = await addEmail(t.db, { ...seeded, contactId: c.id, to: c.email, kind: 'transactional' });
      const cart = await addEmail(t.db, { ...seeded, contactId: c.id, to: c.email, kind: 'cart' });
      const campaign = await addEmail(t.db, { ...seeded, contactId: c.id, to: c.email, kind: 'campaign' });
      await t.db.db.updateTable('contacts').set({ status }).where('id', '=', c.id).execute();
      cases.push({ status, tx, cart, campaign, email: c.email });
    }
    const w = startWorker(smtp.url);
    for (const k of cases) {
      const expectTx = k.status === 'unsubscribed' ? 'sent' : 'suppressed';
      assert.equal(await w.waitForOutcome(k.tx, 5000), expectTx, `${k.status} transactional`);
      assert.equal(await w.waitForOutcome(k.cart, 5000), 'suppressed', `${k.status} cart`);
      assert.equal(await w.waitForOutcome(k.campaign, 5000), 'suppressed', `${k.status} campaign`);
      const row = await emailRow(t.db, k.cart);
      assert.match(row.last_error ?? '', /^suppressed: /);
      assert.equal(row.attempts, 0);
      assert.equal(row.sent_at, null);
    }
    assert.deepEqual(
      smtp.accepted.map((m) => (m.to && !Array.isArray(m.to) ? m.to.value[0].address : '')),
      [cases[2].email],
    );
  });

  it('fails an e-mail whose template no longer renders, without retrying', async () => {
    smtp = await startSmtp();
    const badTemplate = await t.db.db
      .insertInto('templates')
      .values({
        project_id: seeded.projectId,
        name: 'broken',
        subject: '{% if x %}never closed',
        html: '',
        text: '',
        created_at: 0,
        updated_at: 0,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const c = await contact();
    const id = await addEmail(t.db, { ...seeded, templateId: badTemplate.id, contactId: c.id, to: c.email });
    const w = startWorker(smtp.url);
    assert.equal(await w.waitForOutcome(id, 5000), 'failed');
    const row = await emailRow(t.db, id);
    assert.match(row.last_error ?? '', /^template error: .*not closed/);
    assert.equal(row.attempts, 0);
    assert.equal(smtp.received.length, 0);
  });

  it('wakes up for a new due e-mail at once, and otherwise polls within pollMs', async () => {
    smtp = await startSmtp();
    const w = startWorker(smtp.url, { pollMs: 1000 });
    await new Promise((r) => setTimeout(r, 100)); // let the idle worker go to sleep
    const c = await contact();
    const started = Date.now();
    const id = await addEmail(t.db, { ...seeded, contactId: c.id, to: c.email });
    w.wake();
    assert.equal(await w.waitForOutcome(id, 3000), 'sent');
    assert.ok(Date.now() - started < 700, `woken send took ${Date.now() - started} ms`);

    const later = await addEmail(t.db, {
      ...seeded,
      contactId: c.id,
      to: c.email,
      status: 'scheduled',
      dueAt: Date.now() + 300,
    });
    const t0 = Date.now();
    assert.equal(await w.waitForOutcome(later, 3000), 'sent');
    const took = Date.now() - t0;
    assert.ok(took >= 250 && took < 1500, `an e-mail due in 300 ms left after ${took} ms`);
  });

  it('stops gracefully: an in-flight send completes before stop() resolves', async () => {
    let release: (() => void) | undefined;
    const dataSeen = new Promise<void>((resolve) => (release = resolve));
    smtp = await startSmtp({
      onData: () => {
        release?.();
        return undefined;
      },
    });
    const c = await contact();
    const id = await addEmail(t.db, { ...seeded, contactId: c.id, to: c.email });
    const w = startWorker(smtp.url);
    await dataSeen;
    await w.stop();
    assert.equal((await emailRow(t.db, id)).status, 'sent');
    const later = await addEmail(t.db, { ...seeded, contactId: c.id, to: c.email });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await emailRow(t.db, later)).status, 'queued', 'a stopped worker claims nothing');
    await t.db.db.deleteFrom('scheduled_emails').where('id', '=', later).execute();
  });
});
