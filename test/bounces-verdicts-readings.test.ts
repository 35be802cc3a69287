// Readings of bounce e-mails that once hid the verdict (issue 24, the corpus's last disagreements): where
// the message itself shows a filter spoke (no address in the reply, a policy code in the reply), whom a
// refused MAIL FROM left unasked, and report shapes mailparser alone does not read. Synthetic messages.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyText } from '../src/domain/bounces.js';
import { parseReportMessage } from '../src/reports/parseReport.js';
import { crlf, DOMAIN, dsn } from './fixtures/bounces/dsn.js';

test('words that leave the address unproven: no address in the reply, a policy code in the reply', async () => {
  const block = (diag: string, status = '5.0.0') =>
    `Final-Recipient: rfc822; anna@example.net\nAction: failed\nStatus: ${status}\nDiagnostic-Code: smtp; ${diag}`;
  const kind = async (diag: string, status?: string, human?: string) =>
    (await parseReportMessage(crlf(dsn(block(diag, status), human))))[0].kind;
  // The address slot of the reply is empty: answered when no recipient was in question (end of data).
  assert.equal(await kind('550 : User unknown'), 'soft_bounced');
  assert.equal(await kind('550: : User unknown'), 'soft_bounced');
  assert.equal(
    await kind('550 5.0.0', '5.0.0', '<anna@example.net>: host mx.example.net said: 550\n    : User unknown'),
    'soft_bounced',
  );
  // The same server naming the address at RCPT: gone.
  assert.equal(await kind('550 <anna@example.net>: User unknown'), 'bounced');
  assert.equal(await kind('550: <anna@example.net>: User unknown'), 'bounced');
  // Security or policy code (RFC 3463 X.7.x) in the receiver's own reply: a filter's refusal.
  assert.equal(await kind('550 5.7.1 550 User Unknown: anna@example.net'), 'soft_bounced');
  // ... not when only the reporting MTA chose it (its Status), nor for Exchange Online's directory words.
  assert.equal(await kind('553 Invalid recipient anna@example.net', '5.7.1'), 'bounced');
  assert.equal(await kind('554 5.7.1 <anna@example.net>: Recipient address rejected: Access denied'), 'bounced');
  // "Service unavailable" is sendmail's generic reply for a failed local delivery: the words before it decide.
  assert.equal(
    classifyText('mail.local: unknown user: anna\n554 <anna@example.net>... Service unavailable').kind,
    'bounced',
  );
});

test('a refused MAIL FROM asked about no recipient, unless the line is our own DNS answer', async () => {
  const reports = await parseReportMessage(
    crlf(`From: MAILER-DAEMON@mx.example.net
To: b-1@${DOMAIN}
Subject: Returned mail: Host unknown

   ----- Transcript of session follows -----
While talking to mx.example.org:
>>> MAIL From:<news@site.example>
<<< 501 <news@site.example>... no access from mail server [192.0.2.55] which is an open relay.
554 <anna@example.org>... 550 Host unknown (Authoritative answer from name server)
554 <bob@example.org>... 550 Host unknown
`),
  );
  assert.deepEqual(
    reports.map((r) => [r.recipient, r.kind]),
    [
      ['anna@example.org', 'bounced'],
      ['bob@example.org', 'soft_bounced'],
    ],
  );
});

test('report shapes that hid the verdict: an unreadable part header, a lost boundary', async () => {
  // A phone gateway's reply whose inner boundary parameter sits on an unindented line (no text for
  // mailparser), sent from an address that is not a daemon's, naming the original sender in its summary.
  const [gateway, ...more] = await parseReportMessage(
    crlf(`From: post_master@sms.example.net
To: b-1@${DOMAIN}
Subject: Re: Your order
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="OUT"

--OUT
Content-Type: multipart/alternative;
boundary="IN"

--IN
Content-Type: text/plain; charset=us-ascii

Error: Invalid user address

Error message below:
550 - Requested action not taken: no such user here

Message details:
  MAIL FROM: news@site.example
  RCPT TO: anna@sms.example.net
  From: news@site.example
--IN--
--OUT--
`),
  );
  assert.deepEqual([gateway.kind, gateway.recipient, more.length], ['bounced', 'anna@sms.example.net', 0]);
  // A report whose declared boundary appears nowhere in its body: read as the text it is.
  const [lost] = await parseReportMessage(
    crlf(`From: MAILER-DAEMON@mx.example.net
To: b-1@${DOMAIN}
Subject: Returned mail: Service unavailable
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="GONE"

   ----- Transcript of session follows -----
mail.local: unknown user: anna
554 <anna@example.net>... Service unavailable

Final-Recipient: RFC822; <anna@example.net>
Action: failed
Status: 5.5.0
`),
  );
  assert.deepEqual([lost.kind, lost.recipient], ['bounced', 'anna@example.net']);
});
