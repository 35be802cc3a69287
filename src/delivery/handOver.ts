// The hand-over step (issue 30): the last moment a claimed e-mail can be stopped. In one transaction:
// mark the e-mails handed over (which takes their row locks, waiting for any stop that locked them
// first), read what the decision needs (a statement started after the locks, so it sees every stop that
// committed before), decide (domain/handOver.ts), and take the mark back for those that must not go.
// A stop that commits after this commit finds the e-mail in flight.
import type { Kysely } from 'kysely';
import type { Database, EmailStatus } from '../db/schema.js';
import { handOverVerdict, type HandOverVerdict } from '../domain/handOver.js';
import { readHandOverFacts, startSends, undoSendStarts } from '../repos/outbox.js';

export type HandOver =
  | { verdict: HandOverVerdict }
  /** No longer this worker's claim: cancelled by a purchase or an administrator, or the lease was lost. */
  | { gone: EmailStatus | null };

export async function handOverMany(
  db: Kysely<Database>,
  workerId: string,
  ids: number[],
  now: number,
): Promise<Map<number, HandOver>> {
  return db.transaction().execute(async (trx) => {
    const started = await startSends(trx, workerId, ids, now);
    const facts = await readHandOverFacts(trx, ids);
    const out = new Map<number, HandOver>();
    const undo: number[] = [];
    for (const id of ids) {
      const f = facts.get(id);
      if (!f || !started.has(id)) {
        out.set(id, { gone: f?.status ?? null });
        continue;
      }
      const verdict = handOverVerdict({
        kind: f.kind,
        contactStatus: f.contact_status,
        orderPaid: f.order_status === 'paid',
        marketingPaused: f.marketing_paused_at !== null,
      });
      if (!verdict.go) undo.push(id);
      out.set(id, { verdict });
    }
    await undoSendStarts(trx, undo);
    return out;
  });
}
