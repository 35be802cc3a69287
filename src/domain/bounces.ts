// What a report about a sent e-mail means (SPEC §12): its classification from DSN status codes (RFC 3463
// x.y.z), bare SMTP reply codes and the wording of common non-standard bounces; the e-mail status it
// leads to (never backwards); and what it does to the contact. Plain functions, no I/O.
import { DELAYED_TEXT, directoryRejection, FAILED_TEXT, saysStorageFull, textVerdict } from './bounceWording.js';
import type { ContactStatus, ContactStatusReason, EmailStatus, OutcomeStatus, ReportKind } from './statuses.js';

export interface Classified {
  kind: ReportKind;
  /** The most precise code found: an enhanced status (`5.1.1`) or else an SMTP reply code (`550`). */
  statusCode: string | null;
}

// Codes that by themselves name the address (RFC 3463): bad destination mailbox (5.1.1) or system
// (5.1.2), mailbox moved (5.1.6), null MX (5.1.10), mailbox disabled (5.2.1), no route to the domain
// (5.4.4). Generic codes (5.0.0, 5.1.0, 5.1.3, 5.5.0, vendor details like 5.1.351) leave it to the words.
const ADDRESS_STATUSES = /^5\.(1\.(1|2|6|10)|2\.1|4\.4)$/;
// Bad sender mailbox or system (5.1.7, 5.1.8): our address is refused, the recipient's may be fine.
const SENDER_STATUSES = /^5\.1\.[78]$/;
const POLICY_STATUSES = /^5\.7\.\d{1,3}$/;

