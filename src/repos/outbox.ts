// The delivery worker's side of the outbox (scheduled_emails). A worker claims rows under a lease
// (locked_by, locked_until) and every later write is guarded by `locked_by = <its id>`: a worker that
// lost its lease (it stalled and another took over) cannot overwrite the newer outcome.
import { PostgresAdapter, sql, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { toFlag } from '../db/flags.js';
import type { Dialect } from '../db/index.js';
import type { Database, EmailRow, EmailStatus } from '../db/schema.js';
import { PAUSE_REASON } from '../domain/bounces.js';
import { emailFromRow } from './flagRows.js';

// Literal SQL (not bound parameters) so both SQLite and PostgreSQL match the partial indexes of
// migration 001 (emails_pending_due, emails_sending_lease), whose predicates are these exact terms.
export const IS_PENDING = sql<SqlBool>`status in ('scheduled', 'queued')`;
export const IS_SENDING = sql<SqlBool>`status = 'sending'`;

const LEASE_EXPIRED_NOTE = 'lease expired: the worker delivering it stopped before recording an outcome';

export interface ClaimOptions {
  workerId: string;
  now: number;
  leaseMs: number;
  limit: number;
  /**
   * Projects whose relay is full in this worker (RELAY_CONCURRENCY sends under way and as many waiting):
   * their e-mails stay unclaimed, for this worker to take the other projects' instead.
   */
  skipProjects?: readonly number[];
}

/**
 * Due pending e-mails, fair across projects (SPEC §20): each project's oldest due rows (one probe of
 * emails_pending_project_due per project), ranked within their project, and taken rank by rank — every
 * project's first, then every project's second, … — so one project's backlog or hung relay never fills
 * a batch while another's e-mail waits. A project alone gets the whole batch.
 */
function fairPending(dialect: Dialect, o: ClaimOptions) {
  const skip = o.skipProjects?.length ? sql`and p.id not in (${sql.join(o.skipProjects)})` : sql``;
  const ranked =
    dialect === 'postgres'
      ? sql`select e.id, e.due_at, row_number() over (partition by p.id order by e.due_at, e.id) as rn
          from projects p cross join lateral (
            select x.id, x.due_at from scheduled_emails x
            where x.project_id = p.id and x.${IS_PENDING} and x.due_at <= ${o.now}
            order by x.due_at limit ${o.limit}) e
          where true ${skip}`
      : sql`select e.id, e.due_at, row_number() over (partition by e.project_id order by e.due_at, e.id) as rn
          from projects p join scheduled_emails e on e.id in (
            select x.id from scheduled_emails x
            where x.project_id = p.id and x.${IS_PENDING} and x.due_at <= ${o.now}
            order by x.due_at limit ${o.limit})
          where true ${skip}`;
  return sql<{ id: number }>`(select r.id from (${ranked}) r order by r.rn, r.due_at limit ${o.limit})`;
}

/**
 * Claims up to `limit` e-mails in one statement: due pending ones, fair across projects (fairPending),
 * and ones whose lease expired (a crashed worker's). On PostgreSQL the candidate rows are locked with FOR
 * UPDATE SKIP LOCKED, so concurrent workers take disjoint sets without waiting on each other; SQLite has
 * a single writer and runs the statement atomically. A reclaimed expired lease counts as one attempt
 * (the interrupted one), so an e-mail that crashes its worker every time still reaches a ceiling.
 */
export async function claimDue(db: Kysely<Database>, dialect: Dialect, o: ClaimOptions): Promise<EmailRow[]> {
  if (o.limit <= 0) return [];
  const lock = <T extends { forUpdate(): T; skipLocked(): T }>(q: T): T =>
    dialect === 'postgres' ? q.forUpdate().skipLocked() : q;
  return (
    db
      .with('expired', (qb) =>
        lock(
          qb
            .selectFrom('scheduled_emails')
            .select('id')
            .where(IS_SENDING)
            .where('locked_until', '<', o.now)
            .orderBy('locked_until')
            .limit(o.limit),
        ),
      )
      .with('fair', () => fairPending(dialect, o))
      .with('pending', (qb) =>
        lock(
          qb
            .selectFrom('scheduled_emails')
            .select('id')
            .where('id', 'in', (eb) => eb.selectFrom('fair').select('fair.id')),
        ),
      )
      .updateTable('scheduled_emails')
      .set({
        status: 'sending',
        // Claimed, not handed over: a purchase or an administrator may still cancel it (startSends).
        send_started_at: null,
        locked_by: o.workerId,
        locked_until: o.now + o.leaseMs,
        updated_at: o.now,
        attempts: sql<number>`case when status = 'sending' then attempts + 1 else attempts end`,
        last_error: sql<string | null>`case when status = 'sending' then ${LEASE_EXPIRED_NOTE} else last_error end`,
      })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom(
            eb.selectFrom('expired').select('id').unionAll(eb.selectFrom('pending').select('id')).as('candidates'),
          )
          .select('candidates.id')
          .limit(o.limit),
      )
      // Re-checked on the row itself: the claim is only valid if the row is still claimable.
      .where((eb) =>
        eb.or([eb.and([IS_PENDING, eb('due_at', '<=', o.now)]), eb.and([IS_SENDING, eb('locked_until', '<', o.now)])]),
      )
      .returningAll()
      .execute()
      .then((rows) => rows.map(emailFromRow))
  );
}

