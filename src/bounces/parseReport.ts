// Reads what came back to a VERP address (SPEC §12): an RFC 3464 DSN (`multipart/report;
// report-type=delivery-status`), an RFC 5965 ARF complaint (`report-type=feedback-report`), or a
// non-standard bounce (a reply code and recipient in the text). Never throws: what cannot be read is an
// `unparsed` report with the reason in its diagnostic.
import { simpleParser } from 'mailparser';
import { classifyDsn, classifyText } from '../domain/bounces.js';
import type { ReportKind } from '../domain/statuses.js';
import { leaves, parseHeaderBlock, parseMime, type MimePart } from './mime.js';

export interface ParsedReport {
  kind: ReportKind;
  statusCode: string | null;
  diagnostic: string | null;
  recipient: string | null;
  /** The Message-ID of the original e-mail, when the report quotes it. */
  messageId: string | null;
}

const ADDRESS = /[A-Za-z0-9._%+'=-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/;

/** `rfc822; user@example.org` to the address. */
function addressField(v: string | undefined): string | null {
  if (!v) return null;
  const m = ADDRESS.exec(v.replace(/^[^;]*;/, ''));
  return m ? m[0].toLowerCase() : null;
}

const oneLine = (s: string | undefined | null, max = 1000) =>
  s ? s.replace(/\s+/g, ' ').trim().slice(0, max) || null : null;

/** The Message-ID in the quoted original (message/rfc822 or text/rfc822-headers part), if any. */
function originalMessageId(root: MimePart): string | null {
  for (const p of leaves(root)) {
    if (!/^(message\/rfc822|text\/rfc822-headers|message\/global|message\/global-headers)$/.test(p.contentType))
      continue;
    const head = p.body.split(/\r?\n\r?\n/, 1)[0];
    const id = parseHeaderBlock(head).get('message-id');
    if (id) return id;
  }
  return null;
}

function deliveryStatus(part: MimePart, messageId: string | null): ParsedReport[] {
  const blocks = part.body
    .split(/\r?\n[ \t]*\r?\n/)
    .map((b) => b.trim())
    .filter(Boolean)
    .map(parseHeaderBlock);
  const recipients = blocks.slice(1).filter((b) => b.has('final-recipient') || b.has('action') || b.has('status'));
  if (!recipients.length)
    return [unparsed('the delivery-status part has no per-recipient fields (RFC 3464 §2.3)', messageId)];
  return recipients.map((b) => {
    const diagnostic = oneLine(b.get('diagnostic-code')?.replace(/^\s*[a-z-]+\s*;\s*/i, ''));
    const c = classifyDsn(b.get('action') ?? null, b.get('status') ?? null, diagnostic);
    return {
      kind: c.kind,
      statusCode: c.statusCode,
      diagnostic: diagnostic ?? oneLine(`Action: ${b.get('action') ?? '?'}; Status: ${b.get('status') ?? '?'}`),
      recipient: addressField(b.get('final-recipient') ?? b.get('original-recipient')),
      messageId,
    };
  });
}

function feedbackReport(part: MimePart, messageId: string | null): ParsedReport {
  const f = parseHeaderBlock(part.body);
  const type = (f.get('feedback-type') ?? '').toLowerCase();
  if (!type) return unparsed('the feedback-report part has no Feedback-Type (RFC 5965 §3.1)', messageId);
  return {
    // not-spam reverses an earlier verdict: recorded, changes nothing.
    kind: type === 'not-spam' ? 'unparsed' : 'complained',
    statusCode: null,
    diagnostic: oneLine(`Feedback-Type: ${type}${f.get('user-agent') ? `; User-Agent: ${f.get('user-agent')}` : ''}`),
    recipient: addressField(f.get('original-rcpt-to')),
    messageId,
  };
}

function unparsed(reason: string, messageId: string | null = null): ParsedReport {
  return { kind: 'unparsed', statusCode: null, diagnostic: reason, recipient: null, messageId };
}

/** The first address in a bounce's text that is not ours nor the mailer daemon's. */
function recipientInText(text: string, ignoreDomain: string | null): string | null {
  for (const m of text.matchAll(new RegExp(ADDRESS.source, 'g'))) {
    const a = m[0].toLowerCase();
    if (/^(mailer-daemon|postmaster)@/.test(a)) continue;
    if (ignoreDomain && a.endsWith(`@${ignoreDomain}`)) continue;
    return a;
  }
  return null;
}

export async function parseReportMessage(raw: Buffer, opts: { bounceDomain?: string | null } = {}) {
  let root: MimePart;
  try {
    root = parseMime(raw.toString('latin1'));
  } catch (e) {
    return [unparsed(`not a readable MIME message: ${(e as Error).message}`)];
  }
  const messageId = originalMessageId(root);
  const all = leaves(root);
  const dsn = all.find((p) => /^message\/(global-)?delivery-status$/.test(p.contentType));
  if (dsn) return deliveryStatus(dsn, messageId);
  const arf = all.find((p) => p.contentType === 'message/feedback-report');
  if (arf) return [feedbackReport(arf, messageId)];
  if (root.contentType === 'multipart/report')
    return [unparsed(`multipart/report without a ${root.params['report-type'] ?? 'known'} part`, messageId)];

  // Not a standard report: read the text as a person would (mailparser handles charsets and HTML).
  let text: string;
  let subject = '';
  try {
    const mail = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
    text = mail.text ?? '';
    subject = mail.subject ?? '';
  } catch {
    text = raw.toString('utf8');
  }
  const c = classifyText(`${subject}\n${text}`);
  const quoted = /^message-id:\s*(<[^>\s]+>)/im.exec(text)?.[1] ?? null;
  if (c.kind === 'unparsed')
    return [
      unparsed(
        `not a bounce report: no delivery status or reply code found (${oneLine(subject, 200) ?? 'no subject'})`,
        messageId ?? quoted,
      ),
    ];
  const line = text.split(/\r?\n/).find((l) => (c.statusCode ? l.includes(c.statusCode) : false));
  return [
    {
      kind: c.kind,
      statusCode: c.statusCode,
      diagnostic: oneLine(line) ?? oneLine(subject),
      recipient: recipientInText(text, opts.bounceDomain ?? null),
      messageId: messageId ?? quoted,
    },
  ];
}
