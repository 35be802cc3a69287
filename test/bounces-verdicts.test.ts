// SPEC §19's verdict rules one by one (the wordings the issue names), the report formats real MTAs send
// (a single-block DSN, a boundary that does not match, ISO-2022-JP text, near-ARF and SES complaint
// e-mails, auto-replies), and the listener's guarantees over real SMTP on both databases: a block about
// another recipient changes nothing, an auto-reply changes nothing, and no message is answered 4xx/5xx.
import assert from 'node:assert/strict';
import { after, before, describe, it, test } from 'node:test';
import nodemailer from 'nodemailer';
import { startBounceListener, type BounceListener } from '../src/reports/listener.js';
import { parseReportMessage } from '../src/reports/parseReport.js';
import { verpAddress } from '../src/delivery/verp.js';
import { classifyDsn, classifyText } from '../src/domain/bounces.js';
import { recordReport, type InboundReport } from '../src/services/reports.js';
import { addContact, addEmail, openTestDb, seedProject, SECRET, type TestDb } from './fixtures/delivery-support.js';
import { DIALECTS } from './support/harness.js';
import { crlf, DOMAIN, dsn } from './fixtures/bounces/dsn.js';

test('hard only when the words say the address is gone; every other failure soft (SPEC §19)', () => {
  const cases: [string | null, string | null, string, string][] = [
    // Office 365 and Microsoft name the recipient unknown with vendor codes.
    ['failed', '5.1.351', '550 5.1.351 Remote server returned unknown recipient or mailbox unavailable', 'bounced'],
    ['failed', '5.4.1', '550 5.4.1 <a@x.example>: Recipient address rejected: Access denied', 'bounced'],
    ['failed', '5.5.0', '550 5.5.0 Adresse destinataire invalide. Invalid recipient.', 'bounced'],
    ['failed', '5.0.0', '550 No such domain', 'bounced'],
    ['failed', '5.0.0', '550 Host unknown', 'bounced'],
    // A generic or sender-side code with a policy reason is soft whatever its subject digit says.
    [
      'failed',
      '5.1.0',
      "550 5.1.0 192.0.2.1 is not allowed to send from <x.example> per it's SPF Record",
      'soft_bounced',
    ],
    ['failed', '5.1.1', '550 5.7.1 IP address blacklisted by recipient', 'soft_bounced'],
    [
      'failed',
      '5.2.1',
      '550-5.2.1 The user you are trying to contact is receiving mail at a rate that prevents',
      'soft_bounced',
    ],
    ['failed', '5.1.3', '553 http://www.spamhaus.org/query/bl?ip=192.0.2.222', 'soft_bounced'],
    [
      'failed',
      '5.1.1',
      '550 5.1.1 <a@x.example> - 203.0.113.2 has sent to too many recipients this hour',
      'soft_bounced',
    ],
    ['failed', '5.1.8', '553 5.1.8 Domain of sender address root@host.example does not exist', 'soft_bounced'],
    ['failed', '5.2.2', '552 5.2.2 Mailbox full', 'soft_bounced'],
    ['failed', '5.7.1', '554 5.7.1 Message rejected as spam', 'soft_bounced'],
    // Refused after the message was sent: the server had taken the address.
    ['failed', '5.0.0', '550 Unknown user a@x.example (in reply to end of DATA command)', 'soft_bounced'],
    // A temporary verdict is soft or delayed, whatever the words.
    ['failed', '4.1.1', '450 4.1.1 <a@x.example>: Recipient address rejected: User unknown', 'soft_bounced'],
    ['delayed', '4.4.7', 'Connection timed out', 'delayed'],
    // Nothing but a failure and a generic code: soft.
    ['failed', '5.0.0', '', 'soft_bounced'],
    ['failed', '5.1.1', '', 'bounced'],
  ];
  for (const [action, status, diag, kind] of cases)
    assert.equal(classifyDsn(action, status, diag || null).kind, kind, `${status} ${diag}`);
  // The human-readable part speaks when the block has no words.
  assert.equal(classifyDsn('failed', '5.0.0', null, "the address couldn't be found").kind, 'bounced');
  assert.equal(classifyText('Ваше сообщение не доставлено: пользователь не найден').kind, 'bounced');
  assert.equal(classifyText('This is an automatic reply: out of office').kind, 'unparsed');
  // Exim's words for a null MX (RFC 7505): the domain takes no mail.
  assert.equal(classifyText('550 an MX or SRV record indicated no SMTP service').kind, 'bounced');
});

