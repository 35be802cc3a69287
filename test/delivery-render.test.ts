// Pure parts of delivery: rendering, template checks, context, error classification, backoff, tokens,
// Message-IDs. No database, no network.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildContext,
  capitalisedOpening,
  checkTemplate,
  renderMessage,
  sanitizeHeaderValue,
} from '../src/delivery/render.js';
import { backoffDelay, classifySmtpError, retryPolicyFromEnv } from '../src/delivery/smtpErrors.js';
import { makeMessageId } from '../src/delivery/transports.js';
import {
  parseUnsubscribeToken,
  signUnsubscribeToken,
  unsubscribeUrl,
  verifyUnsubscribeToken,
} from '../src/delivery/unsubscribe.js';

const tpl = (subject: string, html = '', text = '') => ({ subject, html, text });

describe('renderMessage', () => {
  it('accepts {{ name }} and {{name}} and renders unknown placeholders as empty', () => {
    const out = renderMessage(
      tpl('Hi {{ name }}/{{name}}/[{{ nothing }}]', '<b>{{name}}</b>[{{ missing.deep }}]', '{{ name }}!'),
      { name: 'Anna' },
    );
    assert.equal(out.subject, 'Hi Anna/Anna/[]');
    assert.equal(out.html, '<b>Anna</b>[]');
    assert.equal(out.text, 'Anna!');
  });

  it('escapes every value in the HTML part, but not in the text part', () => {
    const ctx = { name: '<script>alert("x")</script>', course: 'A & B' };
    const out = renderMessage(
      tpl('{{ name }}', '<p>{{ name }}</p><p>{{ course | upcase }}</p>', '{{ name }} {{ course }}'),
      ctx,
    );
    assert.equal(out.html, '<p>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</p><p>A &amp; B</p>');
    assert.equal(out.text, '<script>alert("x")</script> A & B');
  });

  it('does not double-escape `| escape`, and `| raw` is the explicit opt-out', () => {
    const out = renderMessage(tpl('', '{{ v | escape }}|{{ v | escape_once }}|{{ v | raw }}'), { v: '<i>' });
    assert.equal(out.html, '&lt;i&gt;|&lt;i&gt;|<i>');
  });

  it('keeps CR/LF and other control characters out of the subject', () => {
    const out = renderMessage(tpl('Order {{ id }} ready'), { id: '42\r\nBcc: victim@example.org\u0000\t' });
    assert.equal(out.subject, 'Order 42 Bcc: victim@example.org ready');
    assert.ok(!/[\r\n]/.test(out.subject));
    assert.equal(sanitizeHeaderValue('  a\u2028b\n\n c  '), 'a b c');
  });

  it('supports conditions and filters, and reuses parsed templates without mixing contexts', () => {
    const t = tpl('{% if paid %}Paid{% else %}Unpaid{% endif %}: {{ amount | plus: 1 }}');
    assert.equal(renderMessage(t, { paid: true, amount: 1 }).subject, 'Paid: 2');
    assert.equal(renderMessage(t, { paid: false, amount: 5 }).subject, 'Unpaid: 6');
  });

  it('cannot read files from the server', () => {
    assert.throws(() => renderMessage(tpl('{% include "package.json" %}'), {}), /include/);
    assert.deepEqual(checkTemplate(tpl('ok', '{% render "package.json" %}')), {
      part: 'html',
      line: 1,
      column: 1,
      message: 'tag "render" not found',
    });
  });
});

describe('checkTemplate', () => {
  it('accepts a valid template', () => {
    assert.equal(
      checkTemplate(tpl('Hi {{ name }}', '<p>{% if x %}{{ x }}{% endif %}</p>', '{{ name | default: "friend" }}')),
      null,
    );
  });

  it('names the part and the line of the first problem', () => {
    const html = '<p>line 1</p>\n<p>line 2</p>\n{% if paid %}\n<p>never closed</p>';
    const p = checkTemplate(tpl('Subject', html, 'text'));
    assert.equal(p?.part, 'html');
    assert.equal(p?.line, 3);
    assert.match(p.message, /not closed/);

    const s = checkTemplate(tpl('Hello {{ name ', '', ''));
    assert.equal(s?.part, 'subject');
    assert.equal(s?.line, 1);
    assert.match(s.message, /not closed/);

    const t = checkTemplate(tpl('ok', 'ok', 'a\nb\nxx{{ name | no_such_filter }}'));
    assert.deepEqual([t?.part, t?.line, t?.column], ['text', 3, 3]);
    assert.match(t!.message, /no_such_filter/);
  });
});

