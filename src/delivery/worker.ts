// The delivery worker: claims due e-mails under a lease, renders them, sends them and records the
// outcome (SPEC §4, §8). Runs inside `serve` or alone; several workers may share a PostgreSQL outbox.
// The claim/lease/wake loop is the one every worker runs on (workers/loop.ts); one e-mail's way from
// claim to outcome is delivery/deliver.ts; how outcomes are written and heard, delivery/outcomes.ts.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { commitQueueDepth, inTransaction } from '../db/groupCommit.js';
import type { Db } from '../db/index.js';
import { noteDatabaseUnavailable } from '../db/unavailable.js';
import type { EmailRow } from '../db/schema.js';
import { claimDue, nextDueAt, releaseClaims, renewLease } from '../repos/outbox.js';
import { secretBox } from '../services/secrets.js';
import { DeliveryRouter } from './router.js';
import { trackingKey } from '../domain/trackingTokens.js';
import { systemClock, type Clock } from './clock.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './smtpErrors.js';
import type { Transport } from './transports.js';
import { makeDeliver, newCache, prefetchContacts, type BatchCache } from './deliver.js';
import { countLocalWorker, emitOutcome, outcomeWriters, waitForEmailOutcome, type Outcome } from './outcomes.js';
import { leaseLoop, noopLogger, type WorkerLogger } from '../workers/loop.js';
import { RelaySlots } from './relaySlots.js';

export { waitForEmailOutcome };

export interface WorkerOptions {
  db: Db;
  /** The installation's transport: SMTP_URL or capture, for projects without their own settings. */
  transport: Transport;
  /** Per-project transports (SPEC §11); one is made over `transport` when absent and closed on stop. */
  router?: DeliveryRouter;
  clock?: Clock;
  publicUrl: string;
  /** Signs unsubscribe links and salts Message-IDs; the same in every process of an installation. */
  secret: string;
  /**
   * Opens and clicks are tracked (SPEC §17) only when true: `serve` sets it when PUBLIC_URL is set
   * (tracked links must lead to an address recipients can reach); tests and tools that make a worker
   * of their own get the message exactly as rendered unless they ask.
   */
  tracking?: boolean;
  workerId?: string;
  batchSize?: number;
  leaseMs?: number;
  concurrency?: number;
  /** Longest sleep when nothing is due (due e-mails leave within about this long). */
  pollMs?: number;
  /** The configured policy (config.retry); defaults to DEFAULT_RETRY_POLICY. */
  retry?: Partial<RetryPolicy>;
  random?: () => number;
  logger?: WorkerLogger;
  /** BOUNCE_DOMAIN: each e-mail's envelope sender becomes its signed VERP address there (SPEC §12). */
  bounceDomain?: string | null;
  /** RELAY_CONCURRENCY: sends at once per relay in this worker (default 5, SPEC §20). */
  relayConcurrency?: number;
  /** Told how many e-mails wait for a slot of a relay (the per-relay `waiting` gauge). */
  onRelayWaiting?: (relay: string, waiting: number) => void;
  /** Told every recorded outcome (metrics): kind, how long delivery took, how late after due it was. */
  onOutcome?: (o: { outcome: Outcome; kind: EmailRow['kind']; durationMs: number; lagMs: number }) => void;
}

export interface Worker {
  readonly id: string;
  start(): void;
  /** Stops claiming, hands back unstarted claims, waits for in-flight sends. */
  stop(): Promise<void>;
  /** Something became due (a request created an e-mail): look now instead of at the next poll. */
  wake(): void;
  waitForOutcome(emailId: number, timeoutMs: number): Promise<Outcome | undefined>;
  /** Claims and delivers one batch due at clock.now(), without the loop (CLI, tests). Returns its size. */
  runOnce(): Promise<number>;
}

/** Requests waiting for the SQLite writer above which the worker's next claim waits … */
const DEEP_COMMIT_QUEUE = 32;
/** … this long, at most this many times in a row. */
const YIELD_MS = 5;
const MAX_YIELDS = 20;
/** A claim that found nothing while relays were full is not repeated for the same ones sooner than this. */
const EMPTY_CLAIM_RECHECK_MS = 100;

