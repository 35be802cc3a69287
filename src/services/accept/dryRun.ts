// Dry runs of the gateway POSTs (SPEC §13): the request is carried out by the executor (execute.ts) in
// a transaction that is rolled back, so the checks, routing, contact rules and plan are exactly those of
// a real request. Here: rendering the e-mails it would create (to prove their templates work) before the
// rollback, and the answer after it. Only a chronology row marked `dry_run` is kept; ids of rows that
// were never kept are not given out (null).
import type { PlanEntry } from '../../domain/plan.js';
import { insertEvent } from '../../repos/events.js';
import { emailsByIds } from '../../repos/trackingHits.js';
import type { Executor } from '../../repos/types.js';
import type { GatewayCall } from '../context.js';
import { previewStoredEmail } from '../preview.js';
import { acceptedEventRow, type Accepted, type Incoming } from './accept.js';

/** What the rolled-back transaction wrote: the answer, the e-mails it created, those that failed to render. */
export interface DryRunOutcome {
  answer: unknown;
  created: Set<number>;
  renderFailed: Set<number>;
}

/** Renders the e-mails the run created (inside its transaction); returns those that failed. */
export async function previewCreated(trx: Executor, ids: number[], call: GatewayCall): Promise<Set<number>> {
  const failed = new Set<number>();
  if (!ids.length) return failed;
  const rows = await emailsByIds(trx, ids);
  for (const row of rows) {
    try {
      await previewStoredEmail(trx, row, call.project, call.deps.config.publicUrl);
    } catch {
      failed.add(Number(row.id));
    }
  }
  return failed;
}

/** After the rollback: the marked chronology row, and the answer without the ids of rows never kept. */
export async function dryRunAnswer(r: Incoming, o: DryRunOutcome): Promise<Accepted<unknown>> {
  const response = o.answer as Record<string, unknown> & { plan?: PlanEntry[] };
  const plan = response.plan?.map((p) => {
    if (p.scheduled_email_id === null || !o.created.has(p.scheduled_email_id)) return p;
    const failed = o.renderFailed.has(p.scheduled_email_id);
    return { ...p, scheduled_email_id: null, ...(failed ? { reason: 'template_error' as const } : {}) };
  });
  const eventId = await insertEvent(
    r.call.deps.db.db,
    acceptedEventRow(r, JSON.stringify({ dry_run: true, plan: plan ?? [] })),
  );
  const scrubbed: Record<string, unknown> = { ...response, event_id: eventId, dry_run: true };
  if (plan) scrubbed.plan = plan;
  if ('scheduled_email_id' in response) scrubbed.scheduled_email_id = null;
  if ('scheduled_email_ids' in response) scrubbed.scheduled_email_ids = [];
  return { status: 200, body: scrubbed, eventId, replayed: false };
}
