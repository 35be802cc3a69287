// Amazon SES notifications through SNS. Every SNS message is signed with the key of a certificate that
// SNS serves from `https://sns.<region>.amazonaws.com/….pem`; the certificate is fetched only from that
// host pattern (otherwise anyone could sign with a certificate of their own), cached, and the signature
// checked over the canonical string of the message type (SignatureVersion 1: SHA1, 2: SHA256). The
// topic must be the one configured for the project (`webhooks.ses.topic_arn`).
import { verify, X509Certificate } from 'node:crypto';
import { Type } from 'typebox';
import { classifyCodes } from '../../domain/bounces.js';
import { bodyAjv } from '../../schemas/ajv.js';
import {
  list,
  malformed,
  obj,
  parseJsonBody,
  refuse,
  str,
  type Credentials,
  type Json,
  type ProviderDeps,
  type ProviderReport,
  type ProviderResult,
  type WebhookRequest,
} from './types.js';

const SNS_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;

const SnsMessage = Type.Object({
  Type: Type.String({ maxLength: 100 }),
  MessageId: Type.String({ maxLength: 200 }),
  TopicArn: Type.String({ maxLength: 500 }),
  Message: Type.String(),
  Timestamp: Type.String({ maxLength: 100 }),
  SignatureVersion: Type.String({ maxLength: 4 }),
  Signature: Type.String({ maxLength: 4096 }),
  SigningCertURL: Type.String({ maxLength: 2000 }),
  Subject: Type.Optional(Type.String()),
  Token: Type.Optional(Type.String({ maxLength: 2000 })),
  SubscribeURL: Type.Optional(Type.String({ maxLength: 2000 })),
});
const checkSns = bodyAjv.compile(SnsMessage);
type Sns = Record<string, string | undefined>;

/** An https URL on an SNS host of some region (the certificate and confirmation URLs). */
export function isSnsUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.protocol === 'https:' && SNS_HOST.test(u.hostname) && !u.username && !u.password && !u.port;
  } catch {
    return false;
  }
}

/** The canonical string SNS signs (docs: "Verifying the signatures of Amazon SNS messages"). */
export function snsStringToSign(m: Sns): string {
  const keys =
    m.Type === 'Notification'
      ? ['Message', 'MessageId', ...(m.Subject !== undefined ? ['Subject'] : []), 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return keys.map((k) => `${k}\n${m[k] ?? ''}\n`).join('');
}

const certificates = new Map<string, Promise<X509Certificate>>();

async function certificate(url: string, deps: ProviderDeps): Promise<X509Certificate> {
  let c = certificates.get(url);
  if (!c) {
    c = deps.httpGet(url).then((pem) => new X509Certificate(pem));
    certificates.set(url, c);
    // A failed fetch is not kept: the next message tries again.
    c.catch(() => certificates.delete(url));
    if (certificates.size > 100) certificates.delete(certificates.keys().next().value!);
  }
  return c;
}

async function verifySns(m: Sns, deps: ProviderDeps): Promise<boolean> {
  const algorithm = m.SignatureVersion === '1' ? 'RSA-SHA1' : m.SignatureVersion === '2' ? 'RSA-SHA256' : null;
  if (!algorithm || !isSnsUrl(m.SigningCertURL!) || !/\.pem$/.test(new URL(m.SigningCertURL!).pathname)) return false;
  try {
    const cert = await certificate(m.SigningCertURL!, deps);
    return verify(algorithm, Buffer.from(snsStringToSign(m)), cert.publicKey, Buffer.from(m.Signature!, 'base64'));
  } catch {
    return false;
  }
}

function originalMessageId(mail: Json): string | null {
  const common = str(obj(mail.commonHeaders).messageId);
  if (common) return common;
  const h = list(mail.headers)
    .map(obj)
    .find((x) => typeof x.name === 'string' && x.name.toLowerCase() === 'message-id');
  return str(h?.value);
}

/** One report per recipient of an SES Bounce, Complaint or Delivery notification. */
export function sesReports(notification: Json, snsMessageId: string): ProviderReport[] {
  const type = str(notification.notificationType) ?? str(notification.eventType);
  const mail = obj(notification.mail);
  const base = { messageId: originalMessageId(mail), providerMessageId: str(mail.messageId) };
  if (type === 'Bounce') {
    const b = obj(notification.bounce);
    const permanent = b.bounceType === 'Permanent';
    return list(b.bouncedRecipients).map((item, i) => {
      const r = obj(item);
      const status = str(r.status);
      const diagnostic = str(r.diagnosticCode);
      const c = classifyCodes(status, null, diagnostic ?? '');
      return {
        ...base,
        // SES calls a bounce permanent when the address should not be mailed again.
        kind: permanent ? 'bounced' : 'soft_bounced',
        statusCode: c.statusCode,
        diagnostic: diagnostic ?? `${str(b.bounceType) ?? 'Undetermined'}/${str(b.bounceSubType) ?? ''}`,
        recipient: str(r.emailAddress),
        dedupeKey: `${snsMessageId}:${i}`,
      };
    });
  }
  if (type === 'Complaint') {
    const c = obj(notification.complaint);
    const feedback = str(c.complaintFeedbackType);
    return list(c.complainedRecipients).map((item, i) => ({
      ...base,
      kind: feedback === 'not-spam' ? 'unparsed' : 'complained',
      statusCode: null,
      diagnostic: `complaint${feedback ? `: ${feedback}` : ''}`,
      recipient: str(obj(item).emailAddress),
      dedupeKey: `${snsMessageId}:${i}`,
    }));
  }
  if (type === 'Delivery') {
    const d = obj(notification.delivery);
    return list(d.recipients).map((r, i) => ({
      ...base,
      kind: 'delivered',
      statusCode: '2.0.0',
      diagnostic: str(d.smtpResponse),
      recipient: str(r),
      dedupeKey: `${snsMessageId}:${i}`,
    }));
  }
  return [];
}

export async function ses(req: WebhookRequest, creds: Credentials, deps: ProviderDeps): Promise<ProviderResult> {
  const body = parseJsonBody(req.body);
  if (!checkSns(body)) return refuse('not a signed SNS message');
  const m = body as Sns;
  if (!creds.topic_arn || m.TopicArn !== creds.topic_arn) return refuse('the SNS topic is not the one configured');
  if (!(await verifySns(m, deps))) return refuse('the SNS signature does not verify');
  if (m.Type === 'SubscriptionConfirmation') {
    if (!m.SubscribeURL || !isSnsUrl(m.SubscribeURL)) return malformed('SubscribeURL is not an SNS URL');
    try {
      await deps.httpGet(m.SubscribeURL);
    } catch (e) {
      return malformed(`the subscription could not be confirmed: ${(e as Error).message}`);
    }
    return { ok: true, reports: [], note: 'subscription confirmed' };
  }
  if (m.Type !== 'Notification') return { ok: true, reports: [], note: `${m.Type} ignored` };
  const notification = parseJsonBody(Buffer.from(m.Message!));
  if (typeof notification !== 'object' || notification === null)
    return { ok: true, reports: [], note: 'the notification is not JSON: ignored' };
  return { ok: true, reports: sesReports(obj(notification), m.MessageId!) };
}
