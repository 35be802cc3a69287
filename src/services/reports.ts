// One way in for every report about a sent e-mail (SPEC §12), whichever door it came through (the VERP
// listener or a provider webhook): store it once, match it to its e-mail, move the e-mail to its outcome,
// apply the contact effect, and list it in the chronology, all in one transaction.
import { createHash } from 'node:crypto';
import { leaveAll } from './consent.js';
import type { Db } from '../db/index.js';
import type { Deps } from './context.js';
import { inTransaction } from '../db/groupCommit.js';
import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import {
  contactChange,
  DEFAULT_SOFT_BOUNCE_POLICY,
  nextEmailStatus,
  PAUSE_REASON,
  PAUSE_WINDOW_MS,
  shouldPauseMarketing,
  type SoftBouncePolicy,
} from '../domain/bounces.js';
import type { OutcomeStatus, ReportKind, ReportSource } from '../domain/statuses.js';
import { cleanText } from '../domain/inputRules.js';
import { findContact, setContactStatus } from '../repos/contacts.js';
import { contactNotice, enqueueEmailWebhooks, enqueueSiteWebhooks } from './siteWebhooks/enqueue.js';
import { insertEvent } from '../repos/events.js';
import { pauseMarketing } from '../repos/projects.js';
import {
  complaintWindow,
  emailForReportById,
  emailForReportByMessageId,
  findEmailByProviderId,
  insertReport,
  normaliseMessageId,
  setEmailOutcome,
  setReportEffects,
  softBouncedEmails,
  type MatchedEmail,
  type ProviderIdLookup,
} from '../repos/reports.js';

/** Raw bodies are kept for the e-mail's page, up to this many characters (the head, which says most). */
export const RAW_LIMIT = 64 * 1024;

export interface InboundReport {
  source: ReportSource;
  /** Known for a provider webhook (the URL names the project); null for the VERP listener. */
  projectId: number | null;
  kind: ReportKind;
  statusCode: string | null;
  diagnostic: string | null;
  recipient: string | null;
  /** The e-mail named by a signed VERP address. */
  verpEmailId?: number | null;
  messageId?: string | null;
  providerMessageId?: string | null;
  /**
   * The message reported on several recipients (a DSN with several per-recipient blocks): only the
   * block naming the e-mail's own address may change it; the others are kept on it and change nothing.
   */
  ofSeveral?: boolean;
  /** Identifies the report for replays: the provider's event id, else a hash of the raw text. */
  dedupeKey?: string | null;
  raw: string;
}

export interface ReportOutcome {
  reportId: number | null;
  duplicate: boolean;
  emailId: number | null;
  emailStatus: { from: string; to: OutcomeStatus } | null;
  contactStatus: { from: string; to: string; reason: string } | null;
  /** This report paused the project's campaigns and cart chains. */
  marketingPaused?: boolean;
}

export interface BounceContext {
  db: Db;
  now: () => number;
  softBounces?: SoftBouncePolicy;
  /** The provider-id lookup (issue 13's delivery attempts); finds nothing by default. */
  providerLookup?: ProviderIdLookup;
  /** Counts stored reports (metrics): by source and kind. */
  onReport?: (source: ReportSource, kind: ReportKind) => void;
}

/** The recording context of a process: its database, clock, soft-bounce policy and metrics. */
export function bounceContext(deps: Deps): BounceContext {
  const b = deps.config.bounces;
  return {
    db: deps.db,
    now: () => deps.clock.now(),
    softBounces: { limit: b.softBounceLimit, windowDays: b.softBounceWindowDays },
    onReport: (source, kind) => deps.metrics?.reports.inc({ source, kind }),
    ...(deps.providerIdLookup ? { providerLookup: deps.providerIdLookup } : {}),
  };
}

/**
 * The report with U+0000 (which PostgreSQL refuses in text and in parameters) and unpaired surrogates
 * replaced: provider bodies and bounce messages are read as they come, no schema checked their text.
 */
function storable(r: InboundReport): InboundReport {
  const t = <T extends string | null | undefined>(s: T): T => (s ? (cleanText(s) as T) : s);
  return {
    ...r,
    statusCode: t(r.statusCode),
    diagnostic: t(r.diagnostic),
    recipient: t(r.recipient),
    messageId: t(r.messageId),
    providerMessageId: t(r.providerMessageId),
    dedupeKey: t(r.dedupeKey),
    raw: t(r.raw),
  };
}

const clip = (s: string | null | undefined, max: number) => (s == null ? null : s.length > max ? s.slice(0, max) : s);

async function match(trx: Transaction<Database>, r: InboundReport, lookup: ProviderIdLookup) {
  if (r.verpEmailId) {
    const e = await emailForReportById(trx, r.verpEmailId);
    if (e && (r.projectId === null || e.project_id === r.projectId)) return { email: e, by: 'verp' };
  }
  const mid = normaliseMessageId(r.messageId);
  if (mid) {
    const e = await emailForReportByMessageId(trx, mid, r.projectId);
    if (e) return { email: e, by: 'message_id' };
  }
  if (r.providerMessageId && r.projectId !== null) {
    const e = await lookup(trx, r.projectId, r.providerMessageId);
    if (e) return { email: e, by: 'provider_id' };
  }
  return { email: undefined as MatchedEmail | undefined, by: null };
}

