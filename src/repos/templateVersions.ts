// Template versions (SPEC §16): inserted, read, never updated or deleted. The templates row holds the
// published version's content (repos/templates.ts), so everything that reads templates sees what is live.
import { toFlag } from '../db/flags.js';
import type { TemplateVersionRow } from '../db/schema.js';
import { versionFromRow } from './flagRows.js';
import type { Executor } from './types.js';

/** What a version holds beyond its identity: the content, its settings and its analysed variables (JSON). */
export type VersionContent = Omit<
  TemplateVersionRow,
  'id' | 'template_id' | 'project_id' | 'version' | 'actor' | 'created_at'
>;

/** Adds version n+1 of a template; the caller holds the audited-changes lock, so numbers do not race. */
export async function insertVersion(
  db: Executor,
  t: { id: number; project_id: number },
  content: VersionContent,
  actor: string,
  now: number,
): Promise<number> {
  const last = await db
    .selectFrom('template_versions')
    .select((eb) => eb.fn.max('version').as('v'))
    .where('template_id', '=', t.id)
    .executeTakeFirst();
  const version = Number(last?.v ?? 0) + 1;
  await db
    .insertInto('template_versions')
    .values({
      template_id: t.id,
      project_id: t.project_id,
      version,
      ...content,
      tracking: toFlag(content.tracking),
      actor,
      created_at: now,
    })
    .execute();
  return version;
}

export async function listVersions(db: Executor, templateId: number): Promise<TemplateVersionRow[]> {
  const rows = await db
    .selectFrom('template_versions')
    .selectAll()
    .where('template_id', '=', templateId)
    .orderBy('version', 'desc')
    .execute();
  return rows.map(versionFromRow);
}

export async function findVersion(
  db: Executor,
  templateId: number,
  version: number,
): Promise<TemplateVersionRow | undefined> {
  const row = await db
    .selectFrom('template_versions')
    .selectAll()
    .where('template_id', '=', templateId)
    .where('version', '=', version)
    .executeTakeFirst();
  return row && versionFromRow(row);
}
