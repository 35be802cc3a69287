import { sql, type RawBuilder } from 'kysely';
import { columnList, unnest } from './setBased.js';
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

export type NewIdempotencyRecord = IdempotencyRecord & {
  project_id: number;
  idempotency_key: string;
  created_at: number;
};

const NEW_RECORD = {
  project_id: 'bigint',
  idempotency_key: 'text',
  request_hash: 'text',
  endpoint: 'text',
  response_status: 'integer',
  response_body: 'text',
  event_id: 'bigint',
  created_at: 'bigint',
} as const;

/**
 * insertIdempotency for many records (PostgreSQL; one per project and key), in key order so concurrent
 * writers cannot deadlock: a statement for insertAcceptedMany, which counts the records stored.
 */
export function insertIdempotencyStatement(records: NewIdempotencyRecord[]): RawBuilder<unknown> {
  return sql`insert into idempotency (${columnList(NEW_RECORD)})
    select ${columnList(NEW_RECORD, 'u')} from ${unnest(records, NEW_RECORD)}
    order by u.project_id, u.idempotency_key
    on conflict (project_id, idempotency_key) do nothing`;
}