export async function recordReport(ctx: BounceContext, report: InboundReport): Promise<ReportOutcome> {
  const r = storable(report);
  const now = ctx.now();
  const policy = ctx.softBounces ?? DEFAULT_SOFT_BOUNCE_POLICY;
  const raw = r.raw.length > RAW_LIMIT ? r.raw.slice(0, RAW_LIMIT) : r.raw;
  const dedupeKey = clip(r.dedupeKey, 300) || createHash('sha256').update(report.raw).digest('hex');
  const out = await inTransaction(ctx.db, async (trx): Promise<ReportOutcome> => {
    const { email, by } = await match(trx, r, ctx.providerLookup ?? findEmailByProviderId);
    const projectId = email?.project_id ?? r.projectId;
    const reportId = await insertReport(trx, {
      project_id: projectId,
      email_id: email?.id ?? null,
      contact_id: email?.contact_id ?? null,
      received_at: now,
      source: r.source,
      kind: r.kind,
      status_code: clip(r.statusCode, 32),
      diagnostic: clip(r.diagnostic, 2000),
      recipient: clip(r.recipient, 320),
      message_id: clip(normaliseMessageId(r.messageId), 1000),
      provider_message_id: clip(r.providerMessageId, 300),
      matched_by: by,
      dedupe_key: dedupeKey,
      raw,
    });
    const result: ReportOutcome = {
      reportId: reportId ?? null,
      duplicate: reportId === undefined,
      emailId: email?.id ?? null,
      emailStatus: null,
      contactStatus: null,
    };
    // A replayed report changes nothing twice; one about an unknown message is kept and changes nothing.
    if (reportId === undefined || !email) {
      if (reportId !== undefined && projectId !== null) await logChronology(trx, r, projectId, reportId, now, result);
      return result;
    }
    if (r.ofSeveral && aboutAnotherRecipient(r.recipient, email.to_email)) {
      await logChronology(trx, r, email.project_id, reportId, now, result, email);
      return result;
    }
    const next = nextEmailStatus(email.status, r.kind);
    if (next && (await setEmailOutcome(trx, email.id, email.status, next, now))) {
      result.emailStatus = { from: email.status, to: next };
      // The site hears of the outcome in the transaction of the change (SPEC §13).
      await enqueueEmailWebhooks(trx, [{ email, kind: `email.${next}`, reason: clip(r.diagnostic, 500) }], now);
      // Above the stop level the project's campaigns and cart chains pause, in this same transaction.
      if (
        next === 'complained' &&
        shouldPauseMarketing(await complaintWindow(trx, email.project_id, now - PAUSE_WINDOW_MS))
      )
        result.marketingPaused = await pauseMarketing(trx, email.project_id, now, PAUSE_REASON);
    }
    const contact = await findContact(trx, email.contact_id);
    if (contact) {
      const soft =
        r.kind === 'soft_bounced' ? await softBouncedEmails(trx, contact.id, now - policy.windowDays * 86_400_000) : 0;
      const change = contactChange(r.kind, contact.status, soft, policy);
      if (
        change &&
        (await setContactStatus(trx, contact.id, change.status, now, change.from, {
          reason: change.reason,
          emailId: email.id,
          reportId,
        }))
      ) {
        result.contactStatus = { from: contact.status, to: change.status, reason: change.reason };
        // A complaint withdraws from every advertising topic, on the record (SPEC §18).
        if (change.status === 'unsubscribed')
          await leaveAll(trx, { ...contact, status: 'unsubscribed' }, 'complaint', now);
        if (change.status === 'unsubscribed')
          await enqueueSiteWebhooks(
            trx,
            contact.project_id,
            'contact.unsubscribed',
            contactNotice(contact, 'complaint'),
            now,
          );
      }
    }
    const effects = effectsOf(result);
    await setReportEffects(trx, reportId, effects);
    await logChronology(trx, r, email.project_id, reportId, now, result, email);
    return result;
  });
  if (!out.duplicate) ctx.onReport?.(r.source, r.kind);
  return out;
}

/** A report block names another address than the e-mail's (case-insensitively, as addresses compare). */
function aboutAnotherRecipient(recipient: string | null, to: string | null | undefined): boolean {
  return !!recipient && !!to && recipient.trim().toLowerCase() !== to.trim().toLowerCase();
}

function effectsOf(o: ReportOutcome) {
  return {
    ...(o.emailStatus ? { email_status: o.emailStatus } : {}),
    ...(o.contactStatus ? { contact_status: o.contactStatus } : {}),
    ...(o.marketingPaused ? { marketing_paused: true } : {}),
  };
}

/** The report as an event of its own in the project's chronology (SPEC §5 endpoint `report`). */
async function logChronology(
  trx: Transaction<Database>,
  r: InboundReport,
  projectId: number,
  reportId: number,
  now: number,
  o: ReportOutcome,
  email?: MatchedEmail,
) {
  await insertEvent(trx, {
    project_id: projectId,
    key_id: null,
    key_last4: null,
    endpoint: 'report',
    event_type: `report.${r.kind}`,
    email: clip(r.recipient ?? email?.to_email ?? null, 320),
    order_id: email?.order_id ?? null,
    idempotency_key: null,
    http_status: 200,
    accepted: true,
    error_code: null,
    payload: JSON.stringify({
      report_id: reportId,
      source: r.source,
      kind: r.kind,
      status_code: r.statusCode,
      diagnostic: clip(r.diagnostic, 2000),
      message_id: normaliseMessageId(r.messageId),
      provider_message_id: r.providerMessageId ?? null,
    }),
    effects: JSON.stringify({ scheduled_email_id: o.emailId, report_id: reportId, ...effectsOf(o) }),
    created_at: now,
  });
}