test('report formats real MTAs send', async () => {
  // Two recipients: each block is a report of its own, marked as one of several.
  const blocks = `Final-Recipient: rfc822; bob@example.net
Action: failed
Status: 5.1.1
Diagnostic-Code: smtp; 550 5.1.1 user unknown

Final-Recipient: rfc822; anna@example.net
Action: failed
Status: 5.2.2
Diagnostic-Code: smtp; 552 5.2.2 mailbox full`;
  const two = await parseReportMessage(crlf(dsn(blocks)));
  assert.deepEqual(
    two.map((r) => [r.recipient, r.kind, r.ofSeveral, r.messageId]),
    [
      ['bob@example.net', 'bounced', true, '<m-1@gw.example>'],
      ['anna@example.net', 'soft_bounced', true, '<m-1@gw.example>'],
    ],
  );
  // AOL writes the next recipient's fields with no blank line between: still two reports.
  const joined = await parseReportMessage(crlf(dsn(blocks.replace('\n\nFinal', '\nFinal'))));
  assert.deepEqual(
    joined.map((r) => [r.recipient, r.kind]),
    two.map((r) => [r.recipient, r.kind]),
  );
  // A single block holding the per-message and the per-recipient fields (McAfee, AOL).
  const single = await parseReportMessage(
    crlf(
      dsn('').replace(
        'Reporting-MTA: dns; mx.example.net\n',
        'Reporting-MTA: dns; mx.example.net\nOriginal-Recipient: <anna@example.net>\nAction: failed\nDiagnostic-Code: smtp; 550 Unknown user anna@example.net\n',
      ),
    ),
  );
  assert.deepEqual([single[0].kind, single[0].recipient], ['bounced', 'anna@example.net']);
  // The body's boundary is not the declared one.
  const mismatched = await parseReportMessage(
    crlf(
      dsn(`Final-Recipient: rfc822; anna@example.net
Action: failed
Status: 5.1.1`).replace('boundary="B1"', 'boundary="B2"'),
    ),
  );
  assert.deepEqual([mismatched[0].kind, mismatched[0].recipient], ['bounced', 'anna@example.net']);
  // One recipient per e-mail is what the gateway sends: a report naming thousands is cut at 50.
  const many = await parseReportMessage(
    crlf(
      dsn(
        Array.from(
          { length: 2000 },
          (_, i) => `Final-Recipient: rfc822; r${i}@example.net\nAction: failed\nStatus: 5.1.1\n`,
        ).join('\n'),
      ),
    ),
  );
  assert.equal(many.length, 50);
  // A Japanese text bounce in ISO-2022-JP without a declared charset: "the user does not exist".
  const jp = Buffer.concat([
    crlf(`From: MAILER-DAEMON@mx.example.jp\nTo: b-1@${DOMAIN}\nSubject: Returned mail\n\nanna@example.jp\n`),
    Buffer.from('\x1b$B%f!<%6$OB8:_$7$^$;$s\x1b(B\r\n', 'latin1'),
  ]);
  assert.equal(
    new TextDecoder('iso-2022-jp').decode(Buffer.from('\x1b$B%f!<%6$OB8:_$7$^$;$s\x1b(B', 'latin1')),
    'ユーザは存在しません',
  );
  const [jpr] = await parseReportMessage(jp);
  assert.deepEqual([jpr.kind, jpr.recipient], ['bounced', 'anna@example.jp']);
});

test('a "user unknown" refused after the message was sent is soft, however the MTA wraps or words it', async () => {
  const block = `Final-Recipient: rfc822; anna@example.net
Action: failed
Status: 5.0.0
Diagnostic-Code: smtp; 550 Unknown user anna@example.net`;
  // Postfix wraps its human-readable line: the stage sits on the next line, the block says nothing of it.
  const postfixSaid = async (stage: string) =>
    (
      await parseReportMessage(
        crlf(
          dsn(
            block,
            `<anna@example.net>: host mx.example.net[192.0.2.1] said:\n    550 Unknown user anna@example.net (in reply to ${stage}\n    command)`,
          ),
        ),
      )
    )[0].kind;
  assert.equal(await postfixSaid('end of DATA'), 'soft_bounced');
  // The same words at RCPT name the address: hard.
  assert.equal(await postfixSaid('RCPT TO'), 'bounced');
  const text = (body: string) =>
    parseReportMessage(
      crlf(`From: postmaster@gw.example.net\nTo: b-1@${DOMAIN}\nSubject: failure notice\n\n${body}\n`),
    );
  // A filtering gateway's report naming the command the reply answered.
  const [gateway] = await text(
    'anna@example.net\n\n-------server message\n550 unknown user <anna@example.net>\n\n-------SMTP command\nDATA\n',
  );
  assert.equal(gateway.kind, 'soft_bounced');
  // ... unless the reply is Postfix's RCPT-stage "Recipient address rejected" (pipelined, logged at DATA).
  const [pipelined] = await text(
    'anna@example.net\n\n-------server message\n550 5.1.1 <anna@example.net>: Recipient address rejected: User unknown in local recipient table\n\n-------SMTP command\nDATA\n',
  );
  assert.equal(pipelined.kind, 'bounced');
  // Exim, wrapped over lines as it writes it.
  const [exim] = await text(
    'The following address(es) failed:\n\n  anna@example.net\n    host mx.example.net [192.0.2.1]\n    SMTP error from remote mail server after end of\n    data: 550 5.1.1 No such user here',
  );
  assert.equal(exim.kind, 'soft_bounced');
});

