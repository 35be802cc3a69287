// Sender domains of the projects (migration 023, SPEC §21).
import type { Selectable } from 'kysely';
import type { SenderDomainsTable } from '../db/tables/projects.js';
import type { SenderDomainStatus } from '../domain/statuses.js';
import type { Executor } from './types.js';

export type SenderDomainRow = Selectable<SenderDomainsTable>;

export const listDomains = (db: Executor, projectId: number) =>
  db.selectFrom('sender_domains').selectAll().where('project_id', '=', projectId).orderBy('domain').execute();

export const findDomain = (db: Executor, projectId: number, domain: string) =>
  db
    .selectFrom('sender_domains')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('domain', '=', domain)
    .executeTakeFirst();

/** Other projects holding the domain verified or approved. */
export const holdersElsewhere = (db: Executor, projectId: number, domain: string) =>
  db
    .selectFrom('sender_domains')
    .select('project_id')
    .where('domain', '=', domain)
    .where('project_id', '!=', projectId)
    .where('status', 'in', ['verified', 'approved'])
    .execute();

/**
 * The new row, or undefined when the project holds the domain already: a concurrent change may add it
 * after the caller looked (a unique violation would otherwise be a 500).
 */
export async function insertDomainIfAbsent(
  db: Executor,
  row: { project_id: number; domain: string; status: SenderDomainStatus; token: string; approved_by: string | null },
  now: number,
): Promise<SenderDomainRow | undefined> {
  return db
    .insertInto('sender_domains')
    .values({ ...row, created_at: now, updated_at: now, checked_at: null })
    .onConflict((oc) => oc.columns(['project_id', 'domain']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function setDomainStatus(
  db: Executor,
  id: number,
  change: { status?: SenderDomainStatus; checked_at?: number; approved_by?: string | null },
  now: number,
): Promise<void> {
  await db
    .updateTable('sender_domains')
    .set({ ...change, updated_at: now })
    .where('id', '=', id)
    .execute();
}
