// Per-project layouts (SPEC §16): the frame a template's body is placed in at `{{ content }}`.
import type { LayoutRow } from '../db/schema.js';
import type { Executor } from './types.js';

export async function listLayouts(db: Executor, projectId: number): Promise<LayoutRow[]> {
  return db.selectFrom('template_layouts').selectAll().where('project_id', '=', projectId).orderBy('name').execute();
}

export async function findLayout(db: Executor, projectId: number, name: string): Promise<LayoutRow | undefined> {
  return db
    .selectFrom('template_layouts')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function upsertLayout(
  db: Executor,
  projectId: number,
  l: { name: string; html: string; text: string },
  now: number,
): Promise<boolean> {
  const inserted = await db
    .insertInto('template_layouts')
    .values({ project_id: projectId, ...l, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['project_id', 'name']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return true;
  await db
    .updateTable('template_layouts')
    .set({ html: l.html, text: l.text, updated_at: now })
    .where('project_id', '=', projectId)
    .where('name', '=', l.name)
    .execute();
  return false;
}

export async function deleteLayout(db: Executor, projectId: number, name: string): Promise<boolean> {
  const r = await db
    .deleteFrom('template_layouts')
    .where('project_id', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Names of the templates whose published version names this layout, or names none while it is the default. */
export async function templatesUsingLayout(
  db: Executor,
  project: { id: number; default_layout: string | null },
  name: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom('templates')
    .select('name')
    .where('project_id', '=', project.id)
    .where((eb) =>
      project.default_layout === name
        ? eb.or([eb('layout', '=', name), eb('layout', 'is', null)])
        : eb('layout', '=', name),
    )
    .orderBy('name')
    .execute();
  return rows.map((r) => r.name);
}
