// Bounce rules without I/O (SPEC §12): classification from RFC 3463 codes, SMTP codes and wording, the
// e-mail transitions, the contact effects, VERP addresses, and the reading of real report formats.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseReportMessage } from '../src/reports/parseReport.js';
import {
  classifyCodes,
  classifyDsn,
  classifyText,
  contactChange,
  nextEmailStatus,
  rateLevel,
} from '../src/domain/bounces.js';
import { EMAIL_STATUSES, OUTCOME_STATUSES } from '../src/domain/statuses.js';
import { parseVerpAddress, verpAddress } from '../src/delivery/verp.js';
import { bounceFixture } from './support/bounces.js';

test('classification by RFC 3463 status, SMTP code and wording', () => {
  const cases: [string | null, number | null, string, string][] = [
    ['5.1.1', 550, 'User unknown', 'bounced'],
    ['5.1.10', 550, 'null MX', 'bounced'],
    ['5.2.1', 550, 'mailbox disabled', 'bounced'],
    ['5.4.4', null, 'unable to route', 'bounced'],
    ['5.2.2', 552, 'Mailbox full', 'soft_bounced'],
    ['5.7.1', 554, 'rejected as spam', 'soft_bounced'],
    ['5.0.0', 550, 'mailbox unavailable', 'bounced'],
    ['5.0.0', 554, 'transaction failed', 'soft_bounced'],
    ['4.2.2', 452, 'over quota', 'soft_bounced'],
    ['2.0.0', 250, 'ok', 'delivered'],
    [null, 550, 'No such user here', 'bounced'],
    [null, 552, 'Requested mail action aborted: exceeded storage allocation', 'soft_bounced'],
    [null, 421, 'try again later', 'soft_bounced'],
    [null, null, 'Mailbox not found', 'bounced'],
    [null, null, 'mailbox is full', 'soft_bounced'],
    [null, null, 'hello there', 'unparsed'],
  ];
  for (const [status, code, text, kind] of cases) {
    assert.equal(classifyCodes(status, code, text).kind, kind, `${status} ${code} ${text}`);
  }
  assert.equal(classifyDsn('delayed', '4.4.7', null).kind, 'delayed');
  assert.equal(classifyDsn('delivered', '2.0.0', null).kind, 'delivered');
  assert.equal(classifyDsn('failed', null, 'smtp; 550 5.1.1 user unknown').statusCode, '5.1.1');
  assert.equal(classifyDsn('failed', null, null).kind, 'soft_bounced', 'a failure without codes is still a failure');
  assert.equal(classifyText('Delivery has been delayed; will continue trying for 4 days').kind, 'delayed');
  assert.equal(classifyText('Your message could not be delivered. 550 No such user').kind, 'bounced');
  assert.equal(classifyText('I am on vacation until Monday').kind, 'unparsed');
});

test('an e-mail moves only forward: soft → delivered → bounced → complained, never back', () => {
  assert.equal(nextEmailStatus('sent', 'delivered'), 'delivered');
  assert.equal(nextEmailStatus('sent', 'soft_bounced'), 'soft_bounced');
  assert.equal(nextEmailStatus('soft_bounced', 'delivered'), 'delivered');
  assert.equal(nextEmailStatus('soft_bounced', 'bounced'), 'bounced');
  assert.equal(nextEmailStatus('delivered', 'bounced'), 'bounced');
  assert.equal(nextEmailStatus('delivered', 'complained'), 'complained');
  assert.equal(nextEmailStatus('delivered', 'soft_bounced'), null);
  assert.equal(nextEmailStatus('bounced', 'delivered'), null);
  assert.equal(nextEmailStatus('complained', 'bounced'), null);
  assert.equal(nextEmailStatus('sent', 'delayed'), null);
  assert.equal(nextEmailStatus('sent', 'unparsed'), null);
  // Nothing that has not been accepted by the relay gets an outcome.
  for (const s of EMAIL_STATUSES.filter((x) => x !== 'sent' && !(OUTCOME_STATUSES as readonly string[]).includes(x)))
    for (const k of OUTCOME_STATUSES) assert.equal(nextEmailStatus(s, k), null, `${s} + ${k}`);
});

