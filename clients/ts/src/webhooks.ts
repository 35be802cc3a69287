// The site's side of the gateway's webhooks (SPEC §13): Standard Webhooks signatures. Each delivery is a
// POST with `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<base64 of
// HMAC-SHA256 over "<id>.<timestamp>.<body>">`, several separated by spaces while a secret is rotated),
// keyed with the endpoint's secret `whsec_<base64>`. Only node:crypto.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { webhooks } from './openapi.js';

/** The kinds of event the gateway tells a site about (SPEC §13). */
export const WEBHOOK_EVENT_TYPES = [
  'email.sent',
  'email.delivered',
  'email.failed',
  'email.bounced',
  'email.soft_bounced',
  'email.complained',
  'email.suppressed',
  'email.cancelled',
  'email.opened',
  'email.clicked',
  'contact.unsubscribed',
  'event.rejected',
] as const satisfies readonly (keyof webhooks)[];
export type WebhookEventType = keyof webhooks;

/** The body of each kind, as the gateway's /openapi.json describes it (its `webhooks` section). */
export type WebhookPayload = {
  [K in keyof webhooks]: webhooks[K]['post']['requestBody']['content']['application/json'];
}[keyof webhooks];

/**
 * `data` of a webhook: site_key and sequence (grows with each delivery: deliveries are not promised in
 * order), and for the e-mail kinds event_id, scheduled_email_id, event_type, order_id, idempotency_key,
 * email, status, template_key, step, reason; email.opened has opened_at, email.clicked clicked_at and url
 * (the first time a person opened it or followed a link: sent once per e-mail); event.rejected has
 * endpoint, http_status, error_code.
 */
export type WebhookEventData = WebhookPayload['data'];

export interface WebhookEvent {
  /** `webhook-id`: the same on every retry of one delivery; keep it to ignore a repeat. */
  id: string;
  /** One of WEBHOOK_EVENT_TYPES; a newer gateway may send kinds this client does not list yet. */
  type: WebhookEventType | (string & {});
  /** ISO 8601: when it happened. */
  timestamp: string;
  data: WebhookEventData;
}

/** The delivery is not from the gateway (or is too old): answer 400 or 401 and do nothing with it. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface WebhookVerifierOptions {
  /** How far `webhook-timestamp` may be from now, either way, in seconds (replay protection). Default 300. */
  toleranceSeconds?: number;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export class WebhookVerifier {
  private readonly key: Buffer;
  private readonly toleranceSeconds: number;

  /** @param secret the endpoint's secret as the gateway showed it, `whsec_…` */
  constructor(secret: string, options: WebhookVerifierOptions = {}) {
    if (typeof secret !== 'string') throw new TypeError('secret must be the whsec_… string');
    const b64 = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new TypeError('secret is not whsec_ followed by base64');
    this.key = Buffer.from(b64, 'base64');
    if (this.key.length === 0) throw new TypeError('secret is empty');
    this.toleranceSeconds = options.toleranceSeconds ?? 300;
  }

  /**
   * Checks the signature and the timestamp of a delivery and returns its event. `body` is the raw body as
   * received (a string or bytes), never a re-serialised parsed object: one changed byte breaks the
   * signature. `headers` is a Headers object or Node's `req.headers`.
   */
  verify(body: string | Uint8Array, headers: HeaderSource, now: Date | number = Date.now()): WebhookEvent {
    if (typeof body !== 'string' && !(body instanceof Uint8Array))
      throw new TypeError('body must be the raw request body (string or Buffer), not a parsed object');
    const id = header(headers, 'webhook-id');
    const timestamp = header(headers, 'webhook-timestamp');
    const signatures = header(headers, 'webhook-signature');
    if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-* headers');
    if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not Unix seconds');
    const nowSeconds = Math.floor((typeof now === 'number' ? now : now.getTime()) / 1000);
    const age = nowSeconds - Number(timestamp);
    if (age > this.toleranceSeconds) throw new WebhookVerificationError('webhook-timestamp is too old');
    if (age < -this.toleranceSeconds) throw new WebhookVerificationError('webhook-timestamp is in the future');

    const expected = Buffer.from(this.signature(id, timestamp, body));
    const match = signatures.split(' ').some((versioned) => {
      const [version, given] = versioned.split(',', 2);
      if (version !== 'v1' || given === undefined) return false;
      const g = Buffer.from(given);
      return g.length === expected.length && timingSafeEqual(g, expected);
    });
    if (!match) throw new WebhookVerificationError('no matching signature');
    return parseEvent(id, typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
  }

  /** verify() on a Fetch API Request (Next.js route handlers, Hono, Deno, Bun): reads its raw body once. */
  async verifyRequest(request: Request, now: Date | number = Date.now()): Promise<WebhookEvent> {
    return this.verify(new Uint8Array(await request.arrayBuffer()), request.headers, now);
  }

  /** The `webhook-signature` value for a delivery: for the site's own tests of its webhook handler. */
  sign(id: string, timestamp: number | Date, body: string | Uint8Array): string {
    const seconds = typeof timestamp === 'number' ? Math.floor(timestamp) : Math.floor(timestamp.getTime() / 1000);
    return `v1,${this.signature(id, String(seconds), body)}`;
  }

  private signature(id: string, timestamp: string, body: string | Uint8Array): string {
    return createHmac('sha256', this.key)
      .update(`${id}.${timestamp}.`)
      .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
      .digest('base64');
  }
}

function header(headers: HeaderSource, name: string): string | null {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() !== name) continue;
    return Array.isArray(v) ? v.join(' ') : (v ?? null);
  }
  return null;
}

function parseEvent(id: string, text: string): WebhookEvent {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('the signed body is not JSON');
  }
  const b = body as Partial<WebhookEvent> | null;
  if (
    !b ||
    typeof b !== 'object' ||
    typeof b.type !== 'string' ||
    typeof b.timestamp !== 'string' ||
    !b.data ||
    typeof b.data !== 'object' ||
    Array.isArray(b.data)
  )
    throw new WebhookVerificationError('the signed body is not a gateway event {type, timestamp, data}');
  return { id, type: b.type, timestamp: b.timestamp, data: b.data };
}
