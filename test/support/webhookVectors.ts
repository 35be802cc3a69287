// Test vectors for the clients' webhook verifiers, made with the reference implementation of Standard
// Webhooks (the `standardwebhooks` package), so both clients are checked against it rather than against
// themselves. Each vector carries the `now` (Unix seconds) it is verified at, so no test depends on the clock.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export interface WebhookVector {
  name: string;
  /** The secret the site verifies with. */
  secret: string;
  headers: Record<string, string>;
  body: string;
  now: number;
  valid: boolean;
}

const NOW = 1_800_000_000;

export function webhookVectors(): { secret: string; vectors: WebhookVector[] } {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const other = `whsec_${randomBytes(32).toString('base64')}`;
  const reference = new Webhook(secret);
  const body = JSON.stringify({
    type: 'email.bounced',
    timestamp: new Date(NOW * 1000).toISOString(),
    data: {
      site_key: 'demo-courses',
      event_id: 41,
      scheduled_email_id: 42,
      event_type: 'course_paid',
      order_id: '1001',
      idempotency_key: '1001:course_paid',
      email: 'anna@example.com',
      status: 'bounced',
      reason: '550 5.1.1 Почтовый ящик не существует',
      template_key: 'course_payment_success',
      step: null,
      sequence: 311,
    },
  });
  const signed = (id: string, at: number, payload = body, with_ = reference) => ({
    'webhook-id': id,
    'webhook-timestamp': String(at),
    'webhook-signature': with_.sign(id, new Date(at * 1000), payload),
  });
  const good = signed('msg_good', NOW);
  const vectors: WebhookVector[] = [
    { name: 'valid', secret, headers: good, body, now: NOW, valid: true },
    { name: 'valid, 4 minutes old', secret, headers: signed('msg_old_ok', NOW - 240), body, now: NOW, valid: true },
    {
      name: 'valid, secret without the whsec_ prefix',
      secret: secret.slice('whsec_'.length),
      headers: good,
      body,
      now: NOW,
      valid: true,
    },
    {
      name: 'valid among several signatures (secret rotation)',
      secret,
      headers: {
        ...good,
        'webhook-signature': `${signed('msg_good', NOW, body, new Webhook(other))['webhook-signature']} v2,abc ${good['webhook-signature']}`,
      },
      body,
      now: NOW,
      valid: true,
    },
    {
      name: 'wrong secret',
      secret,
      headers: signed('msg_other', NOW, body, new Webhook(other)),
      body,
      now: NOW,
      valid: false,
    },
    {
      name: 'tampered body',
      secret,
      headers: good,
      body: body.replace('"order_id":"1001"', '"order_id":"1002"'),
      now: NOW,
      valid: false,
    },
    {
      name: 'another webhook-id',
      secret,
      headers: { ...good, 'webhook-id': 'msg_evil' },
      body,
      now: NOW,
      valid: false,
    },
    { name: 'timestamp 10 minutes old', secret, headers: signed('msg_old', NOW - 600), body, now: NOW, valid: false },
    {
      name: 'timestamp 10 minutes ahead',
      secret,
      headers: signed('msg_future', NOW + 600),
      body,
      now: NOW,
      valid: false,
    },
    {
      name: 'right signature under another version',
      secret,
      headers: { ...good, 'webhook-signature': good['webhook-signature'].replace(/^v1,/, 'v2,') },
      body,
      now: NOW,
      valid: false,
    },
    {
      name: 'no signature header',
      secret,
      headers: { 'webhook-id': good['webhook-id'], 'webhook-timestamp': good['webhook-timestamp'] },
      body,
      now: NOW,
      valid: false,
    },
  ];
  return { secret, vectors };
}
