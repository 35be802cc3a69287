// How an e-mail's outcome is written and heard: batched hand-overs, and batched outcomes with their
// attempt logs and webhooks (one transaction, on SQLite one unit of the group commit, for every e-mail
// that finishes within a few milliseconds or while the previous write runs), and the in-process events a
// waiting request listens to.
import { EventEmitter } from 'node:events';
import { batcher, fulfilled } from '../batcher.js';
import { inTransaction } from '../db/groupCommit.js';
import type { Db } from '../db/index.js';
import { noteDatabaseUnavailable } from '../db/unavailable.js';
import type { EmailRow, EmailStatus } from '../db/schema.js';
import type { WebhookKind } from '../domain/statuses.js';
import { recordAttempts, type AttemptsOf } from '../repos/delivery.js';
import { emailProgress, FINISH_BATCH, finishMany, type Finish } from '../repos/outbox.js';
import { enqueueEmailWebhooks } from '../services/siteWebhooks/enqueue.js';
import type { Clock } from './clock.js';
import { handOverMany, type HandOver } from './handOver.js';
import { noopLogger, type WorkerLogger } from '../workers/loop.js';

/** What a waiting request reports: a final status, or `queued` when a retry has been scheduled. */
export type Outcome = Extract<EmailStatus, 'sent' | 'failed' | 'suppressed' | 'cancelled' | 'queued'>;

// Outcomes of every worker of this process; waiters in the same process hear them at once.
const outcomeEvents = new EventEmitter();
outcomeEvents.setMaxListeners(0);
// While a worker runs here, most outcomes arrive as events and polling is only the safety net for
// e-mails another process delivers; without one, polling is the only way to learn anything.
let localWorkers = 0;

/** A worker of this process started (+1) or stopped (-1). */
export const countLocalWorker = (delta: 1 | -1) => {
  localWorkers += delta;
};