test('SPEC §22 held-out verdicts: a full mailbox is soft whatever the code, a gone domain is hard whatever the 5.x.x', async () => {
  // Words of a full mailbox or disk decide over the code, in the block or in the report's own text.
  for (const diag of [
    '550 5.1.1 Mailbox full',
    '552 5.1.1 <a@x.example> Not enough disk space',
    '550 5.2.1 user is over quota',
    '550 5.0.0 no space left on device',
    '550 5.1.1 Почтовый ящик переполнен',
  ])
    assert.equal(classifyDsn('failed', '5.1.1', diag).kind, 'soft_bounced', diag);
  // rfc3464-01: the human-readable part says "Not enough disk space", the block 5.1.1 "User Unknown".
  const [full] = await parseReportMessage(
    crlf(
      dsn(
        'Final-Recipient: rfc822; anna@example.net\nAction: failed\nStatus: 5.1.1\nDiagnostic-Code: smtp; 550 5.1.1 <anna@example.net>... User Unknown',
        'Your message to <anna> was automatically rejected:\nNot enough disk space',
      ),
    ),
  );
  assert.equal(full.kind, 'soft_bounced');
  // "domain does not exist" with any permanent code is hard, in the words real MTAs use.
  for (const [status, diag] of [
    ['5.1.2', '550 5.1.2 Domain does not exist'],
    ['5.0.0', '553 example.net does not exist'],
    ['5.4.4', '550 5.4.4 The domain example.net does not exist'],
  ])
    assert.equal(classifyDsn('failed', status, diag).kind, 'bounced', diag);
  const text = (body: string) =>
    parseReportMessage(
      crlf(`From: postmaster@gw.example.net\nTo: b-1@${DOMAIN}\nSubject: failure notice\n\n${body}\n`),
    );
  // lhost-exim-37: the receiver said so after the data; the domain is still gone.
  const [exim] = await text(
    'The following address(es) failed:\n\n  anna@example.net\n    host mx.example.net [192.0.2.1]\n    SMTP error from remote mail server after end of data:\n    553 example.net does not exist',
  );
  assert.equal(exim.kind, 'bounced');
  // A refusal of our MAIL FROM (lhost-exim-51: our sender's domain "does not exist") is not the address.
  const [mailFrom] = await text(
    'The following address(es) failed:\n\n  anna@example.net\n    host mx.example.net [192.0.2.1]\n    SMTP error from remote mail server after MAIL FROM:<b-1@bounces.example.test> SIZE=1022:\n    553 5.1.0 sender bounces.example.test does not exist',
  );
  assert.equal(mailFrom.kind, 'soft_bounced');
  // The sender's domain in the words is ours, not the recipient's.
  assert.equal(classifyDsn('failed', '5.1.0', '550 5.1.0 Sender domain does not exist').kind, 'soft_bounced');
});

test('complaints in near-ARF and Amazon SES e-mail form; auto-replies change nothing', async () => {
  const hotmail = crlf(`From: staff@hotmail.com
Subject: complaint about message from 192.0.2.1
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="F"

--F
Content-Type: message/rfc822

X-HmXmrOriginalRecipient: anna@hotmail.example
From: news@site.example
To: anna@hotmail.example
Message-ID: <m-2@gw.example>
Subject: Hello

Hello
--F--
`);
  const [c] = await parseReportMessage(hotmail);
  assert.deepEqual([c.kind, c.recipient, c.messageId], ['complained', 'anna@hotmail.example', '<m-2@gw.example>']);

  const json = JSON.stringify({
    notificationType: 'Complaint',
    complaint: { complainedRecipients: [{ emailAddress: 'anna@example.net' }], complaintFeedbackType: 'abuse' },
    mail: { messageId: 'ses-1', commonHeaders: { messageId: '<m-3@gw.example>' } },
  });
  // SNS e-mails break long lines the sendmail way: `!`, a line break, a space.
  const ses = crlf(
    `From: no-reply@sns.amazonaws.com\nSubject: AWS Notification Message\nContent-Type: text/plain\n\n${json.slice(0, 60)}!\n ${json.slice(60)}\n\n--\nIf you wish to stop receiving notifications…\n`,
  );
  const [s] = await parseReportMessage(ses);
  assert.deepEqual([s.kind, s.recipient, s.messageId], ['complained', 'anna@example.net', '<m-3@gw.example>']);

  const away = crlf(`From: Anna <anna@example.net>
Subject: Automatic reply: Hello
Auto-Submitted: auto-replied

I am away until Monday.
`);
  const [a] = await parseReportMessage(away);
  assert.equal(a.kind, 'auto_reply');
  // A person writing back to the return path is no bounce, even with a word like "error" in it.
  const person = crlf(
    'From: anna@example.net\nSubject: Re: your order\n\nI got an error when paying, it was rejected.\n',
  );
  assert.equal((await parseReportMessage(person))[0].kind, 'unparsed');
});