/** Extends the lease of e-mails this worker still holds (long SMTP sessions outlive one lease). */
export async function renewLease(
  db: Kysely<Database>,
  workerId: string,
  ids: number[],
  now: number,
  leaseMs: number,
): Promise<number> {
  if (ids.length === 0) return 0;
  // Rows locked in id order first: a purchase may be locking some of them (lockInIdOrder).
  const res = await db.transaction().execute(async (trx) => {
    await lockInIdOrder(trx, (q) => q.where('id', 'in', ids));
    return trx
      .updateTable('scheduled_emails')
      .set({ locked_until: now + leaseMs })
      .where('id', 'in', ids)
      .where('locked_by', '=', workerId)
      .where(IS_SENDING)
      .executeTakeFirst();
  });
  return Number(res.numUpdatedRows);
}

/**
 * Ends every lease at once (SQLite, at start): the database is embedded, so the process that held them
 * is gone. The e-mails are then taken over on the next claim like any expired lease (the interrupted
 * attempt counted), without waiting out the lease time. Returns how many there were.
 */
export async function expireAllLeases(db: Kysely<Database>): Promise<number> {
  const res = await db.updateTable('scheduled_emails').set({ locked_until: 0 }).where(IS_SENDING).executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Hands claimed-but-unstarted e-mails back at shutdown so nobody waits for the lease to expire. */
export async function releaseClaims(
  db: Kysely<Database>,
  workerId: string,
  ids: number[],
  now: number,
): Promise<number> {
  if (ids.length === 0) return 0;
  const res = await db.transaction().execute(async (trx) => {
    await lockInIdOrder(trx, (q) => q.where('id', 'in', ids));
    return trx
      .updateTable('scheduled_emails')
      .set({ status: 'scheduled', locked_by: null, locked_until: null, updated_at: now })
      .where('id', 'in', ids)
      .where('locked_by', '=', workerId)
      .where(IS_SENDING)
      .executeTakeFirst();
  });
  return Number(res.numUpdatedRows);
}

const isPostgres = (db: Kysely<Database>) => db.getExecutor().adapter instanceof PostgresAdapter;

type EmailIdQuery = SelectQueryBuilder<Database, 'scheduled_emails', { id: number }>;

/**
 * Locks the chosen e-mail rows in id order (PostgreSQL; a no-op on SQLite, whose one writer needs no row
 * locks). Every transaction that locks several e-mail rows and may meet another doing the same (a purchase,
 * a hand-over, an outcome write, a stop) takes them this way first, so no two of them can deadlock.
 */
export async function lockInIdOrder(db: Kysely<Database>, where: (q: EmailIdQuery) => EmailIdQuery): Promise<void> {
  if (!isPostgres(db)) return;
  await where(db.selectFrom('scheduled_emails').select('id')).orderBy('id').forUpdate().execute();
}

export interface RenderedColumns {
  rendered?: string | null;
  messageId?: string | null;
}

/** One recorded outcome, as finishMany writes it. */
export interface Finish {
  id: number;
  now: number;
  status: EmailStatus;
  countAttempt: boolean;
  /** Retry: the new due time. */
  dueAt?: number;
  /** undefined keeps the stored value. */
  lastError?: string | null;
  sentAt?: number;
  /** Retry: clear locked_by so any worker may take it. */
  releaseLock?: boolean;
  rendered?: string | null;
  messageId?: string | null;
  /**
   * waiting_since (migration 022): `start` keeps the first moment it could not go (or sets it now),
   * `clear` once it went; undefined keeps it.
   */
  waiting?: 'start' | 'clear';
}

/** last_error of an e-mail held back by a marketing pause; resuming makes those due at once. */
export const MARKETING_PAUSED_ERROR = `paused: ${PAUSE_REASON}`;

export const finishes = {
  // last_error is cleared: an earlier transient failure is history once the e-mail went out.
  sent: (id: number, o: { now: number } & RenderedColumns): Finish => ({
    id,
    now: o.now,
    status: 'sent',
    sentAt: o.now,
    lastError: null,
    countAttempt: true,
    rendered: o.rendered,
    messageId: o.messageId,
    waiting: 'clear',
  }),
  /** A temporary failure at the relay: an attempt, tried again at `dueAt`. */
  retry: (id: number, o: { now: number; dueAt: number; error: string } & RenderedColumns): Finish => ({
    id,
    now: o.now,
    status: 'scheduled',
    dueAt: o.dueAt,
    lastError: o.error,
    releaseLock: true,
    countAttempt: true,
    rendered: o.rendered,
    messageId: o.messageId,
    waiting: 'start',
  }),
  /**
   * Not sent and no relay reached (its breaker is open, its rate cap full, its settings unreadable):
   * tried again at `dueAt`; neither an attempt nor a failure, but the wait counts toward SEND_GIVE_UP_AFTER.
   * last_error keeps the last relay reply unless a note is given.
   */
  relayWait: (id: number, o: { now: number; dueAt: number; note?: string }): Finish => ({
    id,
    now: o.now,
    status: 'scheduled',
    dueAt: o.dueAt,
    ...(o.note === undefined ? {} : { lastError: o.note }),
    releaseLock: true,
    countAttempt: false,
    waiting: 'start',
  }),
  /** Claimed but handed back unsent (the worker stopped while it waited for its relay): as it was. */
  deferred: (id: number, o: { now: number; dueAt: number }): Finish => ({
    id,
    now: o.now,
    status: 'scheduled',
    dueAt: o.dueAt,
    releaseLock: true,
    countAttempt: false,
  }),
  failed: (id: number, o: { now: number; error: string; countAttempt?: boolean } & RenderedColumns): Finish => ({
    id,
    now: o.now,
    status: 'failed',
    lastError: o.error,
    countAttempt: o.countAttempt ?? true,
    rendered: o.rendered,
    messageId: o.messageId,
  }),
  /** Over the project's daily quota: waits, as `queued` with the reason, until `dueAt`; not an attempt. */
  waitQuota: (id: number, o: { now: number; dueAt: number; reason: string }): Finish => ({
    id,
    now: o.now,
    status: 'queued',
    dueAt: o.dueAt,
    lastError: o.reason,
    releaseLock: true,
    countAttempt: false,
  }),
  /** A paused project's marketing e-mail (issue 14): waits as `queued` like a quota wait; not an attempt. */
  paused: (id: number, o: { now: number; dueAt: number }): Finish =>
    finishes.waitQuota(id, { ...o, reason: MARKETING_PAUSED_ERROR }),
  /** The hand-over found the order paid (a purchase's cancel it had not met): stopped, not an attempt. */
  cancelled: (id: number, o: { now: number; note: string }): Finish => ({
    id,
    now: o.now,
    status: 'cancelled',
    lastError: o.note,
    countAttempt: false,
  }),
  suppressed: (id: number, o: { now: number; reason: string }): Finish => ({
    id,
    now: o.now,
    status: 'suppressed',
    lastError: o.reason,
    countAttempt: false,
  }),
};

const WAITING = { keep: 0, start: 1, clear: 2 } as const;

/** Most rows per finishMany statement (14 bound values each; SQLite allows 32766). */
export const FINISH_BATCH = 200;

/**
 * Records many outcomes in one UPDATE … FROM (VALUES …) (SQLite 3.33+, PostgreSQL), guarded by the
 * lease: only rows this worker still holds in `sending` change. Returns the ids that
 * were written; an id missing from it lost its lease. One statement, so on SQLite one fsync for all.
 */
export async function finishMany(db: Kysely<Database>, workerId: string, items: Finish[]): Promise<Set<number>> {
  if (items.length === 0) return new Set();
  const rows = items.map(
    (f) =>
      sql`(cast(${f.id} as bigint), cast(${f.status} as text), cast(${f.dueAt ?? null} as bigint), cast(${toFlag(f.lastError !== undefined)} as integer),
      cast(${f.lastError ?? null} as text), cast(${f.sentAt ?? null} as bigint), cast(${toFlag(f.releaseLock === true)} as integer),
      cast(${f.now} as bigint), cast(${toFlag(f.countAttempt)} as integer), cast(${toFlag(f.rendered !== undefined)} as integer),
      cast(${f.rendered ?? null} as text), cast(${toFlag(f.messageId !== undefined)} as integer), cast(${f.messageId ?? null} as text),
      cast(${WAITING[f.waiting ?? 'keep']} as integer))`,
  );
  if (items.length > 1)
    await lockInIdOrder(db, (q) =>
      q.where(
        'id',
        'in',
        items.map((f) => f.id),
      ),
    );
  // VALUES columns are column1..column14 in both dialects.
  const res = await sql<{ id: number }>`
    update scheduled_emails set
      status = v.column2,
      due_at = coalesce(v.column3, scheduled_emails.due_at),
      last_error = case when v.column4 = 1 then v.column5 else scheduled_emails.last_error end,
      sent_at = coalesce(v.column6, scheduled_emails.sent_at),
      locked_by = case when v.column7 = 1 then null else scheduled_emails.locked_by end,
      locked_until = null,
      updated_at = v.column8,
      attempts = scheduled_emails.attempts + v.column9,
      rendered = case when v.column10 = 1 then v.column11 else scheduled_emails.rendered end,
      message_id = case when v.column12 = 1 then v.column13 else scheduled_emails.message_id end,
      waiting_since = case v.column14 when 1 then coalesce(scheduled_emails.waiting_since, v.column8)
        when 2 then null else scheduled_emails.waiting_since end
    from (values ${sql.join(rows)}) as v
    where scheduled_emails.id = v.column1 and scheduled_emails.locked_by = ${workerId} and ${IS_SENDING}
    returning scheduled_emails.id`.execute(db);
  return new Set(res.rows.map((r) => Number(r.id)));
}

/**
 * When the worker next has something to do: the earliest pending due time or lease expiry, or null when
 * the outbox is idle. Both halves read one partial index each.
 */
export async function nextDueAt(db: Kysely<Database>): Promise<number | null> {
  const [pending, lease] = await Promise.all([
    db
      .selectFrom('scheduled_emails')
      .select((eb) => eb.fn.min('due_at').as('t'))
      .where(IS_PENDING)
      .executeTakeFirst(),
    db
      .selectFrom('scheduled_emails')
      .select((eb) => eb.fn.min('locked_until').as('t'))
      .where(IS_SENDING)
      .executeTakeFirst(),
  ]);
  const times = [pending?.t, lease?.t].filter((t): t is number => t !== null && t !== undefined).map(Number);
  return times.length ? Math.min(...times) : null;
}

/** Status and attempts only: what a waiting request polls. */
export async function emailProgress(
  db: Kysely<Database>,
  id: number,
): Promise<{ status: EmailStatus; attempts: number; due_at: number } | undefined> {
  return db
    .selectFrom('scheduled_emails')
    .select(['status', 'attempts', 'due_at'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** On resume: the e-mails a marketing pause held back become due now (they were `queued`, never lost). */
export async function releasePaused(db: Kysely<Database>, projectId: number, now: number): Promise<number> {
  const res = await db
    .updateTable('scheduled_emails')
    .set({ due_at: now, last_error: null, updated_at: now })
    .where('project_id', '=', projectId)
    .where('status', '=', 'queued')
    .where('last_error', '=', MARKETING_PAUSED_ERROR)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
