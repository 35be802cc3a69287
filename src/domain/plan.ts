// The plan in every gateway answer (SPEC §13): one entry per e-mail the request scheduled, cancelled or
// did not schedule, with the reason for those that will not go. Built from what both accept executors
// hand to plan.result (ids, contact, order state), so the PostgreSQL batch path answers the same.
import type { EmailKind } from '../db/schema.js';
import type { EmailReason } from '../schemas/scoped.js';

// `sending`: a cart e-mail a purchase found already handed to the relay (reason `in_flight`, issue 30).
export const PLAN_STATUSES = [
  'queued',
  'scheduled',
  'sent',
  'failed',
  'suppressed',
  'cancelled',
  'skipped',
  'sending',
] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

export interface PlanEntry {
  scheduled_email_id: number | null;
  template_key: string | null;
  step: string | null;
  due_at: string | null;
  status: PlanStatus;
  reason: EmailReason | null;
  /** In flight only: when the worker handed the e-mail to the relay (ISO 8601). */
  send_started_at?: string;
}

/** Why the worker will suppress an e-mail to this contact (the rules of delivery/worker.ts, SPEC §4). */
export function contactReason(kind: EmailKind, contactStatus: string): EmailReason | null {
  if (contactStatus === 'invalid') return 'contact_invalid';
  if (contactStatus === 'admin_blocked') return 'contact_admin_blocked';
  // An unsubscribed person still gets e-mails about their own order, course or document.
  if (contactStatus === 'unsubscribed' && kind !== 'transactional') return 'contact_unsubscribed';
  return null;
}

/** An e-mail the request did not schedule. */
export const skipped = (template_key: string | null, step: string | null, reason: EmailReason): PlanEntry => ({
  scheduled_email_id: null,
  template_key,
  step,
  due_at: null,
  status: 'skipped',
  reason,
});
