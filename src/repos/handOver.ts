// The hand-over (issue 30): the statements of the last check before a claimed e-mail goes to the relay
// (src/delivery/handOver.ts runs them in one transaction), and the lock every stop takes on the e-mails
// it concerns so that no hand-over slips past it.
import type { Kysely } from 'kysely';
import type { ContactStatus, Database, EmailKind, EmailStatus } from '../db/schema.js';
import { IS_PENDING, IS_SENDING, lockInIdOrder } from './outbox.js';

/**
 * The hand-over (issue 30): marks claimed e-mails this worker holds as handed to the relay. The UPDATE
 * takes each row's lock, so it waits for any stop that locked the row first (a purchase's cancel, an
 * administrator's, holdHandOvers) and then no longer matches a cancelled row. Call it, then
 * readHandOverFacts, in one transaction: the read's snapshot comes after the locks, so it sees every stop
 * that committed before. Returns the ids marked.
 */
export async function startSends(
  db: Kysely<Database>,
  workerId: string,
  ids: number[],
  now: number,
): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  // One row needs no ordered lock: a statement that waits for one row while holding none cannot deadlock.
  if (ids.length > 1) await lockInIdOrder(db, (q) => q.where('id', 'in', ids));
  const rows = await db
    .updateTable('scheduled_emails')
    .set({ send_started_at: now })
    .where('id', 'in', ids)
    .where('locked_by', '=', workerId)
    .where(IS_SENDING)
    .where('send_started_at', 'is', null)
    .returning('id')
    .execute();
  return new Set(rows.map((r) => Number(r.id)));
}

/** Takes back startSends for e-mails the hand-over decided to stop (same transaction). */
export async function undoSendStarts(db: Kysely<Database>, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('scheduled_emails').set({ send_started_at: null }).where('id', 'in', ids).execute();
}

/** Everything the hand-over decision (domain/handOver.ts) reads about claimed e-mails: one query. */
export interface HandOverRow {
  id: number;
  kind: EmailKind;
  status: EmailStatus;
  contact_status: ContactStatus | null;
  contact_email: string | null;
  order_status: string | null;
  marketing_paused_at: number | null;
  /** What the topic check (services/consent.ts topicStopAtSend) reads of the e-mail. */
  topic: string | null;
  project_id: number;
  contact_id: number;
}

export async function readHandOverFacts(db: Kysely<Database>, ids: number[]): Promise<Map<number, HandOverRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('scheduled_emails as e')
    .innerJoin('projects as p', 'p.id', 'e.project_id')
    .leftJoin('contacts as c', 'c.id', 'e.contact_id')
    .leftJoin('orders as o', (j) => j.onRef('o.project_id', '=', 'e.project_id').onRef('o.order_id', '=', 'e.order_id'))
    .select([
      'e.id',
      'e.kind',
      'e.status',
      'c.status as contact_status',
      'c.email as contact_email',
      'o.status as order_status',
      'p.marketing_paused_at',
      'e.topic',
      'e.project_id',
      'e.contact_id',
    ])
    .where('e.id', 'in', ids)
    .execute();
  return new Map(
    rows.map((r) => [
      Number(r.id),
      {
        ...r,
        id: Number(r.id),
        project_id: Number(r.project_id),
        contact_id: Number(r.contact_id),
        marketing_paused_at: r.marketing_paused_at === null ? null : Number(r.marketing_paused_at),
      },
    ]),
  );
}

/** What a stop is about: one contact (its status changed) or one project's marketing (paused). */
export type HoldScope = { contactId: number } | { projectId: number; kinds: EmailKind[]; now: number };

/**
 * Every stop that does not cancel e-mail rows itself calls this in its own transaction, after writing the
 * stop: it locks the e-mails the stop concerns that are pending or claimed but not handed over. A
 * hand-over of one of them then waits for the stop to commit and sees it; one already under way makes the
 * stop wait for its commit, so the hand-over came first. Nothing to do on SQLite: its one writer runs the
 * stop's transaction and the hand-over's one after the other.
 */
export async function holdHandOvers(db: Kysely<Database>, scope: HoldScope): Promise<void> {
  await lockInIdOrder(db, (q) => {
    q = q.where((eb) =>
      eb.or([
        eb.and([IS_SENDING, eb('send_started_at', 'is', null)]),
        'projectId' in scope ? eb.and([IS_PENDING, eb('due_at', '<=', scope.now)]) : IS_PENDING,
      ]),
    );
    return 'contactId' in scope
      ? q.where('contact_id', '=', scope.contactId)
      : q.where('project_id', '=', scope.projectId).where('kind', 'in', scope.kinds);
  });
}
