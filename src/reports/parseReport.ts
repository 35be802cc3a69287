// Reads what came back to a VERP address (SPEC §12, §19): an RFC 3464 DSN and the near-DSNs real MTAs
// send, an RFC 5965 ARF complaint and near-ARF or Amazon SES complaint e-mails, a non-standard bounce (a
// reply code and recipient in the text, in any charset), or an auto-reply (RFC 3834). Never throws: what
// cannot be read is an `unparsed` report with the reason in its diagnostic.
import { createHash } from 'node:crypto';
import { classifyDsn, classifyText, findEnhancedStatus, findSmtpCode } from '../domain/bounces.js';
import { DELAYED_TEXT, FAILED_TEXT, stageKeepsAddress, textVerdict } from '../domain/bounceWording.js';
import type { ReportKind } from '../domain/statuses.js';
import { addressField, dsnRecipients, MAX_RECIPIENTS, type DsnRecipient } from './dsnFields.js';
import { leaves, parseHeaderBlock, parseMime, type MimePart } from './mime.js';
import { sesReports } from './providers/ses.js';
import { obj } from './providers/types.js';

export interface ParsedReport {
  kind: ReportKind;
  statusCode: string | null;
  diagnostic: string | null;
  recipient: string | null;
  /** The Message-ID of the original e-mail, when the report quotes it. */
  messageId: string | null;
  /** The message reports on several recipients: only the one naming the e-mail's address may change it. */
  ofSeveral?: boolean;
}

