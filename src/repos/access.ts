// The project an object addressed by id belongs to: what the admin routes' access check needs.
import type { AccessObject } from '../domain/access.js';
import type { Executor } from './types.js';

const TABLES = {
  email: 'scheduled_emails',
  contact: 'contacts',
  list: 'lists',
  event: 'events',
  campaign: 'campaigns',
  key: 'api_keys',
  template: 'templates',
} as const satisfies Record<AccessObject, string>;

export async function projectOfObject(db: Executor, kind: AccessObject, id: number): Promise<number | undefined> {
  const row = await db.selectFrom(TABLES[kind]).select('project_id').where('id', '=', id).executeTakeFirst();
  return row ? Number(row.project_id) : undefined;
}

/** Site keys of these projects (the audit log is filtered by site key). */
export async function siteKeysOf(db: Executor, ids: readonly number[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db
    .selectFrom('projects')
    .select('site_key')
    .where('id', 'in', [...ids])
    .execute();
  return rows.map((r) => r.site_key);
}
