// The hand-over step (issue 30): the last moment a claimed e-mail can be stopped. In one transaction:
// mark the e-mails handed over (which takes their row locks, waiting for any stop that locked them
// first), read what the decision needs (a statement started after the locks, so it sees every stop that
// committed before), decide (domain/handOver.ts), and take the mark back for those that must not go.
// A stop that commits after this commit finds the e-mail in flight.
import { sql, type Kysely } from 'kysely';
import type { Db } from '../db/index.js';
import type { Database, EmailStatus } from '../db/schema.js';
import { handOverVerdict, type HandOverVerdict } from '../domain/handOver.js';
import { readHandOverFacts, startSends, undoSendStarts } from '../repos/handOver.js';
import { topicStopAtSend } from '../services/consent.js';

export type HandOver =
  | { verdict: HandOverVerdict }
  /** No longer this worker's claim: cancelled by a purchase or an administrator, or the lease was lost. */
  | { gone: EmailStatus | null };

/**
 * The hand-over's commit is made visible at once but not waited for on disk: a mark lost in a crash of
 * the database only leaves the e-mail claimed, and a claim whose worker is gone is handed over again
 * after its lease (the at-least-once of a worker crash). A later durable commit (the purchase that reads
 * the mark) flushes it first, so what a purchase reported is never undone. This halves the hand-over's
 * cost on both engines, whose commits otherwise wait for fsync.
 */
export async function handOverMany(
  database: Db,
  workerId: string,
  ids: number[],
  now: number,
  secret: string,
): Promise<Map<number, HandOver>> {
  const work = (trx: Kysely<Database>) => decide(trx, workerId, ids, now, secret);
  if (database.dialect === 'postgres')
    return database.db.transaction().execute(async (trx) => {
      await sql`set local synchronous_commit = off`.execute(trx);
      return work(trx);
    });
  // SQLite cannot change its safety level inside a transaction: around it, on the one connection held.
  return database.db.connection().execute(async (conn) => {
    await sql`pragma synchronous = NORMAL`.execute(conn);
    try {
      return await conn.transaction().execute(work);
    } finally {
      await sql`pragma synchronous = FULL`.execute(conn);
    }
  });
}

async function decide(
  db: Kysely<Database>,
  workerId: string,
  ids: number[],
  now: number,
  secret: string,
): Promise<Map<number, HandOver>> {
  const started = await startSends(db, workerId, ids, now);
  const facts = await readHandOverFacts(db, ids);
  const out = new Map<number, HandOver>();
  const undo: number[] = [];
  for (const id of ids) {
    const f = facts.get(id);
    if (!f || !started.has(id)) {
      out.set(id, { gone: f?.status ?? null });
      continue;
    }
    // The topic is read after the locks too: a withdrawal that committed before is seen (a transactional
    // e-mail, or one whose contact is gone, reads none).
    const topicStop =
      f.contact_status === null || f.contact_email === null
        ? null
        : await topicStopAtSend(db, secret, f, { status: f.contact_status, email: f.contact_email });
    const verdict = handOverVerdict({
      kind: f.kind,
      contactStatus: f.contact_status,
      orderPaid: f.order_status === 'paid',
      marketingPaused: f.marketing_paused_at !== null,
      topicStop,
    });
    if (!verdict.go) undo.push(id);
    out.set(id, { verdict });
  }
  await undoSendStarts(db, undo);
  return out;
}
