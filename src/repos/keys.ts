import type { ApiKeyRow } from '../db/schema.js';
import type { KeyStatus } from '../domain/statuses.js';
import type { RateLimit, Rights } from '../schemas/common.js';
import { byProject, parseJson, type Executor, type ProjectFilter } from './types.js';

export interface ApiKey {
  id: number;
  project_id: number;
  site_key: string;
  name: string;
  status: KeyStatus;
  last4: string;
  key_hash: string;
  rights: Rights;
  rate_limit: RateLimit | null;
  created_at: number;
  disabled_at: number | null;
}

function toKey(row: ApiKeyRow & { site_key: string }): ApiKey {
  return {
    id: row.id,
    project_id: row.project_id,
    site_key: row.site_key,
    name: row.name,
    status: row.status,
    last4: row.last4,
    key_hash: row.key_hash,
    rights: parseJson<Rights>(row.rights, {}),
    rate_limit:
      row.rate_per_second && row.rate_burst ? { per_second: row.rate_per_second, burst: row.rate_burst } : null,
    created_at: Number(row.created_at),
    disabled_at: row.disabled_at === null ? null : Number(row.disabled_at),
  };
}

const withSite = (db: Executor) =>
  db
    .selectFrom('api_keys')
    .innerJoin('projects', 'projects.id', 'api_keys.project_id')
    .selectAll('api_keys')
    .select('projects.site_key');

export async function findKeyByHash(db: Executor, hash: string): Promise<ApiKey | undefined> {
  const row = await withSite(db).where('api_keys.key_hash', '=', hash).executeTakeFirst();
  return row && toKey(row);
}

export async function findKeyById(db: Executor, id: number): Promise<ApiKey | undefined> {
  const row = await withSite(db).where('api_keys.id', '=', id).executeTakeFirst();
  return row && toKey(row);
}

export async function listKeys(db: Executor, projectId?: ProjectFilter): Promise<ApiKey[]> {
  let q = withSite(db).orderBy('api_keys.id');
  if (projectId !== undefined) q = q.where('api_keys.project_id', ...byProject(projectId));
  return (await q.execute()).map(toKey);
}

export async function insertKey(
  db: Executor,
  k: {
    project_id: number;
    name: string;
    key_hash: string;
    last4: string;
    rights: Rights;
    rate_limit?: RateLimit | null;
  },
  now: number,
): Promise<number> {
  const row = await db
    .insertInto('api_keys')
    .values({
      project_id: k.project_id,
      name: k.name,
      key_hash: k.key_hash,
      last4: k.last4,
      status: 'active',
      rights: JSON.stringify(k.rights),
      rate_per_second: k.rate_limit?.per_second ?? null,
      rate_burst: k.rate_limit?.burst ?? null,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateKey(
  db: Executor,
  id: number,
  patch: { rights?: Rights; rate_limit?: RateLimit | null; name?: string; status?: 'active' | 'disabled' },
  now: number,
): Promise<void> {
  const changes = {
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.rights !== undefined ? { rights: JSON.stringify(patch.rights) } : {}),
    ...(patch.rate_limit !== undefined
      ? { rate_per_second: patch.rate_limit?.per_second ?? null, rate_burst: patch.rate_limit?.burst ?? null }
      : {}),
    ...(patch.status === 'disabled' ? { status: 'disabled' as const, disabled_at: now } : {}),
  };
  // An empty change (PATCH with {}) is no statement at all: `UPDATE … SET` with nothing is invalid SQL.
  if (Object.keys(changes).length === 0) return;
  await db.updateTable('api_keys').set(changes).where('id', '=', id).execute();
}