export function createWorker(opts: WorkerOptions): Worker {
  const { db: database, transport } = opts;
  const db = database.db;
  const clock = opts.clock ?? systemClock;
  const id = opts.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  // Claims of up to 200: under a backlog each claim, contact read and outcome write carries more
  // e-mails (on SQLite those wait their turn behind the API's commits).
  const batchSize = Math.max(1, opts.batchSize ?? 200);
  const leaseMs = Math.max(100, opts.leaseMs ?? 60_000);
  // E-mails made due by another process (an API-only process, a campaign) are found by this poll: 200 ms
  // keeps them well inside the one-second promise; an idle poll is two reads of small partial indexes.
  const pollMs = Math.max(10, opts.pollMs ?? 200);
  const log = opts.logger ?? noopLogger;
  const ownRouter = !opts.router;
  const router = opts.router ?? new DeliveryRouter({ installation: transport, box: secretBox(opts.secret) });

  const writers = outcomeWriters(database, id, clock, opts.secret, log);
  const slots = new RelaySlots({ perRelay: opts.relayConcurrency ?? 5, onWaiting: opts.onRelayWaiting });
  let stopping: Promise<void> | null = null;
  let running = false;
  const deliver = makeDeliver({
    slots,
    stopping: () => stopping !== null && !running,
    database,
    router,
    clock,
    retry: { ...DEFAULT_RETRY_POLICY, ...opts.retry },
    random: opts.random ?? Math.random,
    log,
    workerId: id,
    publicUrl: opts.publicUrl,
    secret: opts.secret,
    trackKey: trackingKey(opts.secret),
    tracking: opts.tracking === true,
    bounceDomain: opts.bounceDomain ?? null,
    writers,
  });

  async function deliverSafely(row: EmailRow, cache: BatchCache, release: () => void): Promise<void> {
    try {
      const started = Date.now();
      const outcome = await deliver(row, cache, release);
      if (outcome) {
        emitOutcome(row.id, outcome);
        opts.onOutcome?.({
          outcome,
          kind: row.kind,
          durationMs: Date.now() - started,
          lagMs: Math.max(0, clock.now() - Number(row.due_at)),
        });
      }
    } catch (err) {
      // Typically the database went away before the hand-over: nothing reached the relay, the lease
      // expires and the e-mail is tried again.
      if (noteDatabaseUnavailable(err))
        log.warn(
          { email_id: row.id, err: String(err) },
          'database unavailable; the e-mail is retried when its lease expires',
        );
      else log.error({ email_id: row.id, err }, 'delivery crashed; the e-mail is retried when its lease expires');
    }
  }

  // Each claimed batch shares one cache (projects, templates, settings) and one read of its contacts.
  const caches = new WeakMap<EmailRow, BatchCache>();
  // On SQLite the claim is a unit of the API's group commit like the outcome writes (delivery/outcomes.ts):
  // it shares the requests' commit instead of adding one of its own to the single writer's queue.
  // A relay that is full here (a hung one, say) keeps its projects' e-mails unclaimed: the batch goes to
  // the other projects (fair claims, SPEC §20).
  const claimDue_ = (limit: number, skipProjects: number[]) => {
    const o = { workerId: id, now: clock.now(), leaseMs, limit, skipProjects };
    return database.dialect === 'sqlite'
      ? inTransaction(database, (trx) => claimDue(trx, 'sqlite', o))
      : claimDue(db, database.dialect, o);
  };
  // Every send's end and every accepted request wakes the loop. While a relay is full, each wake used to
  // claim again and find nothing (its projects left out, nobody else due): in the e2e bench 1,485 empty
  // claims of 1,617, more database time than the real ones. A claim that came back empty is repeated for
  // the same full relays only after EMPTY_CLAIM_RECHECK_MS (real time, not the injectable clock); as soon
  // as a relay drains below full the next wake claims at once.
  let emptyWhileFull: { skip: string; at: number } | null = null;
  // In the API's process on SQLite the worker yields: while many requests wait for the writer, the next
  // claim waits a little (a few times in a row at most, so delivery never stops under a steady load).
  let yielded = 0;
  const holdBack = () => {
    if (database.dialect !== 'sqlite' || commitQueueDepth(database) < DEEP_COMMIT_QUEUE || yielded >= MAX_YIELDS) {
      yielded = 0;
      return 0;
    }
    yielded++;
    return YIELD_MS;
  };

  const loop = leaseLoop<EmailRow>({
    async claim(limit) {
      // Outcomes still owed to a database that was away come first (delivery/outcomes.ts).
      if (writers.owed() > 0) return [];
      const skip = slots.fullProjects();
      const skipKey = skip.join(',');
      const recent = emptyWhileFull?.skip === skipKey && performance.now() - emptyWhileFull.at < EMPTY_CLAIM_RECHECK_MS;
      if (skip.length > 0 && recent) return [];
      const rows = await claimDue_(limit, skip);
      emptyWhileFull = rows.length === 0 && skip.length > 0 ? { skip: skipKey, at: performance.now() } : null;
      const cache = newCache();
      prefetchContacts(db, rows, cache);
      for (const r of rows) caches.set(r, cache);
      return rows;
    },
    // `concurrency` bounds e-mails being rendered and sent; one waiting for its outcome to be written
    // no longer takes a slot (deliver frees it).
    work: { each: (row, free) => deliverSafely(row, caches.get(row) ?? newCache(), free) },
    batchSize,
    holdBack,
    parked: () => slots.parked,
    concurrency: Math.max(1, opts.concurrency ?? 10),
    pollMs,
    async idleMs() {
      const next = await nextDueAt(db);
      // Due but not claimable (another worker holds it right now): do not spin.
      return Math.max(20, next === null ? pollMs : Math.min(pollMs, next - clock.now()));
    },
    leaseMs,
    renew: (rows) =>
      renewLease(
        db,
        id,
        rows.map((r) => r.id),
        clock.now(),
        leaseMs,
      ).then(() => {}),
    release: (rows) =>
      releaseClaims(
        db,
        id,
        rows.map((r) => r.id),
        clock.now(),
      ).then(() => {}),
    onError(err, what) {
      // The database away is an ordinary day (SPEC §20): counted, said at warn, retried with backoff.
      if (noteDatabaseUnavailable(err)) log.warn({ err: String(err), what }, 'database unavailable; retrying');
      else if (what === 'claim') log.error({ err }, 'outbox poll failed; retrying');
      else if (what === 'renew') log.warn({ err }, 'could not renew leases');
      else if (what === 'release') log.warn({ err }, 'could not hand back unstarted e-mails; their lease will expire');
      else log.error({ err }, 'delivery crashed; the e-mail is retried when its lease expires');
    },
  });

  return {
    id,
    start() {
      if (running) return;
      running = true;
      countLocalWorker(1);
      loop.start();
    },
    stop() {
      if (!running) return stopping ?? Promise.resolve();
      running = false;
      countLocalWorker(-1);
      stopping = (async () => {
        writers.abandon();
        await loop.stop();
        if (ownRouter) await router.close();
      })();
      return stopping;
    },
    wake: loop.wake,
    waitForOutcome: (emailId, timeoutMs) => waitForEmailOutcome(database, emailId, timeoutMs),
    runOnce: () => loop.runOnce(),
  };
}
