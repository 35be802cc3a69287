// Why an e-mail will not go, as the plan and the scoped reads name it (SPEC §13). The delivery worker and
// the purchase record a sentence in last_error; the reason is read from the status and that sentence so
// that rows written before the vocabulary existed are named too.
import { MISSING_FIELDS_NOTE } from './templateContract.js';
import type { EmailStatus } from '../db/schema.js';
import type { EmailReason } from '../schemas/scoped.js';
import { ORDER_PAID_NOTE } from './handOver.js';
import { SENT_STATUSES } from './statuses.js';

/** The start of last_error of an e-mail whose render was stopped at RENDER_BUDGET_MS (SPEC §20). */
export const RENDER_BUDGET_NOTE = 'render_budget:';

/**
 * The start of last_error of an e-mail given up after waiting SEND_GIVE_UP_AFTER for its relay (SPEC §20):
 * reason `expired`; the rest of the note keeps the relay's last reply.
 */
export const EXPIRED_NOTE = 'expired:';

/**
 * `inFlightEventId`: the purchase that found this cart e-mail already handed to the relay; while it is
 * being sent, and once it went, its reason is `in_flight`.
 */
export function emailReason(
  status: EmailStatus,
  note: string | null,
  inFlightEventId: number | null = null,
): EmailReason | null {
  if (inFlightEventId !== null && (status === 'sending' || (SENT_STATUSES as readonly string[]).includes(status)))
    return 'in_flight';
  const n = (note ?? '').toLowerCase();
  if (status === 'suppressed') {
    if (n.includes('unsubscribed') || n.includes('left the topic')) return 'contact_unsubscribed';
    if (n.includes('no consent')) return 'no_consent';
    if (n.includes('blocked')) return 'contact_admin_blocked';
    if (n.includes('invalid')) return 'contact_invalid';
    return null;
  }
  // The project's daily quota is used up (issue 13): the e-mail waits for the next day.
  if ((status === 'queued' || status === 'scheduled') && n.startsWith('quota:')) return 'quota';
  if (status === 'failed' && n.startsWith(MISSING_FIELDS_NOTE)) return 'missing_fields';
  if (status === 'failed' && n.startsWith('template error:')) return 'template_error';
  if (status === 'failed' && n.startsWith(RENDER_BUDGET_NOTE)) return 'render_budget';
  if (status === 'failed' && n.startsWith(EXPIRED_NOTE)) return 'expired';
  if (status === 'cancelled') {
    if (n.includes(ORDER_PAID_NOTE)) return 'cancelled_by_purchase';
    if (n.includes('administrator')) return 'cancelled_by_admin';
  }
  return null;
}