describe('buildContext', () => {
  it('merges fields, top-level request fields and the service keys, in that order', () => {
    const ctx = buildContext({
      request: {
        event_type: 'course_paid',
        email: 'anna@example.org',
        order_id: 'A-1',
        course_name: 'Top level',
        fields: { course_name: 'From fields', pay_url: 'https://pay', unsubscribe_url: 'https://evil' },
        unsubscribe_url: 'https://evil',
        project_name: 'Spoof',
      },
      contact: { email: 'anna@example.org', name: 'Anna' },
      project: { name: 'Pedsovet', site_key: 'pedsovet' },
      unsubscribeUrl: 'https://mail/u/t',
    });
    assert.equal(ctx.name, 'Anna');
    assert.equal(ctx.email, 'anna@example.org');
    assert.equal(ctx.event_type, 'course_paid');
    assert.equal(ctx.order_id, 'A-1');
    assert.equal(ctx.course_name, 'Top level');
    assert.equal(ctx.pay_url, 'https://pay');
    assert.deepEqual(ctx.fields, {
      course_name: 'From fields',
      pay_url: 'https://pay',
      unsubscribe_url: 'https://evil',
    });
    assert.equal(ctx.unsubscribe_url, 'https://mail/u/t');
    assert.equal(ctx.project_name, 'Pedsovet');
    // The sender's identity for the default layout (issue 39): empty members are null, never missing.
    assert.deepEqual(ctx.project, {
      name: 'Pedsovet',
      site_key: 'pedsovet',
      logo_url: null,
      postal_address: null,
      reply_address: null,
    });
    assert.equal(
      renderMessage(tpl('{{ project.name }}: {{ fields.course_name }}'), ctx).subject,
      'Pedsovet: From fields',
    );
  });

  it('prefers the name sent with the request, then the contact name, and never inherits prototypes', () => {
    assert.equal(buildContext({ request: { name: 'Boris' }, contact: { email: 'b@x', name: 'B' } }).name, 'Boris');
    assert.equal(buildContext({ request: { name: '  ' }, contact: { email: 'b@x', name: 'B' } }).name, 'B');
    assert.equal(buildContext({ request: {}, contact: null }).name, '');
    const evil = JSON.parse('{"fields": {"__proto__": {"polluted": 1}}, "__proto__": {"polluted": 2}}');
    const ctx = buildContext({ request: evil });
    assert.equal((ctx as { polluted?: number }).polluted, undefined);
    assert.equal(({} as { polluted?: number }).polluted, undefined);
  });
});

