// Inbound reports about sent e-mails (DSN, ARF, provider webhooks; SPEC §12) and the lookups that match
// them to e-mails: the VERP id, the Message-ID, or the provider's own message id.
import { sql } from 'kysely';
import type { EmailReportRow, EmailReportsTable, EmailStatus } from '../db/schema.js';
import type { Insertable } from 'kysely';
import { SENT_STATUSES, type OutcomeStatus } from '../domain/statuses.js';
import { emailIdByRelayId } from './delivery.js';
import { iso, parseJson, type Executor } from './types.js';

export type NewReport = Insertable<EmailReportsTable>;

/** Inserts a report; undefined when the same report (source and dedupe key) was stored before. */
export async function insertReport(db: Executor, r: NewReport): Promise<number | undefined> {
  const row = await db
    .insertInto('email_reports')
    .values(r)
    .onConflict((oc) => oc.columns(['source', 'dedupe_key']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

export async function setReportEffects(db: Executor, id: number, effects: Record<string, unknown>): Promise<void> {
  await db
    .updateTable('email_reports')
    .set({ effects: JSON.stringify(effects) })
    .where('id', '=', id)
    .execute();
}

/** The e-mail's reports, oldest first (the order they arrived in). */
export async function reportsOfEmail(db: Executor, emailId: number) {
  const rows = await db
    .selectFrom('email_reports')
    .selectAll()
    .where('email_id', '=', emailId)
    .orderBy('id', 'asc')
    .limit(200)
    .execute();
  return rows.map(toReportView);
}

export function toReportView(r: EmailReportRow) {
  return {
    id: r.id,
    received_at: iso(r.received_at)!,
    source: r.source,
    kind: r.kind,
    status_code: r.status_code,
    diagnostic: r.diagnostic,
    recipient: r.recipient,
    message_id: r.message_id,
    provider_message_id: r.provider_message_id,
    matched_by: r.matched_by,
    email_id: r.email_id,
    effects: parseJson<Record<string, unknown>>(r.effects, {}),
    raw: r.raw,
  };
}

export interface MatchedEmail {
  id: number;
  project_id: number;
  contact_id: number;
  status: EmailStatus;
  to_email: string;
  message_id: string | null;
  order_id: string | null;
  event_id: number | null;
  template_key: string;
  chain_step: string | null;
}

const MATCH_COLUMNS = [
  'id',
  'project_id',
  'contact_id',
  'status',
  'to_email',
  'message_id',
  'order_id',
  'event_id',
  'template_key',
  'chain_step',
] as const;

export async function emailForReportById(db: Executor, id: number): Promise<MatchedEmail | undefined> {
  return db.selectFrom('scheduled_emails').select(MATCH_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** Message-IDs are stored with angle brackets; reports quote them with or without. */
export function normaliseMessageId(raw: string | null | undefined): string | null {
  const t = (raw ?? '').trim().replace(/^<+|>+$/g, '');
  return t && t.length <= 998 && !/[\s<>]/.test(t) ? `<${t}>` : null;
}

export async function emailForReportByMessageId(
  db: Executor,
  messageId: string,
  projectId: number | null,
): Promise<MatchedEmail | undefined> {
  let q = db.selectFrom('scheduled_emails').select(MATCH_COLUMNS).where('message_id', '=', messageId);
  if (projectId !== null) q = q.where('project_id', '=', projectId);
  return q.orderBy('id', 'desc').executeTakeFirst();
}

/**
 * The e-mail a provider knows by its own id: the relay's queue id or the provider's message id recorded
 * per delivery attempt (`email_attempts`, SPEC §11), of the project the webhook is for.
 */
export type ProviderIdLookup = (
  db: Executor,
  projectId: number,
  providerMessageId: string,
) => Promise<MatchedEmail | undefined>;

export const findEmailByProviderId: ProviderIdLookup = async (db, projectId, providerMessageId) => {
  const id = await emailIdByRelayId(db, providerMessageId);
  if (id === null) return undefined;
  const e = await emailForReportById(db, id);
  return e && e.project_id === projectId ? e : undefined;
};

/** Soft-bounced e-mails of a contact received since `since` (each e-mail counts once). */
export async function softBouncedEmails(db: Executor, contactId: number, since: number): Promise<number> {
  const r = await db
    .selectFrom('email_reports')
    .select(sql<number>`count(distinct email_id)`.as('n'))
    .where('contact_id', '=', contactId)
    .where('kind', '=', 'soft_bounced')
    .where('received_at', '>=', since)
    .where('email_id', 'is not', null)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** Moves an e-mail to an outcome only from the status the decision was made on (no lost race). */
export async function setEmailOutcome(
  db: Executor,
  id: number,
  from: EmailStatus,
  to: OutcomeStatus,
  now: number,
): Promise<boolean> {
  const r = await db
    .updateTable('scheduled_emails')
    .set({ status: to, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows ?? 0) > 0;
}

/** A project's e-mails sent since `since` and how many of them complained (test sends left out). */
export async function complaintWindow(db: Executor, projectId: number, since: number) {
  const row = await db
    .selectFrom('scheduled_emails')
    .select([
      sql<number>`count(*)`.as('sent'),
      sql<number>`sum(case when status = 'complained' then 1 else 0 end)`.as('complained'),
    ])
    .where('project_id', '=', projectId)
    .where('sent_at', '>=', since)
    .where('status', 'in', [...SENT_STATUSES])
    .where('is_test', '=', 0)
    .executeTakeFirst();
  return { sent: Number(row?.sent ?? 0), complained: Number(row?.complained ?? 0) };
}
