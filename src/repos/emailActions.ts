// What an administrator may do to one e-mail from the UI: cancel it before it leaves, or send a failed
// one again. Both are single conditional UPDATEs, so they cannot race the delivery worker. A cancel also
// stops an e-mail a worker has claimed but not yet handed to the relay (its hand-over then finds the row
// cancelled: repos/handOver.ts startSends); one already handed over, or finished, no longer matches and the
// action reports a conflict.
import type { EmailStatus } from '../db/schema.js';
import type { Executor } from './types.js';

export const CANCELLABLE: EmailStatus[] = ['scheduled', 'queued'];
export const RETRYABLE: EmailStatus[] = ['failed'];

/** True when the e-mail was pending and is now cancelled. */
export async function cancelEmail(db: Executor, id: number, now: number): Promise<boolean> {
  const res = await db
    .updateTable('scheduled_emails')
    .set({ status: 'cancelled', last_error: 'cancelled by an administrator', updated_at: now })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('status', 'in', CANCELLABLE),
        eb.and([eb('status', '=', 'sending'), eb('send_started_at', 'is', null)]),
      ]),
    )
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * True when the failed e-mail is due again now. The attempt count starts over (the worker gives up at
 * its attempt limit without trying, so keeping the count would make a retry a no-op); the previous
 * error stays in last_error, marked, until the next attempt replaces it.
 */
export async function retryEmail(db: Executor, id: number, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('scheduled_emails')
    .select(['last_error'])
    .where('id', '=', id)
    .where('status', 'in', RETRYABLE)
    .executeTakeFirst();
  if (!row) return false;
  const note = `retried by an administrator; previous error: ${row.last_error ?? 'none'}`.slice(0, 2000);
  const res = await db
    .updateTable('scheduled_emails')
    .set({
      status: 'queued',
      due_at: now,
      attempts: 0,
      // A new wait for the relay starts: SEND_GIVE_UP_AFTER counts from the next failure.
      waiting_since: null,
      last_error: note,
      locked_by: null,
      locked_until: null,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('status', 'in', RETRYABLE)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
