// Dry runs of the gateway POSTs (SPEC §13): the request is carried out for real inside a transaction
// that is then rolled back, so the checks, routing, contact rules and plan are exactly those of a real
// request; the e-mails it would create are rendered to prove their templates work. Only a chronology
// row marked `dry_run` is kept. Ids of rows that were never kept are not given out (null).
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { PlanEntry } from '../../domain/plan.js';
import { insertEvent } from '../../repos/events.js';
import { findIdempotency } from '../../repos/idempotency.js';
import { previewStoredEmail } from '../preview.js';
import { acceptedEventRow, storedAnswer, type Accepted, type Answer, type Incoming } from './accept.js';

class RolledBack<T> extends Error {
  constructor(
    readonly answer: Answer<T>,
    readonly created: Set<number>,
    readonly renderFailed: Set<number>,
  ) {
    super('dry run: rolled back');
  }
}

type Work<T> = (trx: Transaction<Database>, eventId: number, now: number) => Promise<Answer<T>>;

export async function dryRunEvent<T extends object>(
  r: Incoming,
  work: Work<T>,
  refresh?: (stored: T) => Promise<T>,
): Promise<Accepted<T>> {
  const { deps, project } = r.call;
  const db = deps.db.db;
  const log = (effects: Record<string, unknown>) =>
    insertEvent(db, acceptedEventRow(r, JSON.stringify({ dry_run: true, ...effects })));

  // A key already used: a real request would replay the stored answer (or refuse another body).
  const rec = r.d.idempotency_key ? await findIdempotency(db, project.id, r.d.idempotency_key) : undefined;
  if (rec) {
    const stored = await storedAnswer(r, rec, refresh);
    const eventId = await log({ replay_of: rec.event_id });
    return { status: rec.response_status, body: { ...stored, dry_run: true }, eventId, replayed: true };
  }

  let outcome: RolledBack<T> | undefined;
  try {
    await db.transaction().execute(async (trx) => {
      // Rolled back with the rest: its payload is never read.
      const eventId = await insertEvent(trx, { ...acceptedEventRow(r, '{}'), payload: null });
      const answer = await work(trx, eventId, r.now);
      const rows = await trx.selectFrom('scheduled_emails').selectAll().where('event_id', '=', eventId).execute();
      const renderFailed = new Set<number>();
      for (const row of rows) {
        try {
          await previewStoredEmail(trx, row, project, deps.config.publicUrl);
        } catch {
          renderFailed.add(Number(row.id));
        }
      }
      throw new RolledBack(answer, new Set(rows.map((r) => Number(r.id))), renderFailed);
    });
  } catch (e) {
    if (!(e instanceof RolledBack)) throw e;
    outcome = e as RolledBack<T>;
  }
  const { answer, created, renderFailed } = outcome!;
  const response = answer.response as T & { plan?: PlanEntry[] };
  const plan = response.plan?.map((p) => {
    if (p.scheduled_email_id === null || !created.has(p.scheduled_email_id)) return p;
    const failed = renderFailed.has(p.scheduled_email_id);
    return { ...p, scheduled_email_id: null, ...(failed ? { reason: 'template_error' as const } : {}) };
  });
  const eventId = await log({ plan: plan ?? [] });
  const scrubbed: Record<string, unknown> = { ...response, event_id: eventId, dry_run: true };
  if (plan) scrubbed.plan = plan;
  if ('scheduled_email_id' in response) scrubbed.scheduled_email_id = null;
  if ('scheduled_email_ids' in response) scrubbed.scheduled_email_ids = [];
  return { status: 200, body: scrubbed as T, eventId, replayed: false };
}
