// The audit log (migration 009): append-only; nothing in the product updates or deletes a row except
// the retention purge (delivery/retention.ts).
import type { Insertable, Selectable } from 'kysely';
import type { AuditLogTable } from '../db/schema.js';
import type { Executor } from './types.js';

export type AuditRow = Selectable<AuditLogTable>;
export type NewAudit = Insertable<AuditLogTable>;

export async function insertAudit(db: Executor, row: NewAudit): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

export interface AuditFilter {
  /** Site keys the reader may see; null: every row, including those of no project. */
  siteKeys: readonly string[] | null;
  actor?: string;
  action?: string;
  target?: string;
  since?: number;
  until?: number;
  beforeId: number | null;
  limit: number;
}

/** Newest first, keyset-paged by id. */
export async function listAudit(db: Executor, f: AuditFilter): Promise<AuditRow[]> {
  // No permitted project: nothing to read (and no empty IN list, which neither dialect accepts).
  if (f.siteKeys !== null && f.siteKeys.length === 0) return [];
  let q = db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(f.limit);
  if (f.siteKeys !== null) q = q.where('site_key', 'in', [...f.siteKeys]);
  if (f.actor !== undefined) q = q.where('actor', '=', f.actor);
  if (f.action !== undefined) q = q.where('action', '=', f.action);
  if (f.target !== undefined) q = q.where('target', '=', f.target);
  if (f.since !== undefined) q = q.where('at', '>=', f.since);
  if (f.until !== undefined) q = q.where('at', '<', f.until);
  if (f.beforeId !== null) q = q.where('id', '<', f.beforeId);
  return (await q.execute()).map((r) => ({ ...r, id: Number(r.id), at: Number(r.at) }));
}
