// Erases long histories in batches (SPEC §18): the worker takes a running erasure under a lease (as
// workers/siteWebhooks.ts does deliveries), erases one batch of its rows in a short transaction, and goes on
// until nothing of the person is left; then the erasure is `done` and its sealed address cleared.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/index.js';
import {
  addCounts,
  claimErasure,
  eraseHistoryBatch,
  isEmpty,
  recordErasureProgress,
  type ErasureRow,
} from '../repos/erasure.js';
import { secretBox } from '../services/secrets.js';
import { systemClock, type Clock } from '../delivery/clock.js';
import { leaseLoop, noopLogger, type WorkerLogger } from './loop.js';

export interface ErasureWorkerOptions {
  db: Db;
  /** The installation secret the address is sealed under while an erasure runs. */
  secret: string;
  clock?: Clock;
  /** Rows per table and batch: each batch is one short transaction. */
  batchSize?: number;
  pollMs?: number;
  logger?: WorkerLogger;
}

export interface ErasureWorker {
  start(): void;
  stop(): Promise<void>;
  /** Takes one running erasure and erases one batch of it; false when there was none to take. */
  runOnce(): Promise<boolean>;
}

const LEASE_MS = 60_000;

export function createErasureWorker(o: ErasureWorkerOptions): ErasureWorker {
  const db = o.db.db;
  const clock = o.clock ?? systemClock;
  const id = `er:${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const limit = Math.max(1, o.batchSize ?? 1000);
  const pollMs = Math.max(10, o.pollMs ?? 1000);
  const log = o.logger ?? noopLogger;
  const box = secretBox(o.secret);

  async function batch(e: ErasureRow): Promise<void> {
    if (!e.sealed_email) {
      await recordErasureProgress(db, {
        id: e.id,
        workerId: id,
        erased: e.erased,
        done: true,
        now: clock.now(),
        leaseMs: LEASE_MS,
      });
      return;
    }
    const email = box.open(e.sealed_email);
    const done = await db.transaction().execute(async (trx) => {
      const got = await eraseHistoryBatch(trx, { projectId: e.project_id, contactId: e.contact_id, email, limit });
      const finished = isEmpty(got);
      const ok = await recordErasureProgress(trx, {
        id: e.id,
        workerId: id,
        erased: addCounts(e.erased, got),
        done: finished,
        now: clock.now(),
        leaseMs: LEASE_MS,
      });
      // A lost lease: another worker owns it now; this batch is rolled back and redone there.
      if (!ok) throw new LeaseLost();
      e.erased = addCounts(e.erased, got);
      return finished;
    });
    if (done) log.info({ erasure_id: e.id, contact_id: e.contact_id }, 'erasure finished');
  }

  // One erasure at a time, one batch of it per claim: a claim that found one is followed by the next at
  // once, so a long history is erased batch after batch; the lease passes to another worker if this one dies.
  const loop = leaseLoop<ErasureRow>({
    claim: async () => {
      const e = await claimErasure(db, id, clock.now(), LEASE_MS);
      return e ? [e] : [];
    },
    work: {
      each: (e) =>
        batch(e).catch((err: unknown) => {
          if (!(err instanceof LeaseLost)) throw err;
        }),
    },
    batchSize: 1,
    pollMs,
    onError: (err) => log.error({ err }, 'erasure batch failed; it is tried again when its lease expires'),
  });

  return {
    runOnce: async () => (await loop.runOnce()) > 0,
    start: loop.start,
    async stop() {
      await loop.stop();
    },
  };
}

class LeaseLost extends Error {}