for (const d of DIALECTS) {
  describe(`the listener's guarantees over SMTP (${d.name})`, { skip: d.skip }, () => {
    let t: TestDb;
    let listener: BounceListener;
    let seeded: { projectId: number; templateId: number };
    let failNext = false;
    before(async () => {
      t = await openTestDb(d.name);
      seeded = await seedProject(t.db);
      listener = await startBounceListener({
        host: '127.0.0.1',
        port: 0,
        domain: DOMAIN,
        secret: SECRET,
        maxBytes: 256 * 1024,
        record: async (r: InboundReport) => {
          // Stands for a database refusing something in the message as read.
          if (failNext && r.kind !== 'unparsed') throw new Error('value refused');
          return recordReport({ db: t.db, now: () => Date.now() }, r);
        },
      });
    });
    after(async () => {
      await listener.close();
      await t.cleanup();
    });

    async function send(to: string, raw: Buffer) {
      const tr = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true });
      try {
        return await tr.sendMail({ envelope: { from: '', to: [to] }, raw });
      } finally {
        tr.close();
      }
    }
    async function state(emailId: number, contactId: number) {
      const e = await t.db.db
        .selectFrom('scheduled_emails')
        .select('status')
        .where('id', '=', emailId)
        .executeTakeFirstOrThrow();
      const c = await t.db.db
        .selectFrom('contacts')
        .select('status')
        .where('id', '=', contactId)
        .executeTakeFirstOrThrow();
      const reports = await t.db.db
        .selectFrom('email_reports')
        .select(['kind', 'recipient'])
        .where('email_id', '=', emailId)
        .orderBy('id')
        .execute();
      return { email: e.status, contact: c.status, reports };
    }
    async function sentEmail(to: string) {
      const contactId = await addContact(t.db, seeded.projectId, to);
      const emailId = await addEmail(t.db, { ...seeded, contactId, to, status: 'sent' });
      return { emailId, contactId, verp: verpAddress(emailId, SECRET, DOMAIN) };
    }

    it('a block about another recipient is kept on the e-mail and changes nothing; its own block decides', async () => {
      const { emailId, contactId, verp } = await sentEmail('anna@example.net');
      const raw = dsn(`Final-Recipient: rfc822; bob@example.net
Action: failed
Status: 5.1.1

Final-Recipient: rfc822; anna@example.net
Action: failed
Status: 4.2.2
Diagnostic-Code: smtp; 452 4.2.2 mailbox full`);
      const res = await send(verp, crlf(raw));
      assert.match(res.response, /^250/);
      const s = await state(emailId, contactId);
      assert.equal(s.email, 'soft_bounced');
      assert.equal(s.contact, 'active', 'bob being gone says nothing of anna');
      assert.deepEqual(
        s.reports.map((r) => [r.recipient, r.kind]),
        [
          ['bob@example.net', 'bounced'],
          ['anna@example.net', 'soft_bounced'],
        ],
      );
    });

    it('an auto-reply is an auto_reply report that changes nothing', async () => {
      const { emailId, contactId, verp } = await sentEmail('away@example.net');
      await send(
        verp,
        crlf('From: away@example.net\nSubject: Out of office\nAuto-Submitted: auto-replied\n\nBack on Monday.\n'),
      );
      const s = await state(emailId, contactId);
      assert.deepEqual([s.email, s.contact, s.reports.map((r) => r.kind)], ['sent', 'active', ['auto_reply']]);
    });

    it('a message whose reports cannot be stored as read is kept unparsed and answered 250, not 451', async () => {
      const { emailId, contactId, verp } = await sentEmail('odd@example.net');
      failNext = true;
      try {
        const res = await send(
          verp,
          crlf(dsn('Final-Recipient: rfc822; odd@example.net\nAction: failed\nStatus: 5.1.1')),
        );
        assert.match(res.response, /^250/);
      } finally {
        failNext = false;
      }
      const s = await state(emailId, contactId);
      assert.deepEqual([s.email, s.contact, s.reports.map((r) => r.kind)], ['sent', 'active', ['unparsed']]);
      // Garbage too leaves a report and a 250.
      const res = await send(verp, Buffer.from('\u0000\u0001 not mail at all\r\n'));
      assert.match(res.response, /^250/);
      assert.equal((await state(emailId, contactId)).reports.length, 2);
    });
  });
}
