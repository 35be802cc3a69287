// Postmark (HTTP basic auth), SendGrid (ECDSA-signed event webhook), Mailgun (HMAC of timestamp and
// token) and Unisender Go (MD5 of the body with the API key in place of `auth`): each checks its
// provider's own authentication, then maps the documented events to reports.
import { createHash, createHmac, createPublicKey, timingSafeEqual, verify } from 'node:crypto';
import { Type } from 'typebox';
import { classifyCodes, findEnhancedStatus, findSmtpCode } from '../../domain/bounces.js';
import type { ReportKind } from '../../domain/statuses.js';
import { bodyAjv } from '../../schemas/ajv.js';
import {
  header,
  list,
  malformed,
  obj,
  parseJsonBody,
  refuse,
  str,
  type Credentials,
  type ProviderReport,
  type ProviderResult,
  type WebhookRequest,
} from './types.js';

/** Equal strings in constant time (digests of both, so lengths leak nothing either). */
function same(a: string, b: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(a), h(b)) && a === b;
}

const hash = (...parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');

// --- Postmark: bounce, spam complaint and delivery webhooks, behind basic auth in the URL.

const POSTMARK_HARD = new Set(['HardBounce', 'BadEmailAddress', 'ManuallyDeactivated']);
const POSTMARK_SOFT = new Set(['SoftBounce', 'Transient', 'DnsError', 'Blocked', 'SpamNotification', 'ContentRelated']);

const PostmarkBody = Type.Object({
  RecordType: Type.String({ maxLength: 100 }),
  MessageID: Type.Optional(Type.String({ maxLength: 200 })),
  ID: Type.Optional(Type.Union([Type.Integer(), Type.String({ maxLength: 100 })])),
  Type: Type.Optional(Type.String({ maxLength: 100 })),
  Email: Type.Optional(Type.String({ maxLength: 1000 })),
  Recipient: Type.Optional(Type.String({ maxLength: 1000 })),
  Details: Type.Optional(Type.String()),
  Description: Type.Optional(Type.String()),
});
const checkPostmark = bodyAjv.compile(PostmarkBody);

export function postmark(req: WebhookRequest, creds: Credentials): ProviderResult {
  const auth = header(req, 'authorization') ?? '';
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(auth);
  const given = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
  const expected = `${creds.username ?? ''}:${creds.password ?? ''}`;
  if (!creds.username || !creds.password || !same(given, expected)) return refuse('wrong or missing basic auth');
  const body = parseJsonBody(req.body);
  if (!checkPostmark(body)) return malformed('not a Postmark webhook body (RecordType missing)');
  const b = obj(body);
  const type = str(b.Type) ?? '';
  const code = (text: string) => findEnhancedStatus(text) ?? findSmtpCode(text)?.toString() ?? null;
  let kind: ReportKind | null = null;
  if (b.RecordType === 'Delivery') kind = 'delivered';
  else if (b.RecordType === 'SpamComplaint' || type === 'SpamComplaint') kind = 'complained';
  else if (b.RecordType === 'Bounce')
    kind = POSTMARK_HARD.has(type) ? 'bounced' : POSTMARK_SOFT.has(type) ? 'soft_bounced' : 'unparsed';
  if (!kind) return { ok: true, reports: [], note: `${str(b.RecordType)} ignored` };
  const text = [b.Description, b.Details].filter((x) => typeof x === 'string' && x).join(' — ');
  return {
    ok: true,
    reports: [
      {
        kind,
        statusCode: code(text),
        diagnostic: text || (type ? `Postmark ${type}` : null),
        recipient: str(b.Email) ?? str(b.Recipient),
        providerMessageId: str(b.MessageID),
        dedupeKey: hash(b.RecordType, b.ID ?? null, b.MessageID ?? null, b.Type ?? null),
      },
    ],
  };
}

// --- SendGrid: the signed event webhook (ECDSA P-256 over timestamp + body, public key from the panel).

const SendgridEvents = Type.Array(
  Type.Object({
    event: Type.String({ maxLength: 100 }),
    email: Type.Optional(Type.String({ maxLength: 1000 })),
    sg_event_id: Type.Optional(Type.String({ maxLength: 200 })),
    sg_message_id: Type.Optional(Type.String({ maxLength: 300 })),
  }),
  { maxItems: 10_000 },
);
const checkSendgrid = bodyAjv.compile(SendgridEvents);

function sendgridKey(publicKey: string) {
  const text = publicKey.trim();
  return text.startsWith('-----BEGIN')
    ? createPublicKey(text)
    : createPublicKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'spki' });
}

