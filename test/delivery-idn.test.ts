// Internationalised addresses through a real SMTP server (smtp-server), once offering SMTPUTF8 and once not,
// every message decoded with mailparser: Cyrillic subjects, display names and bodies arrive exactly. With
// SMTPUTF8 a non-ASCII local part travels as is; without it a Unicode domain goes out in ASCII form and a
// non-ASCII local part ends the e-mail as failed with a reason (no retry, no 500).
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { createSmtpTransport, type Transport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { adminCall, createTestApp, DIALECTS, keyCall, withoutDefaultLayout, type TestApp } from './support/harness.js';
import { bodyOf } from './support/document.js';

const T = '/api/scoped/send/transactional';

interface Relay {
  url: string;
  /** MAIL FROM / RCPT TO lines exactly as the client sent them; `raw` has its header lines unfolded. */
  commands: string[];
  mails: { envelope: { smtpUtf8: boolean }; raw: string; parsed: ParsedMail }[];
  close(): Promise<void>;
}

async function startRelay(smtpUtf8: boolean): Promise<Relay> {
  const commands: string[] = [];
  const mails: Relay['mails'] = [];
  const capture = (...args: unknown[]) => {
    for (const a of args) if (typeof a === 'string' && /^(MAIL FROM|RCPT TO):/i.test(a)) commands.push(a);
  };
  const logger = { info: capture, debug: capture, error() {}, warn() {}, trace() {}, fatal() {}, child: () => logger };
  const server = new SMTPServer({
    logger: logger as never,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    hideSMTPUTF8: !smtpUtf8,
    closeTimeout: 200,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        void simpleParser(raw).then((parsed) => {
          // Header lines unfolded, so a test can match one header on one line.
          const text = raw.toString('utf8').replace(/\r\n[ \t]+/g, ' ');
          mails.push({ envelope: { smtpUtf8: Boolean(session.envelope.smtpUtf8) }, raw: text, parsed });
          cb();
        });
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    commands,
    mails,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const SUBJECT = '{{ name }}, оплата курса «{{ course_name }}» получена';
const HTML = '<p>Здравствуйте, {{ name }}! Курс «{{ course_name }}» оплачен: 2 500,00 ₽.</p>';
const TEXT = 'Здравствуйте, {{ name }}! Курс «{{ course_name }}» оплачен: 2 500,00 ₽.';

for (const d of DIALECTS) {
  for (const smtpUtf8 of [true, false]) {
    describe(
      `delivery to internationalised addresses [${d.name}, relay ${smtpUtf8 ? 'with' : 'without'} SMTPUTF8]`,
      { skip: d.skip },
      () => {
        let t: TestApp;
        let relay: Relay;
        let transport: Transport;
        let worker: Worker;
        const keys: Record<string, string> = {};

        before(async () => {
          relay = await startRelay(smtpUtf8);
          t = await createTestApp(d.name, { SEND_WAIT_MS: '5000' });
          transport = createSmtpTransport(relay.url);
          worker = createWorker({
            db: t.deps.db,
            transport,
            clock: t.clock,
            publicUrl: 'https://gw.example.test',
            secret: 'idn-secret-0123456789',
            pollMs: 50,
            retry: { maxAttempts: 3, baseMs: 60_000, capMs: 60_000 },
          });
          t.deps.delivery = { wake: () => worker.wake(), waitForOutcome: (id, ms) => worker.waitForOutcome(id, ms) };
          worker.start();
          for (const [site, from_email] of [
            ['znanie', 'noreply@знание.рф'],
            ['pochta', 'почта@знание.рф'],
          ]) {
            const ok = async (p: Promise<{ status: number; body: any }>) => {
              const r = await p;
              assert.ok(r.status < 300, JSON.stringify(r.body));
              return r.body;
            };
            await ok(adminCall(t.app, 'POST', '/api/sites', { site_key: site, name: 'Академия «Знание»', from_email }));
            await withoutDefaultLayout(t.app, site);
            await ok(
              adminCall(t.app, 'POST', '/api/templates', {
                site_key: site,
                name: 'paid',
                subject: SUBJECT,
                html: HTML,
                text: TEXT,
              }),
            );
            await ok(
              adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, { routes: { course_paid: 'paid' } }),
            );
            keys[site] = (
              await ok(
                adminCall(t.app, 'POST', '/api/admin/keys', {
                  site_key: site,
                  name: 'k',
                  rights: { permissions: ['transactional_send'], allowed_api_events: ['course_paid'] },
                }),
              )
            ).key;
          }
        });
        after(async () => {
          await worker.stop();
          await transport.close();
          await t.close();
          await relay.close();
        });

        const send = (site: string, email: string, name = 'Иван Петров') =>
          keyCall(t.app, keys[site], 'POST', T, {
            event_type: 'course_paid',
            email,
            name,
            fields: { course_name: 'Педагог дошкольного образования' },
          });
        const row = (id: number) =>
          t.deps.db.db.selectFrom('scheduled_emails').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        const rendered = (s: string) =>
          s.replace('{{ name }}', 'Иван Петров').replace('{{ course_name }}', 'Педагог дошкольного образования');

        it('a Unicode domain with an ASCII local part: sent, in ASCII form on the wire, Cyrillic intact', async () => {
          const before = relay.mails.length;
          const r = await send('znanie', 'ivan@пример.рф');
          assert.equal(r.status, 200, JSON.stringify(r.body));
          assert.equal(r.body.status, 'sent');
          const mail = relay.mails[before];
          assert.ok(relay.commands.includes('MAIL FROM:<noreply@xn--80akefxb.xn--p1ai>'), relay.commands.join('\n'));
          assert.ok(relay.commands.includes('RCPT TO:<ivan@xn--e1afmkfd.xn--p1ai>'));
          assert.match(mail.raw, /^To: .*<ivan@xn--e1afmkfd\.xn--p1ai>/m);
          assert.match(mail.raw, /^From: .*<noreply@xn--80akefxb\.xn--p1ai>/m);
          assert.match(mail.raw, /^Message-ID: <email-\d+\.znanie\.[0-9a-f]{8}@xn--80akefxb\.xn--p1ai>/m);
          assert.equal(mail.parsed.subject, rendered(SUBJECT));
          assert.equal(mail.parsed.from?.value[0].name, 'Академия «Знание»');
          assert.equal(
            mail.parsed.to && !Array.isArray(mail.parsed.to) ? mail.parsed.to.value[0].name : null,
            'Иван Петров',
          );
          assert.equal(mail.parsed.text?.trim(), rendered(TEXT));
          assert.equal(mail.parsed.html && bodyOf(mail.parsed.html), rendered(HTML));
        });

        it('a non-ASCII local part: SMTPUTF8 when offered, else failed with a reason and no retry', async () => {
          const before = relay.mails.length;
          const r = await send('znanie', 'иван@пример.рф', 'Иван');
          assert.equal(r.status, 200, JSON.stringify(r.body));
          const e = await row(r.body.scheduled_email_id);
          if (smtpUtf8) {
            assert.equal(r.body.status, 'sent');
            const mail = relay.mails[before];
            assert.equal(mail.envelope.smtpUtf8, true);
            assert.ok(relay.commands.some((c) => /^MAIL FROM:<noreply@xn--80akefxb\.xn--p1ai> SMTPUTF8$/.test(c)));
            assert.ok(relay.commands.includes('RCPT TO:<иван@пример.рф>'));
            const to = mail.parsed.to && !Array.isArray(mail.parsed.to) ? mail.parsed.to.value[0] : null;
            assert.deepEqual(to, { address: 'иван@пример.рф', name: 'Иван' });
            assert.equal(
              mail.parsed.subject,
              SUBJECT.replace('{{ name }}', 'Иван').replace('{{ course_name }}', 'Педагог дошкольного образования'),
            );
          } else {
            assert.equal(r.body.status, 'failed');
            assert.equal(r.body.failed, 1);
            assert.equal(e.status, 'failed');
            assert.equal(e.attempts, 1);
            assert.match(e.last_error ?? '', /does not offer SMTPUTF8.*иван@пример\.рф.*not ASCII/);
            assert.equal(relay.mails.length, before, 'nothing reached the relay');
            assert.ok(!relay.commands.some((c) => c.includes('иван')), 'the address was never sent without SMTPUTF8');
            const c = await t.deps.db.db
              .selectFrom('contacts')
              .select('status')
              .where('id', '=', e.contact_id)
              .executeTakeFirstOrThrow();
            assert.equal(c.status, 'active', 'the address is not invalid, the relay cannot carry it');
            const detail = await adminCall(t.app, 'GET', `/api/admin/emails/${e.id}`);
            assert.equal(detail.status, 200);
            assert.equal(detail.body.to, 'иван@пример.рф');
          }
        });

        it('a from_email with a non-ASCII local part: the same rule for the sender', async () => {
          const before = relay.mails.length;
          const r = await send('pochta', 'anna@example.com', 'Анна');
          const e = await row(r.body.scheduled_email_id);
          if (smtpUtf8) {
            assert.equal(r.body.status, 'sent');
            assert.ok(relay.commands.some((c) => c.startsWith('MAIL FROM:<почта@знание.рф> SMTPUTF8')));
            assert.equal(relay.mails[before].parsed.from?.value[0].address, 'почта@знание.рф');
            assert.equal(relay.mails[before].parsed.from?.value[0].name, 'Академия «Знание»');
          } else {
            assert.equal(r.body.status, 'failed');
            assert.match(e.last_error ?? '', /sender address почта@знание\.рф \(the project's from_email\)/);
            assert.equal(relay.mails.length, before);
          }
        });
      },
    );
  }
}
