import { randomBytes } from 'node:crypto';
import type { Project } from '../db/schema.js';
import { canonicalAddress } from '../domain/email.js';
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

/** Create or update by site_key; returns the row and whether it was new. */
export async function upsertProject(
  db: Executor,
  p: { site_key: string; name: string; from_email: string },
  now: number,
): Promise<{ project: Project; created: boolean }> {
  // The sender address is kept in the one form addresses are compared in (Unicode domain, SPEC §10).
  p = { ...p, from_email: canonicalAddress(p.from_email) };
  const existing = await findProjectBySiteKey(db, p.site_key);
  if (existing) {
    if (existing.name === p.name && existing.from_email === p.from_email) return { project: existing, created: false };
    await db
      .updateTable('projects')
      .set({ name: p.name, from_email: p.from_email, updated_at: now })
      .where('id', '=', existing.id)
      .execute();
    return { project: { ...existing, name: p.name, from_email: p.from_email, updated_at: now }, created: false };
  }
  const project = await db
    .insertInto('projects')
    .values({ ...p, created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { project, created: true };
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