export function sendgrid(req: WebhookRequest, creds: Credentials): ProviderResult {
  const signature = header(req, 'x-twilio-email-event-webhook-signature');
  const timestamp = header(req, 'x-twilio-email-event-webhook-timestamp');
  if (!creds.public_key || !signature || !timestamp) return refuse('missing SendGrid signature headers');
  let valid: boolean;
  try {
    valid = verify(
      'sha256',
      Buffer.concat([Buffer.from(timestamp), req.body]),
      { key: sendgridKey(creds.public_key), dsaEncoding: 'der' },
      Buffer.from(signature, 'base64'),
    );
  } catch {
    valid = false;
  }
  if (!valid) return refuse('the SendGrid signature does not verify');
  const events = parseJsonBody(req.body);
  if (!checkSendgrid(events)) return malformed('not a SendGrid event array');
  const reports: ProviderReport[] = [];
  for (const e of list(events).map(obj)) {
    const reason = [str(e.reason), str(e.response)].filter(Boolean).join(' ') || null;
    const c = classifyCodes(str(e.status), null, reason ?? '');
    let kind: ReportKind | null = null;
    if (e.event === 'delivered') kind = 'delivered';
    else if (e.event === 'spamreport') kind = 'complained';
    else if (e.event === 'deferred') kind = 'delayed';
    else if (e.event === 'bounce')
      // `blocked` is SendGrid's temporary refusal; a `bounce` is permanent, its code says whether the
      // address itself is at fault.
      kind = e.type === 'blocked' ? 'soft_bounced' : c.kind === 'unparsed' ? 'bounced' : c.kind;
    else if (e.event === 'dropped') kind = 'unparsed';
    if (!kind) continue;
    reports.push({
      kind,
      statusCode: c.statusCode,
      diagnostic: reason ?? `SendGrid ${str(e.event)}`,
      recipient: str(e.email),
      messageId: str(e['smtp-id']),
      // sg_message_id is the X-Message-Id the relay answered with, plus a filter suffix.
      providerMessageId: str(e.sg_message_id)?.split('.')[0] ?? null,
      dedupeKey: str(e.sg_event_id) ?? hash(e),
    });
  }
  return { ok: true, reports };
}

// --- Mailgun: HMAC-SHA256 of timestamp + token under the webhook signing key.

const MailgunBody = Type.Object({
  signature: Type.Object({
    timestamp: Type.String({ maxLength: 20 }),
    token: Type.String({ maxLength: 200 }),
    signature: Type.String({ maxLength: 200 }),
  }),
  'event-data': Type.Object({ event: Type.String({ maxLength: 100 }) }),
});
const checkMailgun = bodyAjv.compile(MailgunBody);