export function emitOutcome(emailId: number, outcome: Outcome): void {
  outcomeEvents.emit(`email:${emailId}`, outcome);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Resolves when the e-mail leaves `scheduled`/`queued`/`sending` for the first time seen (a retry counts:
 * `queued`), or undefined on timeout. Works in any process: an outcome from a worker in this process
 * arrives through the event; one from another process is found by polling the row every 50 ms.
 */
export async function waitForEmailOutcome(db: Db, emailId: number, timeoutMs: number): Promise<Outcome | undefined> {
  return new Promise<Outcome | undefined>((resolve) => {
    let done = false;
    const event = `email:${emailId}`;
    const finish = (o: Outcome | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      outcomeEvents.off(event, finish);
      resolve(o);
    };
    const timer = setTimeout(() => finish(undefined), Math.max(0, timeoutMs));
    outcomeEvents.on(event, finish);
    void (async () => {
      while (!done) {
        try {
          const row = await emailProgress(db.db, emailId);
          if (!row) return finish(undefined);
          if (['sent', 'failed', 'suppressed', 'cancelled'].includes(row.status)) return finish(row.status as Outcome);
          if (row.status !== 'sending' && row.attempts > 0) return finish('queued');
        } catch {
          // A failed poll is retried; the timeout still bounds the wait.
        }
        await sleep(localWorkers > 0 ? 200 : 50);
      }
    })();
  });
}

/** The e-mail outcomes that are webhook kinds (a retry is not an outcome a site hears about). */
const NOTIFIED: Partial<Record<EmailStatus, WebhookKind>> = {
  sent: 'email.sent',
  failed: 'email.failed',
  suppressed: 'email.suppressed',
  // Only the hand-over writes `cancelled` here: it found the order paid (domain/handOver.ts).
  cancelled: 'email.cancelled',
};

/** The webhook's reason for an outcome: SPEC §13's word for a cancel, the recorded note otherwise. */
const webhookReason = (f: Finish) =>
  f.status === 'sent' ? null : f.status === 'cancelled' ? 'cancelled_by_purchase' : (f.lastError ?? null);

/**
 * Outcomes and attempt logs wait this long for company before they are written: the e-mail has gone
 * already, so a few milliseconds cost nobody anything, while e-mails finishing one by one would otherwise
 * each pay a commit (on SQLite an fsync on the one writer the API shares) for a batch of one or two.
 */
const OUTCOME_LINGER_MS = 5;

export interface OutcomeWriters {
  /**
   * Records an outcome under the worker's lease, with what the attempt went through and what the relay
   * said when it reached one; false: the lease was lost. While the database is away the outcome (and its
   * attempt log) is kept here and written again until it is taken (see untilTaken).
   */
  write(row: EmailRow, f: Finish, attempts?: AttemptsOf): Promise<boolean>;
  /** Outcomes waiting for the database to come back; the worker claims nothing while there are any. */
  owed(): number;
  /** The process is stopping: keep retrying owed outcomes for at most STOP_GRACE_MS more. */
  abandon(): void;
  /** The final check at the relay's door (domain/handOver.ts). */
  handOver(emailId: number): Promise<HandOver>;
}

/** First pause before writing an owed outcome again; doubled each time up to OWED_RETRY_MAX_MS. */
const OWED_RETRY_MS = 100;
const OWED_RETRY_MAX_MS = 2_000;
/** How long a stopping process still tries to write what it owes before it gives up on it. */
const STOP_GRACE_MS = 10_000;

const sleepMs = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function outcomeWriters(
  database: Db,
  workerId: string,
  clock: Clock,
  secret: string,
  log: WorkerLogger = noopLogger,
): OutcomeWriters {
  // Issue 34: an outcome is what the relay said, and the relay will not say it again. When its write
  // fails because the database is away (a restart, a full disk), the outcome stays in memory and is
  // written again, with backoff, until the database takes it. Dropping it would leave the e-mail
  // `sending` until its lease expired and then send it a second time. The e-mail stays held by the
  // worker meanwhile (its lease is renewed once the database is back), and the worker claims nothing
  // until every owed outcome is written: a claim of its own could otherwise take back a held e-mail
  // whose lease ran out during the outage and send it again.
  let owedNow = 0;
  let giveUpAt = Infinity;
  async function untilTaken<T>(emailId: number, attempt: () => Promise<T>): Promise<T> {
    let owing = false;
    try {
      for (let pause = OWED_RETRY_MS; ; pause = Math.min(OWED_RETRY_MAX_MS, pause * 2)) {
        try {
          return await attempt();
        } catch (err) {
          if (!noteDatabaseUnavailable(err) || Date.now() >= giveUpAt) throw err;
          if (!owing) {
            owing = true;
            owedNow++;
            log.warn(
              { email_id: emailId, err },
              'database unavailable: the outcome is kept and written when it is back',
            );
          }
          await sleepMs(pause);
        }
      }
    } finally {
      if (owing) owedNow--;
    }
  }

  // Every delivery that finishes while a write is under way joins the next one, a single UPDATE for all
  // of them. On SQLite that UPDATE is a unit of the API's group commit (db/groupCommit.ts): outcomes
  // share the commit (and fsync) the accepted requests pay anyway instead of paying one of their own,
  // and queue for the one writer in the same line as the requests.
  //
  // An outcome a site may subscribe to (sent, failed, suppressed) enqueues its webhooks in the same
  // transaction as the status change: both commit or neither does (SPEC §13). The attempt logs of the
  // batch go in the same transaction too (issue 38: one write unit per batch of outcomes instead of two);
  // they are written whether or not the lease still held, as before: the relay was reached either way.
  const writeBatch = batcher<{ f: Finish; row: EmailRow; attempts?: AttemptsOf }, boolean>({
    maxBatch: FINISH_BATCH,
    lingerMs: OUTCOME_LINGER_MS,
    run: async (batch) => {
      const written = await inTransaction(database, async (trx) => {
        await recordAttempts(
          trx,
          batch.flatMap((b) => (b.attempts ? [b.attempts] : [])),
        );
        const done = await finishMany(
          trx,
          workerId,
          batch.map((b) => b.f),
        );
        const notices = batch.flatMap(({ f, row }) => {
          const kind = NOTIFIED[f.status];
          // A test send from the delivery settings is the administrator's, not the site's business.
          return kind && done.has(f.id) && !row.is_test ? [{ email: row, kind, reason: webhookReason(f) }] : [];
        });
        await enqueueEmailWebhooks(trx, notices, clock.now());
        return done;
      });
      return batch.map(({ f }) => fulfilled(written.has(f.id)));
    },
  });

  // Hand-overs are decided in batches like the outcomes: every e-mail that reaches the relay's door
  // while one hand-over transaction runs joins the next (one transaction, on SQLite one fsync, for all).
  const handOver = batcher<number, HandOver>({
    maxBatch: FINISH_BATCH,
    run: async (ids) => {
      const decided = await handOverMany(database, workerId, ids, clock.now(), secret);
      return ids.map((i) => fulfilled(decided.get(i) ?? { gone: null }));
    },
  });

  return {
    write: (row, f, attempts) => untilTaken(row.id, () => writeBatch({ f, row, attempts })),
    owed: () => owedNow,
    abandon: () => {
      giveUpAt = Math.min(giveUpAt, Date.now() + STOP_GRACE_MS);
    },
    handOver,
  };
}
