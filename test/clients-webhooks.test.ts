// The TypeScript client's webhook verifier against the reference implementation of Standard Webhooks
// (`standardwebhooks`): the vectors are made by the reference, the reference is asked to agree with each
// expected outcome, and signatures made by the client are accepted by the reference. (The PHP client's
// verifier runs the same vectors in its PHPUnit suite, through test/clients.test.ts.)
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { WebhookVerificationError, WebhookVerifier, WEBHOOK_EVENT_TYPES } from '../clients/ts/src/index.js';
import { webhookVectors } from './support/webhookVectors.js';
import { WEBHOOK_KINDS } from '../src/domain/statuses.js';

const { secret, vectors } = webhookVectors();

/** Whether the reference accepts a vector, with its clock set to the vector's `now`. */
function referenceAccepts(v: (typeof vectors)[number]): boolean {
  mock.timers.enable({ apis: ['Date'], now: v.now * 1000 });
  try {
    new Webhook(v.secret).verify(v.body, v.headers);
    return true;
  } catch {
    return false;
  } finally {
    mock.timers.reset();
  }
}

describe('TypeScript client: webhook verifier', () => {
  for (const v of vectors) {
    it(`${v.name}: ${v.valid ? 'accepted' : 'refused'}, as the reference does`, () => {
      assert.equal(referenceAccepts(v), v.valid, 'the reference agrees with the expected outcome');
      const verifier = new WebhookVerifier(v.secret);
      if (v.valid) {
        const event = verifier.verify(v.body, v.headers, v.now * 1000);
        assert.equal(event.id, v.headers['webhook-id']);
        assert.deepEqual({ type: event.type, timestamp: event.timestamp, data: event.data }, JSON.parse(v.body));
      } else {
        assert.throws(() => verifier.verify(v.body, v.headers, v.now * 1000), WebhookVerificationError);
      }
    });
  }

  it('lists every kind the gateway sends, email.opened and email.clicked included', () => {
    assert.deepEqual([...WEBHOOK_EVENT_TYPES], [...WEBHOOK_KINDS]);
  });

  it('parses the event: type among the SPEC kinds, ISO timestamp, data; bytes, Headers and a Request work too', async () => {
    const v = vectors.find((x) => x.name === 'valid')!;
    const event = new WebhookVerifier(secret).verify(
      Buffer.from(v.body),
      new Headers(v.headers),
      new Date(v.now * 1000),
    );
    assert.ok((WEBHOOK_EVENT_TYPES as readonly string[]).includes(event.type));
    assert.equal(event.type, 'email.bounced');
    assert.equal(event.timestamp, new Date(v.now * 1000).toISOString());
    assert.equal(event.data.scheduled_email_id, 42);
    assert.equal(event.data.reason, '550 5.1.1 Почтовый ящик не существует');
    // A Fetch API Request, as Next.js, Hono, Deno and Bun hand it over.
    const request = new Request('https://site.example/hook', { method: 'POST', headers: v.headers, body: v.body });
    assert.equal(
      (await new WebhookVerifier(secret).verifyRequest(request, v.now * 1000)).data.email,
      'anna@example.com',
    );
    // Node's req.headers: lower-case names.
    assert.equal(new WebhookVerifier(secret).verify(v.body, { ...v.headers }, v.now * 1000).data.order_id, '1001');
  });

  it('its own signatures are the reference’s, and the reference accepts them now', () => {
    const ours = new WebhookVerifier(secret);
    const reference = new Webhook(secret);
    const body = JSON.stringify({ type: 'email.sent', timestamp: new Date().toISOString(), data: { site_key: 's' } });
    const at = new Date();
    assert.equal(ours.sign('msg_1', at, body), reference.sign('msg_1', at, body));
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': ours.sign('msg_1', at, body),
    };
    assert.deepEqual(reference.verify(body, headers), JSON.parse(body));
    assert.equal(ours.verify(body, headers).type, 'email.sent');
  });

  it('refuses a signed body that is not an event, a parsed body, and a secret that is not base64', () => {
    const v = new WebhookVerifier(secret);
    const sign = (body: string) => ({
      'webhook-id': 'msg_x',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': v.sign('msg_x', Date.now() / 1000, body),
    });
    assert.throws(() => v.verify('not json', sign('not json')), /not JSON/);
    assert.throws(() => v.verify('{"type":"email.sent"}', sign('{"type":"email.sent"}')), /not a gateway event/);
    assert.throws(() => v.verify({ type: 'x' } as never, sign('{}')), TypeError);
    assert.throws(() => new WebhookVerifier('whsec_'), TypeError);
    assert.throws(() => new WebhookVerifier('whsec_not base64!'), TypeError);
  });
});
