import { defaultLayout } from '../domain/defaultLayout.js';
import { upsertLayout } from './layouts.js';
import { randomBytes } from 'node:crypto';
import { insertBuiltInTopics } from './consent.js';
import { toFlag } from '../db/flags.js';
import type { Project, ProjectLocale } from '../db/schema.js';
import { canonicalAddress } from '../domain/email.js';
import { NEW_PROJECT_TRACKING } from '../domain/trackingTokens.js';
import { holdHandOvers } from './handOver.js';
import { projectFromRow } from './flagRows.js';
import type { Executor } from './types.js';

export async function findProjectBySiteKey(db: Executor, siteKey: string): Promise<Project | undefined> {
  const row = await db.selectFrom('projects').selectAll().where('site_key', '=', siteKey).executeTakeFirst();
  return row && projectFromRow(row);
}

export async function findProjectById(db: Executor, id: number): Promise<Project | undefined> {
  const row = await db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  return row && projectFromRow(row);
}

export async function listProjects(db: Executor): Promise<Project[]> {
  return (await db.selectFrom('projects').selectAll().orderBy('site_key').execute()).map(projectFromRow);
}

export interface ProjectInput {
  site_key: string;
  name: string;
  from_email: string;
  /** Left as they are on an update when absent; the column defaults on a create. */
  timezone?: string;
  locale?: ProjectLocale;
  /** Absent: left as it is; null: none. */
  reply_to?: string | null;
}

/**
 * Create or update by site_key; returns the row and whether it was new. The unique site_key decides
 * between concurrent creators (insert … on conflict do nothing): one creates, the others update or
 * return the same project.
 */
export async function upsertProject(
  db: Executor,
  p: ProjectInput,
  now: number,
): Promise<{ project: Project; created: boolean }> {
  // The sender address is kept in the one form addresses are compared in (Unicode domain, SPEC §10).
  p = { ...p, from_email: canonicalAddress(p.from_email) };
  const inserted = await db
    .insertInto('projects')
    .values({
      site_key: p.site_key,
      name: p.name,
      from_email: p.from_email,
      created_at: now,
      updated_at: now,
      // SPEC §22: a new project's tracking defaults (existing ones keep what they had).
      tracking: NEW_PROJECT_TRACKING,
      ...(p.timezone === undefined ? {} : { timezone: p.timezone }),
      ...(p.locale === undefined ? {} : { locale: p.locale }),
      ...(p.reply_to === undefined ? {} : { reply_to: p.reply_to }),
    })
    .onConflict((oc) => oc.column('site_key').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) {
    // Every project has its consent topics from the start (SPEC §18), and its default layout in its
    // language, which templates that name none are framed in (SPEC §22).
    await insertBuiltInTopics(db, inserted.id, inserted.locale, now);
    const layout = defaultLayout(inserted.locale);
    await upsertLayout(db, inserted.id, layout, now);
    const framed = { ...inserted, default_layout: layout.name };
    await db.updateTable('projects').set({ default_layout: layout.name }).where('id', '=', inserted.id).execute();
    return { project: projectFromRow(framed), created: true };
  }
  const existing = (await findProjectBySiteKey(db, p.site_key))!;
  const project = await updateProject(
    db,
    existing,
    { name: p.name, from_email: p.from_email, timezone: p.timezone, locale: p.locale, reply_to: p.reply_to },
    now,
  );
  return { project, created: false };
}

/** Changes some of a project's settings; returns the row as it is afterwards. */
export async function updateProject(
  db: Executor,
  existing: Project,
  changes: Partial<
    Pick<
      Project,
      | 'name'
      | 'from_email'
      | 'timezone'
      | 'locale'
      | 'reply_to'
      | 'allow_private_webhooks'
      | 'allow_private_relays'
      | 'brand_color'
      | 'logo_url'
      | 'postal_address'
      | 'fallback_name'
      | 'default_layout'
      | 'tracking'
    >
  >,
  now: number,
): Promise<Project> {
  if (changes.from_email !== undefined) changes = { ...changes, from_email: canonicalAddress(changes.from_email) };
  const given = defined(changes);
  if (Object.entries(given).every(([k, v]) => existing[k as keyof Project] === v)) return existing;
  const { allow_private_webhooks: allowPrivate, allow_private_relays: allowRelays, ...columns } = changes;
  await db
    .updateTable('projects')
    .set({
      ...defined(columns),
      ...(allowPrivate === undefined ? {} : { allow_private_webhooks: toFlag(allowPrivate) }),
      ...(allowRelays === undefined ? {} : { allow_private_relays: toFlag(allowRelays) }),
      updated_at: now,
    })
    .where('id', '=', existing.id)
    .execute();
  return { ...existing, ...given, updated_at: now };
}

const defined = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

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

/** Pauses a project's campaigns and cart chains; false when it was paused already (the first reason stays). */
export async function pauseMarketing(db: Executor, projectId: number, now: number, reason: string): Promise<boolean> {
  const res = await db
    .updateTable('projects')
    .set({ marketing_paused_at: now, marketing_paused_reason: reason, updated_at: now })
    .where('id', '=', projectId)
    .where('marketing_paused_at', 'is', null)
    .executeTakeFirst();
  const paused = Number(res.numUpdatedRows) > 0;
  // Hand-overs of the project's marketing e-mails under way finish before the pause commits (issue 30).
  if (paused) await holdHandOvers(db, { projectId, kinds: ['campaign', 'cart'], now });
  return paused;
}

/** Resumes them (an administrator's act); returns the row afterwards. */
export async function resumeMarketing(db: Executor, projectId: number, now: number): Promise<Project | undefined> {
  await db
    .updateTable('projects')
    .set({ marketing_paused_at: null, marketing_paused_reason: null, updated_at: now })
    .where('id', '=', projectId)
    .execute();
  return findProjectById(db, projectId);
}
