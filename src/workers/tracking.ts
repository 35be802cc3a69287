// Drains the hits outbox (SPEC §17): claims pending hits under a lease, and in one transaction marks
// them processed (only those it still holds), adds them to the per-e-mail and per-link counters and
// enqueues the site's `email.opened` / `email.clicked` webhooks for the first human ones. Several
// workers share the table; each hit is folded exactly once.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../db/index.js';
import {
  addEngagement,
  addLinkClicks,
  claimFirstNotices,
  claimHits,
  deltas,
  emailsByIds,
  existingEmailIds,
  markProcessed,
  releaseHits,
  type ClaimedHit,
} from '../repos/trackingHits.js';
import { iso } from '../repos/types.js';
import { enqueueEmailWebhooks } from '../services/siteWebhooks/enqueue.js';
import { systemClock, type Clock } from '../delivery/clock.js';
import { leaseLoop, noopLogger, type WorkerLogger } from './loop.js';

export interface TrackingWorkerOptions {
  db: Db;
  clock?: Clock;
  workerId?: string;
  /** Hits per claim (default 2000): at 10,000 hits a second, five claims. */
  batchSize?: number;
  pollMs?: number;
  leaseMs?: number;
  logger?: WorkerLogger;
}

export interface TrackingWorker {
  readonly id: string;
  start(): void;
  stop(): Promise<void>;
  /** Claims and folds one batch; returns how many hits it folded. */
  runOnce(): Promise<number>;
}

export function createTrackingWorker(o: TrackingWorkerOptions): TrackingWorker {
  const { db: database } = o;
  const db = database.db;
  const clock = o.clock ?? systemClock;
  const id = o.workerId ?? `tr:${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const batchSize = Math.max(1, o.batchSize ?? 2000);
  const pollMs = Math.max(10, o.pollMs ?? 250);
  const leaseMs = Math.max(1000, o.leaseMs ?? 60_000);
  const log = o.logger ?? noopLogger;

  /** Folds one claim's hits in one transaction; returns how many were still this worker's. */
  async function fold(claimed: ClaimedHit[]): Promise<number> {
    if (claimed.length === 0) return 0;
    return db.transaction().execute(async (trx) => {
      const now = clock.now();
      const held = await markProcessed(
        trx,
        id,
        claimed.map((h) => h.id),
        now,
      );
      const ours = claimed.filter((h) => held.has(h.id));
      if (ours.length < claimed.length)
        log.warn({ worker: id, lost: claimed.length - ours.length }, 'hit leases lost; another worker folds them');
      // Hits of e-mails removed since they were sent are dropped (processed, counted nowhere).
      const existing = new Set(await existingEmailIds(trx, [...new Set(ours.map((h) => Number(h.email_id)))]));
      const mine = ours.filter((h) => existing.has(Number(h.email_id)));
      const { emails, links, firstClickUrl } = deltas(mine);
      await addEngagement(trx, database.dialect, emails);
      await addLinkClicks(trx, database.dialect, links);
      const opened = await claimFirstNotices(
        trx,
        'open',
        emails.filter((e) => e.opens > 0).map((e) => e.email_id),
      );
      const clicked = await claimFirstNotices(
        trx,
        'click',
        emails.filter((e) => e.clicks > 0).map((e) => e.email_id),
      );
      if (opened.size || clicked.size) {
        const rows = await emailsByIds(trx, [...new Set([...opened.keys(), ...clicked.keys()])]);
        // A test send from the delivery settings is the administrator's, not the site's business.
        const real = rows.filter((r) => !r.is_test);
        await enqueueEmailWebhooks(
          trx,
          [
            ...real
              .filter((r) => opened.has(Number(r.id)))
              .map((email) => ({
                email,
                kind: 'email.opened' as const,
                extra: { opened_at: iso(opened.get(Number(email.id))) },
              })),
            ...real
              .filter((r) => clicked.has(Number(r.id)))
              .map((email) => ({
                email,
                kind: 'email.clicked' as const,
                extra: {
                  clicked_at: iso(clicked.get(Number(email.id))),
                  url: firstClickUrl.get(Number(email.id))?.url ?? null,
                },
              })),
          ],
          now,
        );
      }
      return ours.length;
    });
  }

  // One claim is one task: its hits are folded together, in one transaction.
  let folded = 0;
  const loop = leaseLoop<ClaimedHit>({
    claim: (limit) => claimHits(db, database.dialect, { workerId: id, now: clock.now(), leaseMs, limit }),
    work: {
      all: async (hits) => {
        folded += await fold(hits);
      },
    },
    batchSize,
    refillAt: batchSize,
    pollMs,
    onError: (err) =>
      log.error({ err }, 'hit outbox drain failed; retrying (claimed hits return when their lease expires)'),
  });

  return {
    id,
    start: loop.start,
    async stop() {
      if (await loop.stop()) await releaseHits(db, id).catch(() => {});
    },
    async runOnce() {
      // The hits folded, not the hits claimed: a claimed hit whose lease was lost is not counted.
      const before = folded;
      await loop.runOnce();
      return folded - before;
    },
  };
}
