// Where rendered e-mails go: an SMTP relay through a pooled nodemailer transport, or the embedded capture
// transport (the default without SMTP_URL), which accepts everything and sends nothing. In both cases
// the worker keeps the rendered message in the row's `rendered` column, which is what the admin API and
// UI show, so the capture transport itself needs to store nothing.
import { createHash, randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import DKIM from 'nodemailer/lib/dkim';
import type Mail from 'nodemailer/lib/mailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import type MimeNode from 'nodemailer/lib/mime-node';
import { domainAscii } from '../domain/email.js';
import { mimeBytes } from './mimeBytes.js';
import { sanitizeHeaderValue } from './render.js';
import { checkSmtpUtf8, smtpUtf8Probe } from './smtputf8.js';

export interface OutgoingMessage {
  from: { name: string; address: string };
  to: { name?: string | null; address: string };
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
  /** With angle brackets, e.g. `<email-12.site.ab12cd34@example.org>`. */
  messageId: string;
  /** The envelope sender (MAIL FROM) when it is not From: the e-mail's VERP address (SPEC §12). */
  envelopeFrom?: string;
}

export interface SendResult {
  messageId: string;
  response: string;
}

export interface Transport {
  readonly kind: 'smtp' | 'capture';
  send(msg: OutgoingMessage): Promise<SendResult>;
  close(): Promise<void>;
}

export interface SmtpTransportOptions {
  /** Simultaneous SMTP connections in the pool (default 5; `serve` passes SMTP_POOL_SIZE from the config). */
  maxConnections?: number;
  /**
   * Messages per connection before it is recycled (default: never). nodemailer's 100 reopened the relay
   * connection (TCP, greeting, EHLO, STARTTLS, AUTH) for every hundredth e-mail (issues 29, 38); a
   * connection ends when the relay closes it, when it has been idle for the socket timeout, or on close().
   */
  maxMessages?: number;
  /** Connect/greeting timeout in ms (default 30 s); socket inactivity timeout is twice that. */
  timeoutMs?: number;
  /** STARTTLS must succeed (`required`) or is used when offered (`opportunistic`, the default). */
  requireTLS?: boolean;
  /** Every message signed with this key (a project's DKIM settings). */
  dkim?: { domainName: string; keySelector: string; privateKey: string };
}

/**
 * The header fields the DKIM signature covers (its h= tag; nodemailer lists those present). RFC 8058 §4:
 * a one-click List-Unsubscribe counts only when both List-Unsubscribe and List-Unsubscribe-Post are
 * signed; nodemailer's default list leaves out List-Unsubscribe-Post, so receivers would not offer it.
 */
export const DKIM_SIGNED_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'To',
  'Cc',
  'Subject',
  'Date',
  'Message-ID',
  'In-Reply-To',
  'References',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'List-Id',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'Auto-Submitted',
].join(':');

/**
 * Header lines every e-mail carries on the wire. `Auto-Submitted: auto-generated` (RFC 3834 §5): the
 * gateway's mail is machine-sent, so vacation responders and other robots do not answer it.
 */
const WIRE_HEADERS = { 'Auto-Submitted': 'auto-generated' } as const;

function cleanHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { ...WIRE_HEADERS };
  for (const [k, v] of Object.entries(headers)) {
    if (/^[!-9;-~]+$/.test(k)) out[k] = sanitizeHeaderValue(String(v));
  }
  return out;
}

interface Raw {
  raw: Buffer;
  envelope: { from: string | false; to: string[] };
}

/** Messages already built, by the signing key they were built for (a fallback relay reuses the primary's). */
const built = new WeakMap<OutgoingMessage, Map<string, Promise<Raw>>>();

/**
 * The message as it goes on the wire, built once into one buffer and DKIM-signed once (issue 38): what
 * nodemailer's sendMail composes from the same fields, with its envelope, so the SMTP pool only writes it.
 */
export function rawMessage(msg: OutgoingMessage, dkim: { key: string; signer: DKIM } | null): Promise<Raw> {
  let byKey = built.get(msg);
  if (!byKey) built.set(msg, (byKey = new Map<string, Promise<Raw>>()));
  const key = dkim?.key ?? '';
  let done = byKey.get(key);
  if (!done) byKey.set(key, (done = build(msg, dkim?.signer ?? null)));
  return done;
}

// The random part of a message's MIME boundaries, drawn 1 KiB at a time: each draw from the CSPRNG costs
// ~5 µs here, and nodemailer draws one for the tree unless it is given (its child nodes still draw their
// own, unused). As random per message as nodemailer's own.
let boundaryBytes = Buffer.alloc(0);
let boundaryAt = 0;

function baseBoundary(): string {
  if (boundaryAt + 8 > boundaryBytes.length) {
    boundaryBytes = randomBytes(1024);
    boundaryAt = 0;
  }
  boundaryAt += 8;
  return boundaryBytes.toString('hex', boundaryAt - 8, boundaryAt);
}