test('contact effects: hard → invalid, complaint → unsubscribed, N soft in the window → invalid', () => {
  assert.deepEqual(contactChange('bounced', 'active', 0)?.status, 'invalid');
  assert.equal(contactChange('bounced', 'active', 0)?.reason, 'hard_bounce');
  assert.equal(contactChange('bounced', 'admin_blocked', 0), null, 'admin_blocked is stronger');
  assert.equal(contactChange('complained', 'active', 0)?.status, 'unsubscribed');
  assert.equal(contactChange('complained', 'invalid', 0), null);
  assert.equal(contactChange('soft_bounced', 'active', 2), null);
  assert.equal(contactChange('soft_bounced', 'active', 3)?.reason, 'soft_bounces');
  assert.equal(contactChange('soft_bounced', 'active', 4, { limit: 5, windowDays: 7 }), null);
  assert.equal(contactChange('delivered', 'active', 0), null);
});

test("rates against the providers' limits: 2 % bounces or 0.1 % complaints warn, 0.3 % complaints stop", () => {
  assert.equal(rateLevel({ sent: 0, bounced: 0, complained: 0 }), 'ok');
  assert.equal(rateLevel({ sent: 1000, bounced: 20, complained: 1 }), 'ok');
  assert.equal(rateLevel({ sent: 1000, bounced: 21, complained: 0 }), 'warning');
  assert.equal(rateLevel({ sent: 1000, bounced: 0, complained: 2 }), 'warning');
  assert.equal(rateLevel({ sent: 1000, bounced: 0, complained: 3 }), 'warning');
  assert.equal(rateLevel({ sent: 1000, bounced: 0, complained: 4 }), 'stop');
});

test('VERP addresses: signed per e-mail, of the bounce domain only', () => {
  const a = verpAddress(42, 'secret', 'Bounces.Example.org');
  assert.match(a, /^b-42-[0-9a-f]{16}@bounces\.example\.org$/);
  assert.equal(parseVerpAddress(a, 'secret', 'bounces.example.org'), 42);
  assert.equal(parseVerpAddress(a.toUpperCase(), 'secret', 'bounces.example.org'), 42, 'case-insensitive');
  assert.equal(parseVerpAddress(a, 'other-secret', 'bounces.example.org'), null);
  assert.equal(parseVerpAddress(a.replace('b-42-', 'b-43-'), 'secret', 'bounces.example.org'), null);
  assert.equal(parseVerpAddress(a.replace('example.org', 'example.com'), 'secret', 'bounces.example.org'), null);
  assert.equal(parseVerpAddress('postmaster@bounces.example.org', 'secret', 'bounces.example.org'), null);
});

test('reading real report formats: RFC 3464, Postfix, RFC 5965 ARF, qmail, Exim, a malformed DSN', async () => {
  const vars = { VERP: 'b-1-0000000000000000@bounces.example.org', RCPT: 'anna@example.net', MESSAGE_ID: '<m1@x>' };
  const read = async (name: string) => (await parseReportMessage(bounceFixture(name, vars)))[0];
  assert.deepEqual(await read('postfix-user-unknown.eml'), {
    kind: 'bounced',
    statusCode: '5.1.1',
    diagnostic: '550 5.1.1 <anna@example.net>: Recipient address rejected: User unknown in virtual mailbox table',
    recipient: 'anna@example.net',
    messageId: '<m1@x>',
  });
  const rfc = await read('rfc3464-simple.eml');
  assert.equal(rfc.kind, 'soft_bounced', 'Action: failed with a 4.0.0 status: the address may be fine');
  assert.equal(rfc.statusCode, '4.0.0');
  assert.equal(rfc.messageId, '<m1@x>');
  const arf = await read('rfc5965-arf.eml');
  assert.equal(arf.kind, 'complained');
  assert.equal(arf.recipient, 'anna@example.net');
  assert.equal(arf.messageId, '<m1@x>');
  const qmail = await read('qmail-failure-notice.eml');
  assert.equal(qmail.kind, 'bounced');
  assert.equal(qmail.statusCode, '5.1.1');
  assert.equal(qmail.recipient, 'anna@example.net');
  assert.equal(qmail.messageId, '<m1@x>');
  const exim = await read('exim-mailbox-full.eml');
  assert.equal(exim.kind, 'soft_bounced');
  assert.equal(exim.statusCode, '5.2.2');
  const bad = await read('malformed-report.eml');
  assert.equal(bad.kind, 'unparsed');
  assert.match(bad.diagnostic!, /no per-recipient fields/);
  const garbage = (await parseReportMessage(Buffer.from('\u0000\u0001 not mail at all')))[0];
  assert.equal(garbage.kind, 'unparsed');
});
