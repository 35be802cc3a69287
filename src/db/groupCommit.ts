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
import { CompiledQuery, type Transaction } from 'kysely';
import { batcher, fulfilled } from '../batcher.js';
import type { Database } from './schema.js';
import type { Db } from './index.js';

/** A unit of work: everything it writes goes through the transaction it is given. */
export type Work<T> = (trx: Transaction<Database>) => Promise<T>;

/** Most units per commit: bounds how long one shared transaction holds the writer. */
const MAX_BATCH = 256;

// Compiled once: two of them run for every request.
const SAVEPOINT = CompiledQuery.raw('savepoint egw_unit');
const RELEASE = CompiledQuery.raw('release savepoint egw_unit');
const ROLLBACK_TO = CompiledQuery.raw('rollback to savepoint egw_unit');

/** One shared transaction for the batch, a savepoint per unit of work. */
async function commitTogether(db: Db, batch: Work<unknown>[]): Promise<PromiseSettledResult<unknown>[]> {
  if (batch.length === 1) return Promise.allSettled([db.db.transaction().execute(batch[0])]);
  const outcomes: PromiseSettledResult<unknown>[] = [];
  try {
    await db.db.transaction().execute(async (trx) => {
      for (const work of batch) {
        await trx.executeQuery(SAVEPOINT);
        try {
          const value = await work(trx);
          await trx.executeQuery(RELEASE);
          outcomes.push(fulfilled(value));
        } catch (reason) {
          // If this fails too the transaction is gone (SQLite rolls it back itself on a full disk or an
          // I/O error): the whole batch fails, with this unit's error, which says what happened.
          try {
            await trx.executeQuery(ROLLBACK_TO);
            await trx.executeQuery(RELEASE);
          } catch {
            throw reason;
          }
          outcomes.push({ status: 'rejected', reason });
        }
      }
    });
  } catch (error) {
    // Nothing of the batch committed: every unit fails (with its own error if it had one).
    return batch.map((_, i) =>
      outcomes[i]?.status === 'rejected' ? outcomes[i] : { status: 'rejected', reason: error },
    );
  }
  return outcomes;
}

const committers = new WeakMap<Db, (work: Work<unknown>) => Promise<unknown>>();
// Units waiting for or inside a shared commit, per database: how deep the writer's queue is.
const depths = new WeakMap<Db, number>();

/** Units of work waiting for the SQLite writer's next commit or in it (0 on PostgreSQL). */
export const commitQueueDepth = (db: Db): number => depths.get(db) ?? 0;

/** Runs `work` in a transaction: a shared, group-committed one on SQLite, its own on PostgreSQL. */
export function inTransaction<T>(db: Db, work: Work<T>): Promise<T> {
  if (db.dialect !== 'sqlite') return db.db.transaction().execute(work);
  let commit = committers.get(db);
  if (!commit) {
    // Requests that are ready (their reads were waiting for the connection the last commit held) join
    // the next commit; otherwise each commit would carry a single request.
    commit = batcher({ maxBatch: MAX_BATCH, run: (batch: Work<unknown>[]) => commitTogether(db, batch) });
    committers.set(db, commit);
  }
  depths.set(db, commitQueueDepth(db) + 1);
  return (commit(work) as Promise<T>).finally(() => depths.set(db, commitQueueDepth(db) - 1));
}
