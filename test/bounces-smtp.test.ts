// The self-hosted loop (SPEC §12), over real SMTP on both databases: the worker sends through a relay
// with the e-mail's VERP address as MAIL FROM, the relay's DSN comes back to the inbound listener, the
// contact becomes invalid, and the next e-mail to it is suppressed. The listener is no relay.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { startBounceListener, type BounceListener } from '../src/reports/listener.js';
import { loadConfig } from '../src/config.js';
import { start } from '../src/server.js';
import { createSmtpTransport, type Transport } from '../src/delivery/transports.js';
import { verpAddress } from '../src/delivery/verp.js';
import { createWorker } from '../src/delivery/worker.js';
import { recordReport, type BounceContext } from '../src/services/reports.js';
import {
  addContact,
  addEmail,
  emailRow,
  openTestDb,
  seedProject,
  SECRET,
  type TestDb,
} from './fixtures/delivery-support.js';
import { DIALECTS } from './support/harness.js';
import { bounceFixture } from './support/bounces.js';

const DOMAIN = 'bounces.example.test';

interface Relayed {
  mailFrom: string;
  raw: string;
}

async function startRelay() {
  const got: Relayed[] = [];
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        got.push({ mailFrom: from ? from.address : '', raw: Buffer.concat(chunks).toString('utf8') });
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.server.address() as AddressInfo).port;
  return { got, url: `smtp://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Sends raw bytes to the listener as a remote MTA would, with the null sender of a bounce. */
async function deliverReport(port: number, to: string, raw: Buffer) {
  const t = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  try {
    return await t.sendMail({ envelope: { from: 'MAILER-DAEMON@mx.example.net', to: [to] }, raw });
  } finally {
    t.close();
  }
}

async function contact(t: TestDb, id: number) {
  return t.db.db.selectFrom('contacts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function reports(t: TestDb, emailId: number) {
  return t.db.db.selectFrom('email_reports').selectAll().where('email_id', '=', emailId).execute();
}

for (const d of DIALECTS) {
  describe(`bounce loop over SMTP (${d.name})`, { skip: d.skip }, () => {
    let t: TestDb;
    let relay: Awaited<ReturnType<typeof startRelay>>;
    let listener: BounceListener;
    let transport: Transport;
    let seeded: { projectId: number; templateId: number };
    const ctx = (): BounceContext => ({ db: t.db, now: () => Date.now() });

    before(async () => {
      t = await openTestDb(d.name);
      relay = await startRelay();
      transport = createSmtpTransport(relay.url);
      seeded = await seedProject(t.db);
      listener = await startBounceListener({
        host: '127.0.0.1',
        port: 0,
        domain: DOMAIN,
        secret: SECRET,
        maxBytes: 64 * 1024,
        record: (r) => recordReport(ctx(), r),
      });
    });
    after(async () => {
      await listener.close();
      await transport.close();
      await relay.close();
      await t.cleanup();
    });

    const worker = () =>
      createWorker({ db: t.db, transport, publicUrl: 'https://x.test', secret: SECRET, bounceDomain: DOMAIN });

    test('sent with its VERP return path; the DSN makes the contact invalid; the next e-mail is suppressed', async () => {
      const contactId = await addContact(t.db, seeded.projectId, 'gone@example.net');
      const first = await addEmail(t.db, { ...seeded, contactId, to: 'gone@example.net' });
      await worker().runOnce();
      const sent = await emailRow(t.db, first);
      assert.equal(sent.status, 'sent');
      const verp = verpAddress(first, SECRET, DOMAIN);
      assert.equal(relay.got.at(-1)!.mailFrom, verp, 'MAIL FROM is the signed address of this e-mail');

      const dsn = bounceFixture('postfix-user-unknown.eml', {
        VERP: verp,
        RCPT: 'gone@example.net',
        MESSAGE_ID: sent.message_id!,
      });
      const res = await deliverReport(listener.port, verp, dsn);
      assert.deepEqual(res.accepted, [verp]);

      assert.equal((await emailRow(t.db, first)).status, 'bounced');
      const [report] = await reports(t, first);
      assert.equal(report.kind, 'bounced');
      assert.equal(report.source, 'smtp');
      assert.equal(report.status_code, '5.1.1');
      assert.equal(report.matched_by, 'verp');
      assert.match(report.raw, /Recipient address rejected/);
      const c = await contact(t, contactId);
      assert.equal(c.status, 'invalid');
      assert.equal(c.status_reason, 'hard_bounce');
      assert.equal(Number(c.status_email_id), first);
      assert.equal(Number(c.status_report_id), report.id);
      const chronology = await t.db.db.selectFrom('events').selectAll().where('endpoint', '=', 'report').execute();
      assert.ok(chronology.some((e) => e.event_type === 'report.bounced' && e.email === 'gone@example.net'));

      // The same DSN again (the MTA retried after a lost 250): stored once, nothing changes twice.
      await deliverReport(listener.port, verp, dsn);
      assert.equal((await reports(t, first)).length, 1);

      const relayed = relay.got.length;
      const second = await addEmail(t.db, { ...seeded, contactId, to: 'gone@example.net' });
      await worker().runOnce();
      assert.equal((await emailRow(t.db, second)).status, 'suppressed');
      assert.equal(relay.got.length, relayed, 'nothing more went to the relay');
    });

    test('an ARF complaint marks the e-mail complained and unsubscribes the contact', async () => {
      const contactId = await addContact(t.db, seeded.projectId, 'angry@example.net');
      const id = await addEmail(t.db, { ...seeded, contactId, to: 'angry@example.net', kind: 'campaign' });
      await worker().runOnce();
      const verp = verpAddress(id, SECRET, DOMAIN);
      const arf = bounceFixture('rfc5965-arf.eml', {
        VERP: verp,
        RCPT: 'angry@example.net',
        MESSAGE_ID: (await emailRow(t.db, id)).message_id!,
      });
      await deliverReport(listener.port, verp, arf);
      assert.equal((await emailRow(t.db, id)).status, 'complained');
      const c = await contact(t, contactId);
      assert.equal(c.status, 'unsubscribed');
      assert.equal(c.status_reason, 'complaint');
    });

    test('three soft bounces within the window make the address invalid, two do not', async () => {
      const contactId = await addContact(t.db, seeded.projectId, 'full@example.net');
      for (let i = 1; i <= 3; i++) {
        const id = await addEmail(t.db, { ...seeded, contactId, to: 'full@example.net' });
        await worker().runOnce();
        const verp = verpAddress(id, SECRET, DOMAIN);
        const raw = bounceFixture('exim-mailbox-full.eml', {
          VERP: verp,
          RCPT: 'full@example.net',
          MESSAGE_ID: (await emailRow(t.db, id)).message_id!,
        });
        await deliverReport(listener.port, verp, raw);
        assert.equal((await emailRow(t.db, id)).status, 'soft_bounced');
        const c = await contact(t, contactId);
        assert.equal(c.status, i < 3 ? 'active' : 'invalid', `after ${i} soft bounces`);
        if (i === 3) assert.equal(c.status_reason, 'soft_bounces');
      }
    });

    test('no relay: unsigned, forged and foreign recipients are refused at RCPT; oversize at DATA', async () => {
      const id = await addEmail(t.db, {
        ...seeded,
        contactId: await addContact(t.db, seeded.projectId, 'x@example.net'),
        to: 'x@example.net',
      });
      const good = verpAddress(id, SECRET, DOMAIN);
      const forged = good.replace(/-[0-9a-f]{16}@/, '-0123456789abcdef@');
      for (const to of ['someone@example.com', `postmaster@${DOMAIN}`, forged, good.replace(DOMAIN, 'evil.test')]) {
        await assert.rejects(deliverReport(listener.port, to, Buffer.from('Subject: x\r\n\r\nhello\r\n')), (e: any) => {
          assert.equal(e.responseCode, 550, to);
          return true;
        });
      }
      const big = Buffer.from(`Subject: big\r\n\r\n${'x'.repeat(70 * 1024)}\r\n`);
      await assert.rejects(deliverReport(listener.port, good, big), (e: any) => e.responseCode === 552);
      assert.equal((await reports(t, id)).length, 0, 'nothing was stored');
    });

    test('a malformed DSN is kept as an unparsed report with its reason, and changes nothing', async () => {
      const contactId = await addContact(t.db, seeded.projectId, 'odd@example.net');
      const id = await addEmail(t.db, { ...seeded, contactId, to: 'odd@example.net' });
      await worker().runOnce();
      const verp = verpAddress(id, SECRET, DOMAIN);
      await deliverReport(listener.port, verp, bounceFixture('malformed-report.eml', { VERP: verp }));
      const [r] = await reports(t, id);
      assert.equal(r.kind, 'unparsed');
      assert.match(r.diagnostic!, /no per-recipient fields/);
      assert.equal((await emailRow(t.db, id)).status, 'sent');
      assert.equal((await contact(t, contactId)).status, 'active');
    });

    test('a report with a NUL byte is stored, not refused with 451 (PostgreSQL refuses U+0000 in text)', async () => {
      const contactId = await addContact(t.db, seeded.projectId, 'nul@example.net');
      const id = await addEmail(t.db, { ...seeded, contactId, to: 'nul@example.net' });
      await worker().runOnce();
      const verp = verpAddress(id, SECRET, DOMAIN);
      const raw = bounceFixture('malformed-report.eml', { VERP: verp });
      await deliverReport(listener.port, verp, Buffer.concat([raw, Buffer.from('\r\nbroken\u0000tail\r\n')]));
      const [r] = await reports(t, id);
      assert.ok(r, 'the report was stored');
      assert.ok(!r.raw.includes('\u0000'));
    });

    test('matched by Message-ID without VERP; a report of an unknown message is kept and changes nothing', async () => {
      const contactId = await addContact(t.db, seeded.projectId, 'mid@example.net');
      const id = await addEmail(t.db, { ...seeded, contactId, to: 'mid@example.net' });
      await worker().runOnce();
      const mid = (await emailRow(t.db, id)).message_id!;
      const base = {
        source: 'postmark' as const,
        projectId: seeded.projectId,
        statusCode: null,
        diagnostic: null,
        recipient: 'mid@example.net',
        raw: '{}',
      };
      const o = await recordReport(ctx(), { ...base, kind: 'delivered', messageId: mid.slice(1, -1), dedupeKey: 'a' });
      assert.equal(o.emailId, id);
      assert.equal((await emailRow(t.db, id)).status, 'delivered');
      // A soft bounce after delivery does not step back.
      await recordReport(ctx(), { ...base, kind: 'soft_bounced', messageId: mid, dedupeKey: 'b' });
      assert.equal((await emailRow(t.db, id)).status, 'delivered');
      const unknown = await recordReport(ctx(), { ...base, kind: 'bounced', messageId: '<nobody@x>', dedupeKey: 'c' });
      assert.equal(unknown.emailId, null);
      assert.ok(unknown.reportId);
      const kept = await t.db.db
        .selectFrom('email_reports')
        .selectAll()
        .where('id', '=', unknown.reportId)
        .executeTakeFirstOrThrow();
      assert.equal(kept.email_id, null);
      assert.equal(Number(kept.project_id), seeded.projectId);
      assert.equal((await contact(t, contactId)).status, 'active');
    });
  });
}

test('ROLE=bounces runs only the listener, on BOUNCE_SMTP_HOST:BOUNCE_SMTP_PORT, with the installation secret', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'egw-bounces-'));
  const config = loadConfig({
    RELAYS_ALLOW_PRIVATE: 'true',
    DATABASE_URL: `sqlite:${join(dir, 'g.db')}`,
    SECRET_KEY: 'bounce-role-secret-0123456789',
    BOUNCE_DOMAIN: DOMAIN,
    BOUNCE_SMTP_PORT: '0',
    ROLE: 'bounces',
    LOG_LEVEL: 'silent',
  });
  const running = await start(config);
  try {
    assert.equal(running.app, null, 'no HTTP API');
    assert.equal(running.worker, null, 'no delivery worker');
    assert.ok(running.bounces && running.bounces.port > 0);
    const verp = verpAddress(12345, 'bounce-role-secret-0123456789', DOMAIN);
    const res = await deliverReport(running.bounces.port, verp, Buffer.from('Subject: hi\r\n\r\nhello\r\n'));
    assert.deepEqual(res.accepted, [verp]);
    await assert.rejects(deliverReport(running.bounces.port, `b-1-0@${DOMAIN}`, Buffer.from('x')), /550/);
    const kept = await running.deps.db.db.selectFrom('email_reports').selectAll().execute();
    assert.equal(kept.length, 1, 'the report of an unknown e-mail is kept');
    assert.equal(kept[0].kind, 'unparsed');
    assert.equal(kept[0].email_id, null);
  } finally {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
