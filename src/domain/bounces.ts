// What a report about a sent e-mail means (SPEC §12): its classification from DSN status codes (RFC 3463
// x.y.z), bare SMTP reply codes and the wording of common non-standard bounces; the e-mail status it
// leads to (never backwards); and what it does to the contact. Plain functions, no I/O.
import type { ContactStatus, ContactStatusReason, EmailStatus, OutcomeStatus, ReportKind } from './statuses.js';

export interface Classified {
  kind: ReportKind;
  /** The most precise code found: an enhanced status (`5.1.1`) or else an SMTP reply code (`550`). */
  statusCode: string | null;
}

// 5.1.x subjects about the destination address itself (5.1.7/5.1.8 are about the sender), the disabled
// mailbox (5.2.1), and an unroutable domain (5.4.4: no MX or A, a null MX): the address cannot receive.
const ADDRESS_STATUSES = /^5\.(1\.(0|1|2|3|6|10)|2\.1|4\.4)$/;

// The wording of address failures across Postfix, Exim, qmail, Exchange, Gmail, Yandex, Mail.ru.
const ADDRESS_TEXT =
  /(no such (user|mailbox|recipient|address|account)|user (unknown|not found|does not exist|doesn't exist)|unknown (user|recipient|mailbox|address)|(mailbox|recipient|address|account)\b[^.\n]{0,40}\b(unknown|not found|does not exist|doesn't exist|is disabled|disabled|unavailable|invalid|inactive|rejected)|invalid (recipient|mailbox|address)|recipient address rejected|host or domain name not found|domain not found|couldn't find any host|no mx|нет такого|не существует|пользователь не найден)/i;
const SOFT_TEXT =
  /(mailbox (is )?full|over ?quota|quota exceeded|insufficient (storage|space)|try again later|temporar(il)?y|greylist|rate limit|too many (messages|connections))/i;
const DELAYED_TEXT =
  /(delivery (to the following recipients? )?(has been )?delayed|(will|shall) (continue|keep) (trying|to try)|has not (yet )?been delivered|still trying|warning: message .* delayed)/i;
const FAILED_TEXT =
  /(could not be delivered|undeliverable|delivery (has )?failed|permanent (error|failure)|returned mail|mail delivery failed|failure notice|не может быть доставлено|не доставлено)/i;

/** An enhanced status code (RFC 3463 `class.subject.detail`) in a text, e.g. in `550 5.1.1 <x>: unknown`. */
export function findEnhancedStatus(text: string): string | null {
  const m = /(?:^|[\s(#;:,])([245]\.\d{1,3}\.\d{1,3})(?=$|[\s).;:,])/.exec(text);
  return m ? m[1] : null;
}

/** A three-digit SMTP reply code at the start of a reply line in a text (`550 ...`, `550-...`, `smtp; 550`). */
export function findSmtpCode(text: string): number | null {
  const m = /(?:^|[\s;:(])([245][0-5]\d)(?=[ -])/m.exec(text);
  return m ? Number(m[1]) : null;
}

/** Classifies by an enhanced status, falling back on the reply code and then the diagnostic's wording. */
export function classifyCodes(status: string | null, smtpCode: number | null, diagnostic: string): Classified {
  const text = diagnostic ?? '';
  if (status) {
    const cls = status[0];
    if (cls === '2') return { kind: 'delivered', statusCode: status };
    if (cls === '4') return { kind: 'soft_bounced', statusCode: status };
    if (ADDRESS_STATUSES.test(status)) return { kind: 'bounced', statusCode: status };
    // 5.0.0 and friends say nothing precise: the wording decides whether the address is at fault.
    if (/^5\.0\.0$/.test(status) && ADDRESS_TEXT.test(text)) return { kind: 'bounced', statusCode: status };
    return { kind: 'soft_bounced', statusCode: status };
  }
  if (smtpCode !== null) {
    const code = String(smtpCode);
    if (smtpCode < 300) return { kind: 'delivered', statusCode: code };
    if (smtpCode < 500) return { kind: 'soft_bounced', statusCode: code };
    if (smtpCode !== 552 && ADDRESS_TEXT.test(text)) return { kind: 'bounced', statusCode: code };
    return { kind: 'soft_bounced', statusCode: code };
  }
  if (ADDRESS_TEXT.test(text)) return { kind: 'bounced', statusCode: null };
  if (SOFT_TEXT.test(text)) return { kind: 'soft_bounced', statusCode: null };
  return { kind: 'unparsed', statusCode: null };
}

/**
 * An RFC 3464 per-recipient block: `Action` (failed, delayed, delivered, relayed, expanded) and `Status`
 * decide; the Diagnostic-Code refines a vague 5.0.0.
 */
export function classifyDsn(action: string | null, status: string | null, diagnostic: string | null): Classified {
  const a = (action ?? '').trim().toLowerCase();
  const st = status ? findEnhancedStatus(` ${status.trim()}`) : null;
  const diag = diagnostic ?? '';
  if (a === 'delayed') return { kind: 'delayed', statusCode: st };
  if (a === 'delivered' || a === 'relayed' || a === 'expanded') return { kind: 'delivered', statusCode: st };
  const c = classifyCodes(st ?? findEnhancedStatus(diag), findSmtpCode(diag), diag);
  // Action: failed with only a success or unknown code is still a failure the receiver reported.
  if (a === 'failed' && (c.kind === 'delivered' || c.kind === 'unparsed')) return { ...c, kind: 'soft_bounced' };
  return c;
}

/**
 * A bounce that is not a DSN (qmail, old Exim, hand-written autoresponders): the reply quoted in the text,
 * else its wording. Returns `unparsed` when the text does not read like a bounce at all.
 */
export function classifyText(text: string): Classified {
  const sample = text.slice(0, 20_000);
  if (DELAYED_TEXT.test(sample) && !FAILED_TEXT.test(sample))
    return { kind: 'delayed', statusCode: findEnhancedStatus(sample) };
  const c = classifyCodes(findEnhancedStatus(sample), findSmtpCode(sample), sample);
  if (c.kind === 'delivered') return { kind: 'unparsed', statusCode: c.statusCode };
  if (c.kind === 'unparsed' && FAILED_TEXT.test(sample)) return { kind: 'soft_bounced', statusCode: null };
  return c;
}

// Later outcomes say more than earlier ones: a soft bounce can still be followed by delivery (the
// receiver's retry worked), delivery by a late bounce or a complaint; a complaint is final. A report
// that would step back (delivered after bounced, soft after delivered) is kept but changes nothing.
const RANK: Record<OutcomeStatus | 'sent', number> = {
  sent: 0,
  soft_bounced: 1,
  delivered: 2,
  bounced: 3,
  complained: 4,
};

/** The e-mail's status after a report, or null when the report must not change it. */
export function nextEmailStatus(current: EmailStatus, kind: ReportKind): OutcomeStatus | null {
  if (kind === 'delayed' || kind === 'unparsed') return null;
  // Only an e-mail the relay accepted can have an outcome; a report about one still pending or failed
  // (an attempt the relay took before a later retry, a stray report) is recorded and changes nothing.
  if (!(current in RANK)) return null;
  return RANK[kind] > RANK[current as keyof typeof RANK] ? kind : null;
}

export interface SoftBouncePolicy {
  /** Soft-bounced e-mails within the window that make the address invalid (SOFT_BOUNCE_LIMIT). */
  limit: number;
  /** SOFT_BOUNCE_WINDOW_DAYS. */
  windowDays: number;
}

export const DEFAULT_SOFT_BOUNCE_POLICY: SoftBouncePolicy = { limit: 3, windowDays: 7 };

export interface ContactChange {
  status: ContactStatus;
  reason: ContactStatusReason;
  /** The statuses the change may replace; anything else (admin_blocked) is stronger and kept. */
  from: ContactStatus[];
}

/**
 * What a report does to the contact. `softBounces` counts the contact's soft-bounced e-mails in the
 * window, this one included. A complaint never overrides `invalid` (nothing is sent there anyway).
 */
export function contactChange(
  kind: ReportKind,
  current: ContactStatus,
  softBounces: number,
  policy: SoftBouncePolicy = DEFAULT_SOFT_BOUNCE_POLICY,
): ContactChange | null {
  let change: ContactChange | null = null;
  if (kind === 'bounced') change = { status: 'invalid', reason: 'hard_bounce', from: ['active', 'unsubscribed'] };
  else if (kind === 'complained') change = { status: 'unsubscribed', reason: 'complaint', from: ['active'] };
  else if (kind === 'soft_bounced' && softBounces >= policy.limit)
    change = { status: 'invalid', reason: 'soft_bounces', from: ['active', 'unsubscribed'] };
  return change && change.from.includes(current) ? change : null;
}

/**
 * The big mailbox providers' rules of thumb (SPEC §12, issue 14): above 2 % hard bounces or 0.1 %
 * complaints a sender is warned; above 0.3 % complaints (Gmail's and Yahoo's 2024 bulk-sender limit) it
 * is throttled or blocked. Rates are over the e-mails sent in a window.
 */
export const RATE_THRESHOLDS = { bounceWarn: 0.02, complaintWarn: 0.001, complaintStop: 0.003 } as const;

export type RateLevel = 'ok' | 'warning' | 'stop';

export function rateLevel(f: { sent: number; bounced: number; complained: number }): RateLevel {
  if (f.sent <= 0) return 'ok';
  const complaints = f.complained / f.sent;
  if (complaints > RATE_THRESHOLDS.complaintStop) return 'stop';
  if (complaints > RATE_THRESHOLDS.complaintWarn || f.bounced / f.sent > RATE_THRESHOLDS.bounceWarn) return 'warning';
  return 'ok';
}

/** Campaigns and cart chains pause over this window of sent e-mails (issue 14: Gmail's 0.3 % is per week). */
export const PAUSE_WINDOW_MS = 7 * 86_400_000;
export const PAUSE_REASON = 'complaint rate above 0.3 %';

/**
 * Whether a project's marketing (campaigns, cart chains) must pause: its complaints over the e-mails
 * sent in the last 7 days (test sends left out) are above the stop level. Transactional mail goes on.
 */
export function shouldPauseMarketing(w: { sent: number; complained: number }): boolean {
  return w.sent > 0 && w.complained / w.sent > RATE_THRESHOLDS.complaintStop;
}

/** The kinds of e-mail a marketing pause holds back. */
export function pausedByMarketingStop(kind: string): boolean {
  return kind === 'campaign' || kind === 'cart';
}
