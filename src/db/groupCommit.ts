// Group commit: short write transactions that arrive while one is committing share the next commit.
//
// SQLite has one writer and, at synchronous=FULL, one fsync per commit; one transaction per request
// made the fsync (and BEGIN/COMMIT) the bound on requests per second. Here each unit of work runs in a
// SAVEPOINT of a shared transaction, so a unit that fails rolls back alone and its caller gets its
// error, while the others commit together. Nobody hears "done" before the COMMIT that holds their
// writes has returned: durability per answered request is exactly as before.
//
// On PostgreSQL each unit keeps its own transaction: the pool runs them in parallel and the server
// already flushes concurrent commits together (one WAL flush for all of them).
//
// A unit must do all its database work through the transaction it is given (the SQLite connection is
// held by the shared transaction until it commits).
import { sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { Db } from './index.js';

export type Work<T> = (trx: Transaction<Database>) => Promise<T>;

interface Unit {
  work: Work<unknown>;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

/** Most units per commit: bounds how long one shared transaction holds the writer. */
const MAX_BATCH = 256;

const SAVEPOINT = sql`savepoint egw_unit`;
const RELEASE = sql`release savepoint egw_unit`;
const ROLLBACK_TO = sql`rollback to savepoint egw_unit`;

class GroupCommitter {
  private queue: Unit[] = [];
  private flushing = false;
  constructor(private readonly db: Db) {}

  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work: work as Work<unknown>, resolve: resolve as (v: unknown) => void, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length) {
        // Let requests that are ready (their reads were waiting for the connection the last commit held)
        // join before the next batch starts; otherwise each commit would carry a single request.
        await new Promise<void>((r) => setImmediate(r));
        await this.commit(this.queue.splice(0, MAX_BATCH));
      }
    } finally {
      this.flushing = false;
    }
  }

  private async commit(batch: Unit[]): Promise<void> {
    if (batch.length === 1) {
      const [u] = batch;
      await this.db.db.transaction().execute(u.work).then(u.resolve, u.reject);
      return;
    }
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      await this.db.db.transaction().execute(async (trx) => {
        for (const u of batch) {
          await SAVEPOINT.execute(trx);
          try {
            const value = await u.work(trx);
            await RELEASE.execute(trx);
            outcomes.push({ ok: true, value });
          } catch (error) {
            // If this fails too the transaction is gone: the outer catch fails the whole batch.
            await ROLLBACK_TO.execute(trx);
            await RELEASE.execute(trx);
            outcomes.push({ ok: false, value: error });
          }
        }
      });
    } catch (error) {
      // Nothing of the batch committed: every unit fails (with its own error if it had one).
      batch.forEach((u, i) => u.reject(outcomes[i] && !outcomes[i].ok ? outcomes[i].value : error));
      return;
    }
    batch.forEach((u, i) => (outcomes[i].ok ? u.resolve(outcomes[i].value) : u.reject(outcomes[i].value)));
  }
}

const committers = new WeakMap<Db, GroupCommitter>();

/** Runs `work` in a transaction: a shared, group-committed one on SQLite, its own on PostgreSQL. */
export function inTransaction<T>(db: Db, work: Work<T>): Promise<T> {
  if (db.dialect !== 'sqlite') return db.db.transaction().execute(work);
  let c = committers.get(db);
  if (!c) committers.set(db, (c = new GroupCommitter(db)));
  return c.run(work);
}