/** The MIME tree nodemailer's sendMail would build from the same fields. */
export function composeNode(msg: OutgoingMessage): MimeNode {
  // MailComposer passes baseBoundary to every node it makes; its types leave it out.
  const mail: Mail.Options & { baseBoundary: string } = {
    baseBoundary: baseBoundary(),
    from: { name: sanitizeHeaderValue(msg.from.name), address: msg.from.address },
    to: msg.to.name ? { name: sanitizeHeaderValue(msg.to.name), address: msg.to.address } : msg.to.address,
    subject: sanitizeHeaderValue(msg.subject),
    html: msg.html,
    text: msg.text,
    headers: cleanHeaders(msg.headers),
    messageId: msg.messageId,
    // Nothing we send refers to files or URLs; refuse them outright.
    disableFileAccess: true,
    disableUrlAccess: true,
    ...(msg.envelopeFrom ? { envelope: { from: msg.envelopeFrom, to: [msg.to.address] } } : {}),
  };
  return new MailComposer(mail).compile();
}

async function build(msg: OutgoingMessage, signer: DKIM | null): Promise<Raw> {
  const node = composeNode(msg);
  const envelope = node.getEnvelope() as Raw['envelope'];
  const unsigned = mimeBytes(node) ?? (await node.build());
  if (!signer) return { raw: unsigned, envelope };
  const chunks: Buffer[] = [];
  for await (const chunk of signer.sign(unsigned)) chunks.push(chunk as Buffer);
  return { raw: Buffer.concat(chunks), envelope };
}

export function createSmtpTransport(url: string, opts: SmtpTransportOptions = {}): Transport {
  const timeout = opts.timeoutMs ?? 30_000;
  const maxConnections = opts.maxConnections ?? 5;
  const mailer = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections,
    maxMessages: opts.maxMessages ?? Infinity,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout * 2,
    disableFileAccess: true,
    disableUrlAccess: true,
    ...(opts.requireTLS ? { requireTLS: true } : {}),
  });
  // Signed here, once per message, rather than by nodemailer on every send of it.
  const dkim = opts.dkim
    ? {
        key: `${opts.dkim.domainName}/${opts.dkim.keySelector}/${createHash('sha256').update(opts.dkim.privateKey).digest('hex')}`,
        signer: new DKIM({ ...opts.dkim, headerFieldNames: DKIM_SIGNED_HEADERS }),
      }
    : null;
  const offersSmtpUtf8 = smtpUtf8Probe(url, timeout);
  return {
    kind: 'smtp',
    async send(msg) {
      await checkSmtpUtf8({ from: msg.from.address, to: msg.to.address }, offersSmtpUtf8);
      const { raw, envelope } = await rawMessage(msg, dkim);
      // The id given too: without it nodemailer makes one for the raw message (five random draws) and drops it.
      const info = await mailer.sendMail({
        raw,
        messageId: msg.messageId,
        envelope: { from: envelope.from || undefined, to: envelope.to },
      });
      // The id is the one written in the message (a raw message's id is not parsed back out).
      return { messageId: msg.messageId, response: String(info.response ?? '') };
    },
    async close() {
      mailer.close();
    },
  };
}

export function createCaptureTransport(): Transport {
  return {
    kind: 'capture',
    async send(msg) {
      return { messageId: msg.messageId, response: '250 captured (no SMTP configured)' };
    },
    async close() {},
  };
}

/** SMTP when a URL is configured, the capture transport otherwise (SPEC §8). */
export function createTransportFromConfig(cfg: { smtpUrl: string | null }, opts: SmtpTransportOptions = {}): Transport {
  return cfg.smtpUrl ? createSmtpTransport(cfg.smtpUrl, opts) : createCaptureTransport();
}

/**
 * The Message-ID of one e-mail, a pure function of its id, its project and the installation, so a retry
 * (even by another worker after a crash) carries the same id and receivers can de-duplicate. The
 * installation tag keeps two installations (staging and production) from minting identical ids.
 */
export function makeMessageId(
  emailId: number,
  project: { site_key: string; from_email: string },
  installationSecret = '',
): string {
  const site =
    project.site_key
      .replace(/[^A-Za-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 64) || 'site';
  const at = project.from_email.lastIndexOf('@');
  const rawDomain = at >= 0 ? project.from_email.slice(at + 1) : '';
  // A Message-ID is ASCII: a Unicode sender domain (знание.рф) is written as its punycode form.
  const domain =
    (domainAscii(rawDomain) ?? rawDomain)
      .toLowerCase()
      .replace(/[^a-z0-9.-]+/g, '')
      .replace(/^[.-]+|[.-]+$/g, '') || 'localhost';
  const tag = createHash('sha256').update(`message-id:${installationSecret}`).digest('hex').slice(0, 8);
  return `<email-${emailId}.${site}.${tag}@${domain}>`;
}
