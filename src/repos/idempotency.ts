import type { Executor } from './types.js';

export interface IdempotencyRecord {
  request_hash: string;
  endpoint: string;
  response_status: number;
  response_body: string;
  event_id: number;
}

export async function findIdempotency(
  db: Executor,
  projectId: number,
  key: string,
): Promise<IdempotencyRecord | undefined> {
  return db
    .selectFrom('idempotency')
    .select(['request_hash', 'endpoint', 'response_status', 'response_body', 'event_id'])
    .where('project_id', '=', projectId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

/** Returns false when another request stored this key first (the caller then replays or refuses). */
export async function insertIdempotency(
  db: Executor,
  r: IdempotencyRecord & { project_id: number; idempotency_key: string },
  now: number,
): Promise<boolean> {
  const res = await db
    .insertInto('idempotency')
    .values({ ...r, created_at: now })
    .onConflict((oc) => oc.columns(['project_id', 'idempotency_key']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function purgeIdempotency(db: Executor, olderThan: number): Promise<number> {
  const res = await db.deleteFrom('idempotency').where('created_at', '<', olderThan).executeTakeFirst();
  return Number(res.numDeletedRows ?? 0);
}