describe('classifySmtpError', () => {
  const smtp = (response: string, command = 'RCPT TO', code = 'EENVELOPE') =>
    Object.assign(new Error(`failed: ${response}`), {
      code,
      response,
      command,
      responseCode: Number(response.slice(0, 3)),
    });

  it('treats connection errors and 4xx replies as transient', () => {
    for (const code of ['ECONNREFUSED', 'ETIMEDOUT', 'ECONNRESET', 'ESOCKET', 'EDNS', 'ECONNECTION']) {
      const f = classifySmtpError(Object.assign(new Error(`boom ${code}`), { code }));
      assert.equal(f.transient, true, code);
      assert.equal(f.recipientInvalid, false, code);
    }
    const refused = classifySmtpError(
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ESOCKET', originalCode: 'ECONNREFUSED' }),
    );
    assert.equal(refused.message, 'ESOCKET/ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1');
    for (const r of ['421 4.3.2 Service shutting down', '451 4.7.1 Greylisted', '452 4.2.2 Mailbox full']) {
      const f = classifySmtpError(smtp(r));
      assert.deepEqual([f.transient, f.recipientInvalid, f.responseCode], [true, false, Number(r.slice(0, 3))], r);
    }
  });

  it('treats 5xx as permanent and 5.1.x recipient rejections as an invalid address', () => {
    const unknown = classifySmtpError(smtp('550 5.1.1 <nobody@example.org>: Recipient address rejected: User unknown'));
    assert.deepEqual([unknown.transient, unknown.recipientInvalid, unknown.enhanced], [false, true, '5.1.1']);
    assert.equal(unknown.message, 'RCPT TO: 550 5.1.1 <nobody@example.org>: Recipient address rejected: User unknown');
    assert.equal(classifySmtpError(smtp('550 5.1.10 Null MX')).recipientInvalid, true);
    assert.equal(classifySmtpError(smtp('553 5.1.3 Bad destination mailbox address syntax')).recipientInvalid, true);
    // Policy and content rejections are permanent but say nothing about the address.
    const spam = classifySmtpError(smtp('550 5.7.1 Message rejected as spam', 'DATA'));
    assert.deepEqual([spam.transient, spam.recipientInvalid], [false, false]);
    // The sender's address, not the recipient's.
    assert.equal(
      classifySmtpError(smtp('553 5.1.8 Sender domain does not exist', 'MAIL FROM')).recipientInvalid,
      false,
    );
    assert.equal(classifySmtpError(smtp('550 5.1.7 Bad sender', 'RCPT TO')).recipientInvalid, false);
    // No enhanced code: decided by the wording.
    assert.equal(classifySmtpError(smtp('550 No such user here')).recipientInvalid, true);
    assert.equal(classifySmtpError(smtp('550 Relaying denied')).recipientInvalid, false);
    assert.equal(classifySmtpError(smtp('554 Transaction failed', 'DATA')).transient, false);
  });

  it('keeps the server reply on one line', () => {
    const f = classifySmtpError(smtp('550-5.1.1 first line\r\n550 5.1.1 second line'));
    assert.ok(!/[\r\n]/.test(f.message));
    assert.equal(f.recipientInvalid, true);
  });
});

describe('backoff', () => {
  it('grows exponentially with full jitter under the cap', () => {
    const policy = { baseMs: 30_000, capMs: 3_600_000 };
    assert.equal(
      backoffDelay(1, policy, () => 1),
      30_000,
    );
    assert.equal(
      backoffDelay(2, policy, () => 1),
      60_000,
    );
    assert.equal(
      backoffDelay(4, policy, () => 1),
      240_000,
    );
    assert.equal(
      backoffDelay(20, policy, () => 1),
      3_600_000,
    );
    assert.equal(
      backoffDelay(3, policy, () => 0.5),
      60_000,
    );
    assert.equal(
      backoffDelay(3, policy, () => 0),
      1,
    );
    for (let i = 0; i < 200; i++) {
      const d = backoffDelay(5, policy);
      assert.ok(d >= 1 && d <= 480_000);
    }
  });

  it('reads its bounds from the environment', () => {
    // No attempt ceiling by default: a temporary failure is retried until SEND_GIVE_UP_AFTER (SPEC §20).
    assert.deepEqual(retryPolicyFromEnv({}), {
      maxAttempts: null,
      giveUpAfterMs: 72 * 3_600_000,
      baseMs: 30_000,
      capMs: 3_600_000,
    });
    assert.deepEqual(
      retryPolicyFromEnv({
        SEND_MAX_ATTEMPTS: '3',
        SEND_GIVE_UP_AFTER: '90m',
        SEND_BACKOFF_BASE_MS: '10',
        SEND_BACKOFF_CAP_MS: '100',
      }),
      { maxAttempts: 3, giveUpAfterMs: 90 * 60_000, baseMs: 10, capMs: 100 },
    );
    assert.equal(retryPolicyFromEnv({ SEND_GIVE_UP_AFTER: '3d' }).giveUpAfterMs, 3 * 86_400_000);
    assert.equal(retryPolicyFromEnv({ SEND_GIVE_UP_AFTER: '5000' }).giveUpAfterMs, 5000);
    assert.throws(() => retryPolicyFromEnv({ SEND_GIVE_UP_AFTER: '72 hours' }), /SEND_GIVE_UP_AFTER/);
    assert.throws(() => retryPolicyFromEnv({ SEND_GIVE_UP_AFTER: '0h' }), /SEND_GIVE_UP_AFTER/);
    assert.throws(() => retryPolicyFromEnv({ SEND_MAX_ATTEMPTS: 'many' }), /SEND_MAX_ATTEMPTS/);
    assert.throws(() => retryPolicyFromEnv({ SEND_MAX_ATTEMPTS: '0' }), /SEND_MAX_ATTEMPTS/);
  });
});

