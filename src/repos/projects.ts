import { randomBytes } from 'node:crypto';
import type { Project } from '../db/schema.js';
import type { Executor } from './types.js';

export async function findProjectBySiteKey(db: Executor, siteKey: string): Promise<Project | undefined> {
  return db.selectFrom('projects').selectAll().where('site_key', '=', siteKey).executeTakeFirst();
}

export async function findProjectById(db: Executor, id: number): Promise<Project | undefined> {
  return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listProjects(db: Executor): Promise<Project[]> {
  return db.selectFrom('projects').selectAll().orderBy('site_key').execute();
}

/**
 * Create or update by site_key; returns the row and whether it was new. The unique site_key decides
 * between concurrent creators (insert … on conflict do nothing): one creates, the others update or
 * return the same project.
 */
export async function upsertProject(
  db: Executor,
  p: { site_key: string; name: string; from_email: string },
  now: number,
): Promise<{ project: Project; created: boolean }> {
  const inserted = await db
    .insertInto('projects')
    .values({ ...p, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('site_key').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { project: inserted, created: true };
  const updated = await db
    .updateTable('projects')
    .set({ name: p.name, from_email: p.from_email, updated_at: now })
    .where('site_key', '=', p.site_key)
    .where((eb) => eb.or([eb('name', '<>', p.name), eb('from_email', '<>', p.from_email)]))
    .returningAll()
    .executeTakeFirst();
  return { project: updated ?? (await findProjectBySiteKey(db, p.site_key))!, created: false };
}

/** A secret made once per installation and shared by every process through the database. */
export async function getOrCreateSecret(db: Executor, name: string): Promise<string> {
  const found = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
  if (found) return found.value;
  await db
    .insertInto('settings')
    .values({ name, value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}
