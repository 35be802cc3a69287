// Provider webhooks (SPEC §12) through the real HTTP layer on both databases: each provider's documented
// sample payloads, signed with keys the test makes (SNS: a certificate of its own, served on an allowed
// SNS host name through the injected fetcher), and tampered or unsigned copies, which are 401 and change
// nothing. No body makes a 500.
import assert from 'node:assert/strict';
import { createHash, createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { snsStringToSign } from '../src/reports/providers/ses.js';
import { emailForReportById } from '../src/repos/reports.js';
import { addContact, addEmail, emailRow, seedProject } from './fixtures/delivery-support.js';
import { adminCall, createTestApp, DIALECTS, rawCall, type TestApp } from './support/harness.js';

const CERT = readFileSync(new URL('./fixtures/sns/test-signing-cert.pem', import.meta.url), 'utf8');
const SNS_KEY = readFileSync(new URL('./fixtures/sns/test-signing-key.pem', import.meta.url), 'utf8');
const CERT_URL = 'https://sns.eu-central-1.amazonaws.com/SimpleNotificationService-test.pem';
const TOPIC = 'arn:aws:sns:eu-central-1:123456789012:ses-bounces';
const sendgridKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const CREDS = {
  ses: { topic_arn: TOPIC },
  postmark: { username: 'pm-hook', password: 'pm-secret-1234' },
  sendgrid: { public_key: sendgridKeys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64') },
  mailgun: { signing_key: 'key-mailgun-signing-0123456789' },
  unisender_go: { api_key: 'unisender-api-key-0123456789' },
} as Record<string, Record<string, string>>;

function snsEnvelope(type: string, message: string, extra: Record<string, string> = {}, certUrl = CERT_URL) {
  const m: Record<string, string> = {
    Type: type,
    MessageId: `sns-${Math.random().toString(36).slice(2)}`,
    TopicArn: TOPIC,
    Message: message,
    Timestamp: '2026-11-22T10:00:00.000Z',
    SignatureVersion: '1',
    SigningCertURL: certUrl,
    ...extra,
  };
  m.Signature = sign('RSA-SHA1', Buffer.from(snsStringToSign(m)), SNS_KEY).toString('base64');
  return m;
}

function sesMail(messageId: string, to: string) {
  return {
    timestamp: '2016-01-27T14:59:38.237Z',
    source: 'noreply@pedsovet.example',
    messageId: '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000',
    destination: [to],
    headersTruncated: false,
    headers: [{ name: 'Message-ID', value: messageId }],
    commonHeaders: { from: ['Pedsovet <noreply@pedsovet.example>'], to: [to], messageId, subject: 'Hello' },
  };
}

for (const d of DIALECTS) {
  describe(`provider webhooks (${d.name})`, { skip: d.skip }, () => {
    let t: TestApp;
    let seeded: { projectId: number; templateId: number };
    const fetched: string[] = [];
    const providerIds = new Map<string, number>();

    before(async () => {
      t = await createTestApp(
        d.name,
        { WEBHOOKS_ALLOW_PRIVATE: 'true' },
        {
          webhookCredentials: async (_deps, _projectId, provider) => CREDS[provider] ?? null,
          httpGet: async (url) => {
            fetched.push(url);
            if (url === CERT_URL) return CERT;
            return '<ConfirmSubscriptionResponse/>';
          },
          providerIdLookup: async (db, projectId, id) => {
            const email = await emailForReportById(db, providerIds.get(id) ?? 0);
            return email?.project_id === projectId ? email : undefined;
          },
        },
      );
      seeded = await seedProject(t.deps.db);
      // A site endpoint subscribed to the outcomes: their notices are enqueued with the change.
      const hook = await adminCall(t.app, 'POST', '/api/admin/projects/pedsovet/webhooks', {
        url: 'http://127.0.0.1:9/hooks',
        events: ['email.bounced', 'email.complained', 'contact.unsubscribed'],
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
    });
    after(() => t.close());

    /** A sent e-mail to a new contact, as the worker would leave it. */
    async function sentEmail(address: string) {
      const contactId = await addContact(t.deps.db, seeded.projectId, address);
      const id = await addEmail(t.deps.db, { ...seeded, contactId, to: address });
      const messageId = `<email-${id}.pedsovet.test@pedsovet.example>`;
      await t.deps.db.db
        .updateTable('scheduled_emails')
        .set({ status: 'sent', message_id: messageId, sent_at: Date.now() })
        .where('id', '=', id)
        .execute();
      return { id, contactId, messageId };
    }
    const contactRow = (id: number) =>
      t.deps.db.db.selectFrom('contacts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const post = (provider: string, body: string | object, headers: Record<string, string> = {}) =>
      rawCall(
        t.app,
        'POST',
        `/api/webhooks/${provider}/pedsovet`,
        { 'content-type': 'application/json', ...headers },
        typeof body === 'string' ? body : JSON.stringify(body),
      );

    test('SES through SNS: subscription confirmed, bounce and complaint applied, tampering refused', async () => {
      const confirm = snsEnvelope('SubscriptionConfirmation', 'You have chosen to subscribe to the topic', {
        Token: '2336412f37fb687f5d51e6e2425a8a5873',
        SubscribeURL: `https://sns.eu-central-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=2336`,
      });
      const c = await post('ses', confirm, { 'content-type': 'text/plain; charset=UTF-8' });
      assert.equal(c.status, 200, JSON.stringify(c.body));
      assert.equal(c.body.note, 'subscription confirmed');
      assert.ok(fetched.includes(confirm.SubscribeURL), 'the SubscribeURL was visited');

      const e = await sentEmail('jane@example.net');
      const bounce = {
        notificationType: 'Bounce',
        bounce: {
          bounceType: 'Permanent',
          bounceSubType: 'General',
          bouncedRecipients: [
            {
              emailAddress: 'jane@example.net',
              status: '5.1.1',
              action: 'failed',
              diagnosticCode: 'smtp; 550 5.1.1 <jane@example.net>... User',
            },
          ],
          timestamp: '2016-01-27T14:59:38.237Z',
          feedbackId: '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa068a-000000',
        },
        mail: sesMail(e.messageId, 'jane@example.net'),
      };
      const signed = snsEnvelope('Notification', JSON.stringify(bounce));
      const tampered = { ...signed, Message: signed.Message.replace('Permanent', 'Transient') };
      const r0 = await post('ses', tampered, { 'content-type': 'text/plain; charset=UTF-8' });
      assert.equal(r0.status, 401);
      assert.equal(r0.body.detail.error.code, 'unauthorized');
      const foreignCert = snsEnvelope('Notification', JSON.stringify(bounce), {}, 'https://evil.example/cert.pem');
      assert.equal((await post('ses', foreignCert)).status, 401);
      assert.ok(!fetched.includes('https://evil.example/cert.pem'), 'no certificate fetched from another host');
      assert.equal((await emailRow(t.deps.db, e.id)).status, 'sent', 'refused requests changed nothing');

      const r = await post('ses', signed, { 'content-type': 'text/plain; charset=UTF-8' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body, { ok: true, received: 1, stored: 1, duplicates: 0, matched: 1 });
      assert.equal((await emailRow(t.deps.db, e.id)).status, 'bounced');
      assert.equal((await contactRow(e.contactId)).status, 'invalid');
      const replay = await post('ses', signed);
      assert.deepEqual(replay.body, { ok: true, received: 1, stored: 0, duplicates: 1, matched: 1 });

      const e2 = await sentEmail('richard@example.net');
      const complaint = {
        notificationType: 'Complaint',
        complaint: {
          userAgent: 'AnyCompany Feedback Loop (V0.01)',
          complainedRecipients: [{ emailAddress: 'richard@example.net' }],
          complaintFeedbackType: 'abuse',
          timestamp: '2016-01-27T14:59:38.237Z',
          feedbackId: '000001378603177f-18c07c78-fa81-4a58-9dd1-fedc3cb8f49a-000000',
        },
        mail: sesMail(e2.messageId, 'richard@example.net'),
      };
      assert.equal((await post('ses', snsEnvelope('Notification', JSON.stringify(complaint)))).status, 200);
      assert.equal((await emailRow(t.deps.db, e2.id)).status, 'complained');
      const c2 = await contactRow(e2.contactId);
      assert.equal(c2.status, 'unsubscribed');
      assert.equal(c2.status_reason, 'complaint');

      // The site's webhooks: the bounce, the complaint and the unsubscribe it caused, once each.
      const notices = await t.deps.db.db.selectFrom('webhook_deliveries').select(['kind', 'data']).execute();
      const kinds = notices.map((n) => n.kind).sort();
      assert.deepEqual(kinds, ['contact.unsubscribed', 'email.bounced', 'email.complained']);
      const bouncedNotice = JSON.parse(notices.find((n) => n.kind === 'email.bounced')!.data);
      assert.equal(bouncedNotice.scheduled_email_id, e.id);
      assert.equal(bouncedNotice.status, 'bounced');

      // The e-mail's page lists its reports with the raw body.
      const detail = await adminCall(t.app, 'GET', `/api/admin/emails/${e.id}`);
      assert.equal(detail.status, 200);
      assert.equal(detail.body.reports.length, 1);
      assert.equal(detail.body.reports[0].source, 'ses');
      assert.equal(detail.body.reports[0].kind, 'bounced');
      assert.equal(detail.body.reports[0].status_code, '5.1.1');
      assert.match(detail.body.reports[0].raw, /SigningCertURL/);

      // The contact's page says what set its status; the chronology and /metrics list the reports.
      const page = await adminCall(t.app, 'GET', `/api/admin/contacts/${e.contactId}`);
      assert.equal(page.status, 200);
      assert.deepEqual(
        { ...page.body.contact.status_cause, at: undefined },
        { reason: 'hard_bounce', email_id: e.id, report_id: detail.body.reports[0].id, at: undefined },
      );
      const events = await adminCall(t.app, 'GET', '/api/admin/external-events?site_key=pedsovet&endpoint=report');
      assert.equal(events.status, 200);
      const bounced = events.body.items.find((x: any) => x.event_type === 'report.bounced');
      assert.equal(bounced.email, 'jane@example.net');
      assert.equal(bounced.effects.scheduled_email_id, e.id);
      const metrics = await rawCall(t.app, 'GET', '/metrics', {});
      assert.match(metrics.body, /egw_email_reports_total\{source="ses",kind="bounced"\} 1/);
      assert.match(metrics.body, /egw_email_reports_total\{source="ses",kind="complained"\} 1/);

      // The dashboard's rates: one hard bounce and one complaint out of the two sent e-mails.
      const dash = await adminCall(t.app, 'GET', '/api/admin/dashboard?site_key=pedsovet');
      assert.equal(dash.status, 200);
      // 1 complaint of 2 is above the stop level: the project's campaigns and cart chains paused.
      const paused = dash.body.deliverability[0]?.marketing_paused_at;
      assert.equal(typeof paused, 'string');
      assert.deepEqual(dash.body.deliverability, [
        {
          site_key: 'pedsovet',
          marketing_paused_at: paused,
          marketing_paused_reason: 'complaint rate above 0.3 %',
          days7: { sent: 2, bounced: 1, complained: 1, bounce_rate: 0.5, complaint_rate: 0.5, level: 'stop' },
          days30: { sent: 2, bounced: 1, complained: 1, bounce_rate: 0.5, complaint_rate: 0.5, level: 'stop' },
        },
      ]);
    });

    test('the SNS string to sign is the documented one', () => {
      const s = snsStringToSign({ Type: 'Notification', Message: 'm', MessageId: 'i', Timestamp: 't', TopicArn: 'a' });
      assert.equal(s, 'Message\nm\nMessageId\ni\nTimestamp\nt\nTopicArn\na\nType\nNotification\n');
    });

    test('Postmark: basic auth; bounce, spam complaint and delivery samples', async () => {
      const auth = { authorization: `Basic ${Buffer.from('pm-hook:pm-secret-1234').toString('base64')}` };
      const e = await sentEmail('john@example.net');
      providerIds.set('883953f4-6105-42a2-a16a-77a8eac79483', e.id);
      const bounce = {
        RecordType: 'Bounce',
        MessageStream: 'outbound',
        ID: 4323372036,
        Type: 'HardBounce',
        TypeCode: 1,
        Name: 'Hard bounce',
        MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
        Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
        Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
        Email: 'john@example.net',
        From: 'noreply@pedsovet.example',
        BouncedAt: '2019-11-05T16:33:54.9070259Z',
        Inactive: true,
      };
      for (const bad of [
        {} as Record<string, string>,
        { authorization: `Basic ${Buffer.from('pm-hook:wrong').toString('base64')}` },
        { authorization: 'Bearer pm-secret-1234' },
      ]) {
        assert.equal((await post('postmark', bounce, bad)).status, 401);
      }
      assert.equal((await emailRow(t.deps.db, e.id)).status, 'sent');
      const r = await post('postmark', bounce, auth);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.matched, 1);
      assert.equal((await emailRow(t.deps.db, e.id)).status, 'bounced');
      assert.equal((await contactRow(e.contactId)).status, 'invalid');

      const e2 = await sentEmail('kate@example.net');
      providerIds.set('00000000-0000-0000-0000-000000000002', e2.id);
      const delivery = {
        RecordType: 'Delivery',
        ServerID: 23,
        MessageStream: 'outbound',
        MessageID: '00000000-0000-0000-0000-000000000002',
        Recipient: 'kate@example.net',
        DeliveredAt: '2019-11-05T16:33:54.9070259Z',
        Details: 'Test delivery webhook details',
      };
      assert.equal((await post('postmark', delivery, auth)).status, 200);
      assert.equal((await emailRow(t.deps.db, e2.id)).status, 'delivered');
      const spam = {
        RecordType: 'SpamComplaint',
        ID: 42,
        Type: 'SpamComplaint',
        TypeCode: 512,
        MessageID: '00000000-0000-0000-0000-000000000002',
        Details: 'Test spam complaint details',
        Email: 'kate@example.net',
        BouncedAt: '2019-11-05T16:33:54.9070259Z',
      };
      assert.equal((await post('postmark', spam, auth)).status, 200);
      assert.equal((await emailRow(t.deps.db, e2.id)).status, 'complained');
      assert.equal((await contactRow(e2.contactId)).status, 'unsubscribed');
    });

    test('SendGrid: ECDSA-signed event webhook; delivered, bounce, spamreport; a tampered batch is refused', async () => {
      const e = await sentEmail('example1@example.net');
      const e2 = await sentEmail('example2@example.net');
      const events = [
        {
          email: 'example1@example.net',
          timestamp: 1513299569,
          'smtp-id': e.messageId,
          event: 'bounce',
          sg_event_id: 'sg-ev-1',
          sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
          reason: '500 unknown recipient',
          status: '5.0.0',
          type: 'bounce',
        },
        {
          email: 'example2@example.net',
          timestamp: 1513299569,
          'smtp-id': e2.messageId,
          event: 'delivered',
          sg_event_id: 'sg-ev-2',
          sg_message_id: '14c5d75ce93.dfd.64b470.filter0001.16648.5515E0B88.0',
          response: '250 OK',
        },
        { email: 'example2@example.net', timestamp: 1513299569, event: 'open', sg_event_id: 'sg-ev-3' },
      ];
      const body = JSON.stringify(events);
      const ts = String(Math.floor(Date.now() / 1000));
      const sig = sign('sha256', Buffer.from(ts + body), sendgridKeys.privateKey).toString('base64');
      const headers = {
        'x-twilio-email-event-webhook-signature': sig,
        'x-twilio-email-event-webhook-timestamp': ts,
      };
      assert.equal((await post('sendgrid', body.replace('bounce"', 'delivered"'), headers)).status, 401);
      assert.equal(
        (await post('sendgrid', body, { ...headers, 'x-twilio-email-event-webhook-timestamp': '1' })).status,
        401,
      );
      assert.equal((await post('sendgrid', body)).status, 401);
      const r = await post('sendgrid', body, headers);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.received, 2, 'the open event is not a report');
      assert.equal((await emailRow(t.deps.db, e.id)).status, 'bounced');
      assert.equal((await emailRow(t.deps.db, e2.id)).status, 'delivered');
    });

    test('Mailgun: HMAC of timestamp and token; failed permanent and complained', async () => {
      const e = await sentEmail('alice@example.net');
      const signed = (eventData: object) => {
        const timestamp = String(Math.floor(Date.now() / 1000));
        const token = createHash('sha256').update(JSON.stringify(eventData)).digest('hex').slice(0, 50);
        const signature = createHmac('sha256', CREDS.mailgun.signing_key)
          .update(timestamp + token)
          .digest('hex');
        return { signature: { timestamp, token, signature }, 'event-data': eventData };
      };
      const failed = {
        event: 'failed',
        id: 'G9Bn5sl1TC6nu79C8C0bwg',
        timestamp: 1521233123.501324,
        'log-level': 'error',
        severity: 'permanent',
        reason: 'bounce',
        'delivery-status': {
          'attempt-no': 1,
          message: '5.1.1 The email account that you tried to reach does not exist.',
          code: 550,
          description: '',
        },
        message: { headers: { to: 'alice@example.net', 'message-id': e.messageId.slice(1, -1), subject: 'Hello' } },
        recipient: 'alice@example.net',
      };
      const body = signed(failed);
      const wrong = { ...body, signature: { ...body.signature, signature: '0'.repeat(64) } };
      assert.equal((await post('mailgun', wrong)).status, 401);
      assert.equal((await post('mailgun', { 'event-data': failed })).status, 401);
      const r = await post('mailgun', body);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal((await emailRow(t.deps.db, e.id)).status, 'bounced');
      const detail = await adminCall(t.app, 'GET', `/api/admin/emails/${e.id}`);
      assert.equal(detail.body.reports[0].status_code, '5.1.1');
      assert.equal(detail.body.reports[0].matched_by, 'message_id');

      const e2 = await sentEmail('bob@example.net');
      const complained = {
        event: 'complained',
        id: 'ncV2XwymRUKbPek_MIM-Gw',
        timestamp: 1521233123.501324,
        recipient: 'bob@example.net',
        message: { headers: { 'message-id': e2.messageId.slice(1, -1) } },
      };
      assert.equal((await post('mailgun', signed(complained))).status, 200);
      assert.equal((await contactRow(e2.contactId)).status, 'unsubscribed');
    });

    test('Unisender Go: auth is the MD5 of the body with the API key in its place', async () => {
      const e = await sentEmail('recipient.user@example.net');
      providerIds.set('1a3Q2V-0000OZ-S0', e.id);
      const template = JSON.stringify({
        auth: '@@AUTH@@',
        events_by_user: [
          {
            user_id: 456,
            project_id: '6432890213745872',
            project_name: 'MyProject',
            events: [
              {
                event_name: 'transactional_email_status',
                event_data: {
                  job_id: '1a3Q2V-0000OZ-S0',
                  metadata: { key1: 'val1' },
                  email: 'recipient.user@example.net',
                  status: 'hard_bounced',
                  event_time: '2015-11-30 15:09:42',
                  delivery_info: {
                    delivery_status: 'err_user_unknown',
                    destination_response: '550 5.1.1 Unknown user',
                  },
                },
              },
              { event_name: 'transactional_spam_block', event_data: { block_time: '2015-11-30 15:09:42' } },
            ],
          },
        ],
      });
      const auth = createHash('md5').update(template.replace('@@AUTH@@', CREDS.unisender_go.api_key)).digest('hex');
      const body = template.replace('@@AUTH@@', auth);
      assert.equal((await post('unisender_go', body.replace('hard_bounced', 'soft_bounced'))).status, 401);
      assert.equal((await post('unisender_go', template.replace('@@AUTH@@', '0'.repeat(32)))).status, 401);
      const r = await post('unisender_go', body);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.matched, 1);
      assert.equal((await emailRow(t.deps.db, e.id)).status, 'bounced');
      assert.equal((await contactRow(e.contactId)).status, 'invalid');
    });

    test('credentials from the delivery settings; a provider id matched through the attempts log', async () => {
      const real = await createTestApp(d.name);
      try {
        const s = await seedProject(real.deps.db);
        const put = await adminCall(real.app, 'PUT', '/api/admin/projects/pedsovet/delivery', {
          primary: { smtp_url: 'smtp://relay.example:587' },
          webhooks: { postmark: { username: 'pm-real', password: 'pm-real-password-1' } },
        });
        assert.equal(put.status, 200, JSON.stringify(put.body));
        const contactId = await addContact(real.deps.db, s.projectId, 'attempts@example.net');
        const id = await addEmail(real.deps.db, { ...s, contactId, to: 'attempts@example.net' });
        await real.deps.db.db.updateTable('scheduled_emails').set({ status: 'sent' }).where('id', '=', id).execute();
        await real.deps.db.db
          .insertInto('email_attempts')
          .values({
            scheduled_email_id: id,
            attempt: 1,
            transport: 'primary',
            ok: 1,
            reply: '250 Ok 5f1e0b2c-pm',
            queue_id: null,
            provider_message_id: '5f1e0b2c-pm',
            message_id: null,
            at: Date.now(),
          })
          .execute();
        const bounce = {
          RecordType: 'Bounce',
          ID: 7,
          Type: 'HardBounce',
          MessageID: '5f1e0b2c-pm',
          Email: 'attempts@example.net',
        };
        const call = (user: string, pass: string) =>
          rawCall(
            real.app,
            'POST',
            '/api/webhooks/postmark/pedsovet',
            {
              'content-type': 'application/json',
              authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`,
            },
            JSON.stringify(bounce),
          );
        assert.equal((await call('pm-real', 'wrong')).status, 401);
        const r = await call('pm-real', 'pm-real-password-1');
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.matched, 1);
        assert.equal((await emailRow(real.deps.db, id)).status, 'bounced');
        const detail = await adminCall(real.app, 'GET', `/api/admin/emails/${id}`);
        assert.equal(detail.body.reports[0].matched_by, 'provider_id');
      } finally {
        await real.close();
      }
    });

    test('a signed body with U+0000 and huge numbers is stored, not a 500 (PostgreSQL refuses NUL in text)', async () => {
      const auth = {
        authorization: `Basic ${Buffer.from(`${CREDS.postmark.username}:${CREDS.postmark.password}`).toString('base64')}`,
      };
      const r = await post(
        'postmark',
        {
          RecordType: 'Bounce',
          ID: 1e300,
          Type: 'HardBounce\u0000',
          MessageID: 'nul\u0000id',
          Email: 'nul\u0000@example.net',
          Details: 'smtp; 550 5.1.1 \u0000 user unknown',
        },
        auth,
      );
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.stored, 1);
    });

    test('no input makes a 500: garbage, wrong types, unknown provider or site, missing credentials', async () => {
      const bodies = ['', 'not json', '[]', '{}', 'null', '{"a":'.repeat(200), JSON.stringify({ Type: 1 }), '\u0000'];
      for (const provider of ['ses', 'postmark', 'sendgrid', 'mailgun', 'unisender_go']) {
        for (const b of bodies) {
          for (const ct of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
            const r = await rawCall(t.app, 'POST', `/api/webhooks/${provider}/pedsovet`, { 'content-type': ct }, b);
            assert.ok([400, 401].includes(r.status), `${provider} ${ct} ${JSON.stringify(b)}: ${r.status}`);
          }
        }
      }
      assert.equal((await post('nosuch', {})).status, 422, 'an unknown provider is a path parameter outside its list');
      const unknownSite = await rawCall(t.app, 'POST', '/api/webhooks/postmark/nosuch-site', {}, '{}');
      assert.equal(unknownSite.status, 404);
      const none = await createTestApp(d.name);
      try {
        await seedProject(none.deps.db);
        const r = await rawCall(none.app, 'POST', '/api/webhooks/postmark/pedsovet', {}, '{"RecordType":"Bounce"}');
        assert.equal(r.status, 401, 'without configured credentials every request is refused');
      } finally {
        await none.close();
      }
    });
  });
}