describe('unsubscribe tokens', () => {
  const secret = 'a-secret-of-sufficient-length-for-tests';
  const anna = { id: 7, project_id: 2, email: 'Anna@Example.org' };

  it('round-trips and is bound to contact, project and address', () => {
    const token = signUnsubscribeToken(secret, anna);
    assert.ok(verifyUnsubscribeToken(secret, token, anna));
    assert.ok(
      verifyUnsubscribeToken(secret, token, { ...anna, email: ' anna@example.org ' }),
      'compared as normalised',
    );
    assert.deepEqual(parseUnsubscribeToken(token)?.contactId, 7);
    assert.equal(verifyUnsubscribeToken(secret, token, { ...anna, id: 8 }), false);
    assert.equal(verifyUnsubscribeToken(secret, token, { ...anna, project_id: 3 }), false);
    assert.equal(verifyUnsubscribeToken(secret, token, { ...anna, email: 'boris@example.org' }), false);
    assert.equal(verifyUnsubscribeToken('another-secret', token, anna), false);
  });

  it('rejects edited and malformed tokens', () => {
    const token = signUnsubscribeToken(secret, anna);
    const parts = token.split('.');
    const other = { id: 8, project_id: 2, email: 'boris@example.org' };
    const edited = [parts[0], (8).toString(36), parts[2], parts[3]].join('.');
    assert.equal(verifyUnsubscribeToken(secret, edited, other), false);
    const flipped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    assert.equal(verifyUnsubscribeToken(secret, flipped, anna), false);
    for (const bad of ['', 'u1', 'u1.7.2', 'u1.7.2.short', `u2.${parts.slice(1).join('.')}`, `${token}x`]) {
      assert.equal(parseUnsubscribeToken(bad), null, bad);
      assert.equal(verifyUnsubscribeToken(secret, bad, anna), false, bad);
    }
  });

  it('builds the link under the public URL', () => {
    const url = unsubscribeUrl('https://mail.example.org/', secret, anna);
    assert.match(url, /^https:\/\/mail\.example\.org\/u\/u1\.7\.2\.[A-Za-z0-9_-]{22}$/);
  });
});

describe('makeMessageId', () => {
  it('is stable per e-mail and safe as a header', () => {
    const project = { site_key: 'ped sovet/<x>', from_email: 'NoReply@Pedsovet.Example' };
    const a = makeMessageId(12, project, 's1');
    assert.equal(a, makeMessageId(12, project, 's1'));
    assert.notEqual(a, makeMessageId(13, project, 's1'));
    assert.notEqual(a, makeMessageId(12, project, 's2'), 'another installation mints other ids');
    assert.match(a, /^<email-12\.ped-sovet-x\.[0-9a-f]{8}@pedsovet\.example>$/);
  });
});

describe('a subject opening with the name (issue 37)', () => {
  it('starts with a capital letter when the lowercase name opens it, and is left alone otherwise', () => {
    assert.equal(capitalisedOpening('коллега, оплата курса получена', 'коллега'), 'Коллега, оплата курса получена');
    assert.equal(capitalisedOpening('оплата получена, коллега', 'коллега'), 'оплата получена, коллега');
    assert.equal(capitalisedOpening('Анна, оплата получена', 'Анна'), 'Анна, оплата получена');
    assert.equal(capitalisedOpening('iPhone: заказ', ''), 'iPhone: заказ');
  });
});