const ADDRESS = /[A-Za-z0-9._%+'=-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;

const oneLine = (s: string | undefined | null, max = 1000) =>
  s ? s.replace(/\s+/g, ' ').trim().slice(0, max) || null : null;

const QUOTED = /^(message\/(rfc822|global|global-headers)|text\/rfc822-headers)$/;

/** The Message-ID in the quoted original (message/rfc822 or text/rfc822-headers part), if any. */
function originalMessageId(root: MimePart): string | null {
  for (const p of leaves(root)) {
    if (!QUOTED.test(p.contentType)) continue;
    const id = parseHeaderBlock(p.body.split(/\r?\n\r?\n/, 1)[0]).get('message-id');
    if (id) return id;
  }
  return null;
}

function unparsed(reason: string, messageId: string | null = null): ParsedReport {
  return { kind: 'unparsed', statusCode: null, diagnostic: reason, recipient: null, messageId };
}

/**
 * The report's own words, without the quoted original: a bounce quotes our e-mail (with its "privacy
 * policy" and "unsubscribe"), and those words must not decide the verdict.
 */
const QUOTE_START =
  /^\s*(-{2,}.*(original message|copy of (the|your) message|message (follows|headers?)|undelivered message|returned message|unsent message|message text|headers? of)|-{3,}\s*(original|below this line)|(original|returned|undelivered) message( headers)?:?\s*$|content-type:\s*message\/rfc822|return-path:\s*<|received:\s+from\s)/im;
function ownWords(text: string): string {
  const m = QUOTE_START.exec(text);
  return (m ? text.slice(0, m.index) : text).slice(0, 20_000);
}

/**
 * What the human-readable text says about one recipient: the lines from two before its address to five
 * after, stopping at a line that names another recipient of the report.
 */
function contextFor(text: string, recipient: string | null, others: string[]): string {
  if (recipient) {
    const lines = text.split(/\r?\n/);
    const lower = lines.map((l) => l.toLowerCase());
    const other = (i: number) => others.some((o) => o !== recipient && lower[i].includes(o));
    const at = lower.flatMap((l, i) => (l.includes(recipient) ? [i] : []));
    if (at.length)
      return at
        .map((i) => {
          let from = i;
          while (from > Math.max(0, i - 2) && !other(from - 1)) from--;
          let to = i + 1;
          while (to < Math.min(lines.length, i + 6) && !other(to)) to++;
          return lines.slice(from, to).join('\n');
        })
        .join('\n');
  }
  return others.length > 1 ? '' : text;
}

function fromDsn(blocks: DsnRecipient[], human: string, messageId: string | null): ParsedReport[] {
  const several = blocks.length > 1;
  const all = blocks.map((b) => b.finalRecipient ?? b.originalRecipient ?? '').filter(Boolean);
  return blocks.map((b) => {
    const recipient = b.finalRecipient ?? b.originalRecipient;
    const context = contextFor(human, recipient, several ? all : []);
    // A lone recipient's report is about it throughout: its human-readable part ("Not enough disk
    // space" above the fields, rfc3464-01) speaks for it even where the lines near the address do not.
    const c = classifyDsn(b.action, b.status, b.diagnostic, several ? context : `${context}\n${human}`);
    return {
      kind:
        c.kind === 'bounced' && stageKeepsAddress(`${b.diagnostic ?? ''}\n${context}\n${human}`)
          ? 'soft_bounced'
          : c.kind,
      statusCode: c.statusCode,
      diagnostic: oneLine(b.diagnostic) ?? oneLine(`Action: ${b.action ?? '?'}; Status: ${b.status ?? '?'}`),
      recipient,
      messageId,
      ...(several ? { ofSeveral: true } : {}),
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
    recipient: addressField(f.get('original-rcpt-to') ?? f.get('removal-recipient')),
    messageId,
  };
}

/** Headers of the first quoted original (the e-mail a complaint or bounce is about). */
function quotedHeaders(root: MimePart): Map<string, string> | null {
  const p = leaves(root).find((x) => QUOTED.test(x.contentType));
  return p ? parseHeaderBlock(p.body.split(/\r?\n\r?\n/, 1)[0]) : null;
}

// Near-ARF: a mailbox provider's complaint that forwards the original without a feedback-report part
// (Hotmail/Outlook JMRP, old AOL and Yahoo loops): a complaint or abuse subject and a quoted original.
const COMPLAINT_SUBJECT = /(complaint|abuse report|spam report|feedback loop|fbl|reported as spam|\bscomp\b)/i;

function nearArf(root: MimePart, subject: string, messageId: string | null): ParsedReport | null {
  const quoted = quotedHeaders(root);
  if (!quoted || !COMPLAINT_SUBJECT.test(subject)) return null;
  const recipient =
    addressField(quoted.get('x-hmxmroriginalrecipient') ?? quoted.get('x-original-to') ?? quoted.get('to')) ?? null;
  return {
    kind: 'complained',
    statusCode: null,
    diagnostic: oneLine(`complaint e-mail: ${subject}`),
    recipient,
    messageId,
  };
}

/** The JSON object that starts at `start`, by its balanced braces (text may follow it). */
function jsonAt(text: string, start: number): unknown {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) {
      try {
        return JSON.parse(text.slice(start, i + 1));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** An Amazon SES notification e-mailed as JSON (a topic with an e-mail subscription). */
function sesNotification(text: string, raw: Buffer): ParsedReport[] | null {
  // Sendmail breaks lines over 990 characters with `!`, a line break and a space: undone first.
  const body = text.replace(/!\r?\n /g, '');
  const start = body.indexOf('{"notificationType"');
  if (start < 0) return null;
  const json = jsonAt(body, start);
  if (!json) return null;
  const id = createHash('sha256').update(raw).digest('hex').slice(0, 32);
  const reports = sesReports(obj(json), id);
  return reports.length
    ? reports.map((r) => ({
        kind: r.kind,
        statusCode: r.statusCode,
        diagnostic: r.diagnostic,
        recipient: r.recipient?.toLowerCase() ?? null,
        messageId: r.messageId ?? null,
      }))
    : null;
}

const DAEMON = /mailer-daemon|postmaster|mail delivery|mail system|mailer|mail administrator|mmdf|smtp|nobody@/i;
const AUTO_REPLY_SUBJECT =
  /^(auto(matic|matische)?[ -]?(reply|response|respons|antwort|answer|ответ)|out of (the )?office|away|vacation|abwesen|absence|autoresponder|自動(応答|返信)|автоответ)/i;

function isAutoReply(h: Map<string, string>, subject: string): boolean {
  const auto = (h.get('auto-submitted') ?? '').toLowerCase();
  return (
    auto.startsWith('auto-replied') ||
    h.has('x-autoreply') ||
    h.has('x-autorespond') ||
    /auto[_-]?reply/i.test(h.get('precedence') ?? '') ||
    AUTO_REPLY_SUBJECT.test(subject.trim())
  );
}

/** A line that names the sender: a summary of the original ("From:", "MAIL FROM:") or `>>> MAIL From:`. */
const SENDER_LINE = /^\s*(>>>\s*)?(mail from|from|sender|reply-to|return-path|envelope-from)\s*:/i;

const isParty = (a: string, parties: string[]) =>
  /^(mailer-daemon|postmaster|root|abuse)@/.test(a) || parties.some((d) => a === d || a.endsWith(`@${d}`));

/**
 * A text bounce cut into what it says about each failed recipient: each line belongs to the last
 * recipient address named before it (qmail, Exim and sendmail list them one paragraph each).
 * X-Failed-Recipients, when present, says which addresses those are.
 */
function recipientSegments(text: string, h: Map<string, string>, parties: string[]) {
  const failed = [...(h.get('x-failed-recipients') ?? '').matchAll(ADDRESS)]
    .map((m) => m[0].toLowerCase())
    .slice(0, MAX_RECIPIENTS);
  // The envelope sender is no recipient, on its own line or in the reply to it ("<<< 501 <sender>...").
  const lines = text.split(/\r?\n/);
  const senders = new Set(
    lines.flatMap((l) => (/^\s*(>>>\s*)?mail from\s*:/i.test(l) ? [l.match(ADDRESS)?.[0].toLowerCase() ?? ''] : [])),
  );
  const segments = new Map<string, string[]>();
  const preamble: string[] = [];
  let current: string[] = preamble;
  for (const line of lines) {
    const named = [...(SENDER_LINE.test(line) ? [] : line.matchAll(ADDRESS))]
      .map((m) => m[0].toLowerCase())
      .find((a) => !isParty(a, parties) && !senders.has(a) && (!failed.length || failed.includes(a)));
    if (named && (segments.has(named) || segments.size < MAX_RECIPIENTS))
      current = segments.get(named) ?? segments.set(named, []).get(named)!;
    current.push(line);
  }
  for (const a of failed) if (!segments.has(a)) segments.set(a, []);
  return {
    preamble: preamble.join('\n'),
    segments: [...segments].map(([recipient, lines]) => ({ recipient, text: lines.join('\n') })),
  };
}

function textBounce(subject: string, own: string, h: Map<string, string>, parties: string[], messageId: string | null) {
  const { preamble, segments } = recipientSegments(own, h, parties);
  // The subject is a mailer's headline ("Mail System Error - Returned Mail"): read only when the body is silent.
  const bodyFirst = (text: string) => {
    const c = classifyText(text);
    if (c.kind !== 'unparsed' && (c.kind !== 'soft_bounced' || textVerdict(text))) return c;
    const withSubject = classifyText(`${subject}\n${text}`);
    return withSubject.kind === 'unparsed' ? c : withSubject;
  };
  const general = bodyFirst(own);
  const several = segments.length > 1;
  const senderRefused = /^\s*>>> MAIL From:[^\n]*\r?\n\s*<<< 5\d\d/im.test(own);
  const read = (text: string, recipient: string | null): ParsedReport => {
    let c = several ? bodyFirst(text) : general;
    // A recipient's paragraph that says nothing readable: the report's general words decide.
    if (c.kind === 'unparsed' || c.kind === 'delayed') c = classifyText(`${subject}\n${preamble}\n${text}`);
    if (c.kind === 'unparsed')
      return unparsed(
        `a failure notice without a readable reason (${oneLine(subject, 200) ?? 'no subject'})`,
        messageId,
      );
    // The receiver refused our MAIL FROM (sendmail's `>>> MAIL From` then `<<< 5xx`): recipients that
    // got no reply of their own were never asked about, whatever the summary lines say of them.
    // An authoritative DNS answer is the reporting MTA's own lookup, not a question to that receiver.
    const unasked = senderRefused && !/^\s*<<< 5\d\d/m.test(text) && !/authoritative answer/i.test(text);
    const kind = c.kind === 'bounced' && (stageKeepsAddress(text) || unasked) ? 'soft_bounced' : c.kind;
    const line = text.split(/\r?\n/).find((l) => (c.statusCode ? l.includes(c.statusCode) : false));
    return {
      kind,
      statusCode: c.statusCode,
      diagnostic: oneLine(line) ?? oneLine(subject) ?? 'failure notice without a reason',
      recipient,
      messageId,
      ...(several ? { ofSeveral: true } : {}),
    };
  };
  if (!several) return [read(own, segments[0]?.recipient ?? null)];
  return segments.map((seg) => read(seg.text, seg.recipient));
}

/**
 * Japanese bounces often carry ISO-2022-JP without declaring a charset: the escape sequences say it.
 * Node's own TextDecoder (ICU) reads it; iconv-lite does not.
 */
function undeclaredJapanese(text: string): string {
  if (!text.includes('\x1b$B') && !text.includes('\x1b$@')) return text;
  try {
    return new TextDecoder('iso-2022-jp').decode(Buffer.from(text, 'latin1'));
  } catch {
    return text;
  }
}

/**
 * The text parts as our own MIME reader found them (it also finds a boundary the header lost); a
 * multipart whose boundary appears nowhere in its body is read as the text it is.
 */
const plainParts = (root: MimePart) =>
  leaves(root)
    .filter((p) => p.contentType === 'text/plain' || p.contentType.startsWith('multipart/'))
    .map((p) => p.body)
    .join('\n');

// mailparser is loaded with the first report read, not at start: only a bounce listener or a provider
// receiver reads reports, and it costs ~18 MiB of resident memory in every process (issue 29).
const loadParser = () => import('mailparser').then((m) => m.simpleParser);
let parser: ReturnType<typeof loadParser> | null = null;

async function readText(raw: Buffer, root: MimePart): Promise<{ text: string; subject: string }> {
  const simpleParser = await (parser ??= loadParser());
  try {
    // mailparser undoes transfer encodings and every charset, ISO-2022-JP included, and turns HTML to text.
    const mail = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, skipHtmlToText: false });
    // A part header it cannot read (`boundary=` on an unindented line, as some phone gateways write)
    // leaves it no text at all; the report is still there for a reader.
    const text =
      mail.text || (typeof mail.html === 'string' ? mail.html.replace(/<[^>]+>/g, ' ') : '') || plainParts(root);
    return { text: undeclaredJapanese(text), subject: mail.subject ?? '' };
  } catch {
    return { text: raw.toString('utf8'), subject: '' };
  }
}

export async function parseReportMessage(
  raw: Buffer,
  opts: { bounceDomain?: string | null } = {},
): Promise<ParsedReport[]> {
  try {
    return await read(raw, opts);
  } catch (e) {
    return [unparsed(`not a readable message: ${oneLine((e as Error).message, 200) ?? 'unknown error'}`)];
  }
}

async function read(raw: Buffer, opts: { bounceDomain?: string | null }): Promise<ParsedReport[]> {
  const root = parseMime(raw.toString('latin1'));
  const h = root.headers;
  const all = leaves(root);
  const { text, subject } = await readText(raw, root);
  const own = ownWords(text);
  const messageId = originalMessageId(root) ?? /^message-id:\s*(<[^>\s]+>)/im.exec(text)?.[1] ?? null;

  const arf = all.find((p) => p.contentType === 'message/feedback-report');
  if (arf) return [feedbackReport(arf, messageId)];
  const ses = sesNotification(text, raw);
  if (ses) return ses;

  const dsParts = all.filter((p) => /^message\/(global-)?delivery-status$/.test(p.contentType));
  let blocks = dsParts.flatMap((p) => dsnRecipients(p.body)).slice(0, MAX_RECIPIENTS);
  // No delivery-status part, or one without recipients: the fields may sit in the text (lost boundaries).
  if (!blocks.length)
    blocks = dsnRecipients(all.map((p) => (QUOTED.test(p.contentType) ? '' : p.body)).join('\n'), true);
  if (blocks.length) return fromDsn(blocks, own, messageId);

  const complaint = nearArf(root, subject, messageId);
  if (complaint) return [complaint];

  const from = (h.get('from') ?? '').toLowerCase();
  const failureLike =
    root.contentType === 'multipart/report' ||
    h.has('x-failed-recipients') ||
    DAEMON.test(from) ||
    FAILED_TEXT.test(subject) ||
    DELAYED_TEXT.test(subject);
  if (!failureLike && isAutoReply(h, subject))
    return [
      {
        kind: 'auto_reply',
        statusCode: null,
        diagnostic: oneLine(`auto-reply: ${subject || '(no subject)'}`, 300),
        recipient: addressField(h.get('from')),
        messageId,
      },
    ];

  // Not a standard report: read the text as a person would.
  const parties = [addressField(h.get('to')), addressField(h.get('from')), opts.bounceDomain ?? null].filter(
    (x): x is string => !!x,
  );
  // A message that does not present itself as a failure report (a person's or a robot's reply to the
  // return path) counts only with a reply code or words about the address, not with a stray "error".
  const speaks = textVerdict(own) !== null || findEnhancedStatus(own) !== null || findSmtpCode(own) !== null;
  if (!failureLike && (!speaks || classifyText(`${subject}\n${own}`).kind === 'unparsed'))
    return [
      unparsed(
        `not a bounce report: no delivery status or reply code found (${oneLine(subject, 200) ?? 'no subject'})`,
        messageId,
      ),
    ];
  const reports = textBounce(subject, own, h, parties, messageId);
  if (reports.every((r) => r.kind === 'unparsed') && dsParts.length)
    return [unparsed('the delivery-status part has no per-recipient fields (RFC 3464 §2.3)', messageId)];
  return reports;
}