export function mailgun(req: WebhookRequest, creds: Credentials): ProviderResult {
  const body = parseJsonBody(req.body);
  const sig = obj(obj(body).signature);
  const [timestamp, token, signature] = [str(sig.timestamp), str(sig.token), str(sig.signature)];
  if (!creds.signing_key || !timestamp || !token || !signature) return refuse('missing Mailgun signature');
  const expected = createHmac('sha256', creds.signing_key).update(`${timestamp}${token}`).digest('hex');
  if (!same(signature.toLowerCase(), expected)) return refuse('the Mailgun signature does not verify');
  if (!checkMailgun(body)) return malformed('not a Mailgun event body');
  const e = obj(obj(body)['event-data']);
  const ds = obj(e['delivery-status']);
  const text = [str(ds.message), str(ds.description), str(e.reason)].filter(Boolean).join(' ');
  const code = typeof ds.code === 'number' ? ds.code : null;
  const c = classifyCodes(str(ds['enhanced-code']) ?? findEnhancedStatus(text), code, text);
  let kind: ReportKind | null = null;
  if (e.event === 'delivered') kind = 'delivered';
  else if (e.event === 'complained') kind = 'complained';
  else if (e.event === 'failed')
    kind =
      e.severity === 'temporary'
        ? 'soft_bounced'
        : c.kind === 'unparsed' || c.kind === 'delivered'
          ? 'bounced'
          : c.kind;
  if (!kind) return { ok: true, reports: [], note: `${str(e.event)} ignored` };
  const messageId = str(obj(obj(e.message).headers)['message-id']);
  return {
    ok: true,
    reports: [
      {
        kind,
        statusCode: c.statusCode,
        diagnostic: text || `Mailgun ${str(e.event)}`,
        recipient: str(e.recipient),
        messageId,
        providerMessageId: messageId,
        dedupeKey: str(e.id) ?? hash(e),
      },
    ],
  };
}

// --- Unisender Go: `auth` is the MD5 of the body in which its own value is replaced by the API key.

const UnisenderBody = Type.Object({
  auth: Type.String({ maxLength: 100 }),
  events_by_user: Type.Array(
    Type.Object({ events: Type.Array(Type.Object({ event_name: Type.String({ maxLength: 100 }) })) }),
    { maxItems: 1000 },
  ),
});
const checkUnisender = bodyAjv.compile(UnisenderBody);

const UNISENDER_KINDS: Partial<Record<string, ReportKind>> = {
  delivered: 'delivered',
  hard_bounced: 'bounced',
  soft_bounced: 'soft_bounced',
  spam: 'complained',
};

export function unisenderGo(req: WebhookRequest, creds: Credentials): ProviderResult {
  const text = req.body.toString('utf8');
  const body = parseJsonBody(req.body);
  const auth = str(obj(body).auth);
  if (!creds.api_key || !auth) return refuse('missing Unisender Go auth');
  // The value is replaced where it stands in the body as sent, so the hash covers the exact bytes.
  const at = text.indexOf(`"${auth}"`);
  if (at < 0) return refuse('the Unisender Go auth does not verify');
  const signed = `${text.slice(0, at)}"${creds.api_key}"${text.slice(at + auth.length + 2)}`;
  if (!same(auth.toLowerCase(), createHash('md5').update(signed).digest('hex')))
    return refuse('the Unisender Go auth does not verify');
  if (!checkUnisender(body)) return malformed('not a Unisender Go webhook body');
  const reports: ProviderReport[] = [];
  for (const user of list(obj(body).events_by_user).map(obj)) {
    for (const ev of list(user.events).map(obj)) {
      const d = obj(ev.event_data);
      const status = str(d.status) ?? '';
      const kind = ev.event_name === 'transactional_email_status' ? UNISENDER_KINDS[status] : undefined;
      if (!kind) continue;
      const info = obj(d.delivery_info);
      const response = str(info.destination_response);
      const c = classifyCodes(findEnhancedStatus(response ?? ''), findSmtpCode(response ?? ''), response ?? '');
      const meta = obj(d.metadata);
      reports.push({
        kind,
        statusCode: c.statusCode,
        diagnostic: [str(info.delivery_status), response].filter(Boolean).join(': ') || `Unisender Go ${status}`,
        recipient: str(d.email),
        messageId: str(meta.message_id) ?? str(meta.messageid),
        providerMessageId: str(d.job_id),
        dedupeKey: hash(d.job_id, d.email, d.status, d.event_time),
      });
    }
  }
  return { ok: true, reports };
}