/** An enhanced status code (RFC 3463 `class.subject.detail`) in a text, e.g. in `550 5.1.1 <x>: unknown`. */
export function findEnhancedStatus(text: string): string | null {
  const m = /(?:^|[\s(#;:,'"-])([245]\.\d{1,3}\.\d{1,3})(?=$|[\s).;:,'"-])/.exec(text);
  return m ? m[1] : null;
}

/** A three-digit SMTP reply code at the start of a reply line in a text (`550 ...`, `550-...`, `smtp; 550`). */
export function findSmtpCode(text: string): number | null {
  const m = /(?:^|[\s;:(<'])([245][0-5]\d)(?=[ -]|$)/m.exec(text);
  return m ? Number(m[1]) : null;
}

/**
 * Classifies a reply by its words first, then its codes (SPEC §19): hard only when the address is gone,
 * every other failure soft; a temporary code (4xx, 4.x.x) is soft whatever the words.
 */
export function classifyCodes(status: string | null, smtpCode: number | null, diagnostic: string): Classified {
  const text = diagnostic ?? '';
  const statusCode = status ?? (smtpCode !== null ? String(smtpCode) : null);
  const cls = status ? status[0] : smtpCode !== null ? String(smtpCode)[0] : null;
  if (cls === '2') return { kind: 'delivered', statusCode };
  if (cls === '4' || (cls === null && DELAYED_TEXT.test(text) && !FAILED_TEXT.test(text)))
    return { kind: 'soft_bounced', statusCode };
  // A 5.x.x status with a 4xx reply (or the reverse) is a receiver unsure of itself: not a dead address.
  if (status && smtpCode !== null && status[0] !== String(smtpCode)[0]) return { kind: 'soft_bounced', statusCode };
  if (status && SENDER_STATUSES.test(status)) return { kind: 'soft_bounced', statusCode };
  // Security or policy (RFC 3463 X.7.x: "per-host or per-recipient filtering") in the receiver's own
  // reply: it refused on policy, so "user unknown" beside it is a filter's answer, not proof the address
  // is gone. Not a code the reporting MTA chose (its Status field), and not Exchange Online's words for
  // an address its directory does not know.
  if (POLICY_STATUSES.test(findEnhancedStatus(text) ?? '') && !directoryRejection(text))
    return { kind: 'soft_bounced', statusCode };
  const words = textVerdict(text);
  if (words === 'gone') return { kind: 'bounced', statusCode };
  if (words === 'keeps_address') return { kind: 'soft_bounced', statusCode };
  if (status && ADDRESS_STATUSES.test(status)) return { kind: 'bounced', statusCode };
  if (cls === '5') return { kind: 'soft_bounced', statusCode };
  return { kind: 'unparsed', statusCode };
}

/**
 * An RFC 3464 per-recipient block: `Action` (failed, delayed, delivered, relayed, expanded), `Status` and
 * the Diagnostic-Code; `context` is what the report's human-readable part says about this recipient,
 * read when the block's own words and code say nothing precise.
 */
export function classifyDsn(
  action: string | null,
  status: string | null,
  diagnostic: string | null,
  context = '',
): Classified {
  const a = (action ?? '').trim().toLowerCase();
  const st = status ? findEnhancedStatus(` ${status.trim()}`) : null;
  const diag = diagnostic ?? '';
  if (a === 'delayed') return { kind: 'delayed', statusCode: st };
  if (a === 'delivered' || a === 'relayed' || a === 'expanded') return { kind: 'delivered', statusCode: st };
  // A full mailbox or system is soft whatever the code, in the block's words or the report's own text
  // about this recipient (SPEC §22: "Not enough disk space" beside a 5.1.1 and "User Unknown").
  if (a !== 'delayed' && (saysStorageFull(diag) || saysStorageFull(context)))
    return { kind: 'soft_bounced', statusCode: st ?? findEnhancedStatus(diag) };
  const diagStatus = findEnhancedStatus(diag);
  // A precise code in the receiver's own reply says more than a generic one the reporting MTA added.
  const useStatus = diagStatus && (!st || /^5\.0\.0$/.test(st) || st[0] !== diagStatus[0]) ? diagStatus : st;
  let c = classifyCodes(useStatus, findSmtpCode(diag), diag);
  if (c.kind !== 'bounced' && !textVerdict(diag) && context && !(useStatus && useStatus[0] === '4')) {
    // The block said nothing in words: the human-readable part may (Status: 5.0.0 and "No such domain").
    const fromText = textVerdict(context);
    if (fromText === 'gone' && c.kind !== 'delivered') c = { ...c, kind: 'bounced' };
    else if (fromText === 'keeps_address' && c.kind === 'unparsed') c = { ...c, kind: 'soft_bounced' };
  }
  // Action: failed with only a success or unknown code is still a failure the receiver reported.
  if ((a === 'failed' || a === '') && (c.kind === 'delivered' || c.kind === 'unparsed'))
    return { ...c, kind: a === 'failed' || useStatus ? 'soft_bounced' : c.kind };
  return c;
}

/**
 * A bounce that is not a DSN (qmail, old Exim, Domino, hand-written autoresponders): the reply quoted in
 * the text, else its wording. Returns `unparsed` when the text does not read like a bounce at all.
 */
export function classifyText(text: string): Classified {
  const sample = text.slice(0, 20_000);
  if (DELAYED_TEXT.test(sample) && !FAILED_TEXT.test(sample))
    return { kind: 'delayed', statusCode: findEnhancedStatus(sample) };
  // The first permanent reply line is the receiver's own word; later lines may be about another try.
  const lines = sample.split(/\r?\n/);
  const at = lines.findIndex((l) => /(^|[\s<>:;(#'])(5[0-5]\d[\s-]|5\.\d{1,3}\.\d{1,3})/.test(l));
  if (at >= 0) {
    // A continuation line belongs to the reply; a line with a code of its own is another reply.
    const next = lines[at + 1] ?? '';
    const reply = /^\s*([<>]{3}\s*)?[245]\d\d[\s-]/.test(next) ? lines[at] : `${lines[at]} ${next}`;
    const r = classifyCodes(findEnhancedStatus(reply), findSmtpCode(reply), reply);
    if (textVerdict(reply)) return r;
  }
  // A transcript's 2xx lines are the steps that worked; a temporary refusal among them is the failure.
  const temporary = lines.find((l) => /(^|[\s<>:;(#'])(4[0-5]\d[\s-]|4\.\d{1,3}\.\d{1,3})/.test(l));
  if (at < 0 && temporary)
    return {
      kind: 'soft_bounced',
      statusCode: findEnhancedStatus(temporary) ?? findSmtpCode(temporary)?.toString() ?? null,
    };
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
  if (kind === 'delayed' || kind === 'unparsed' || kind === 'auto_reply') return null;
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
