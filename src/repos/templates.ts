// Templates and the per-project routing (routing key -> template).
import { toFlag } from '../db/flags.js';
import type { TemplateRow } from '../db/schema.js';
import { templateFromRow } from './flagRows.js';
import type { VersionContent } from './templateVersions.js';
import type { Executor } from './types.js';

export async function findTemplate(db: Executor, id: number): Promise<TemplateRow | undefined> {
  const row = await db.selectFrom('templates').selectAll().where('id', '=', id).executeTakeFirst();
  return row && templateFromRow(row);
}

export async function findTemplateByName(
  db: Executor,
  projectId: number,
  name: string,
): Promise<TemplateRow | undefined> {
  const row = await db
    .selectFrom('templates')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row && templateFromRow(row);
}

export async function listTemplates(db: Executor, projectId: number): Promise<TemplateRow[]> {
  const rows = await db
    .selectFrom('templates')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('name')
    .execute();
  return rows.map(templateFromRow);
}

/**
 * A template's name is its key, unique per project: saving the same name again updates it. The unique
 * index decides between concurrent saves of a new name: one inserts, the others update.
 */
export async function upsertTemplate(
  db: Executor,
  projectId: number,
  t: { name: string; subject: string; html: string; text: string; topic?: string | null; tracking?: boolean },
  now: number,
): Promise<{ id: number; created: boolean }> {
  const inserted = await db
    .insertInto('templates')
    .values({
      project_id: projectId,
      name: t.name,
      subject: t.subject,
      html: t.html,
      text: t.text,
      ...(t.topic === undefined ? {} : { topic: t.topic }),
      ...(t.tracking === undefined ? {} : { tracking: toFlag(t.tracking) }),
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(['project_id', 'name']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return { id: inserted.id, created: true };
  const updated = await db
    .updateTable('templates')
    .set({
      subject: t.subject,
      html: t.html,
      text: t.text,
      ...(t.topic === undefined ? {} : { topic: t.topic }),
      ...(t.tracking === undefined ? {} : { tracking: toFlag(t.tracking) }),
      updated_at: now,
    })
    .where('project_id', '=', projectId)
    .where('name', '=', t.name)
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: updated.id, created: false };
}

/** The templates row becomes this version: what every reader of templates (delivery first) sees. */
export async function publishContent(
  db: Executor,
  templateId: number,
  version: number,
  c: VersionContent,
  now: number,
) {
  await db
    .updateTable('templates')
    .set({ ...c, tracking: toFlag(c.tracking), version, updated_at: now })
    .where('id', '=', templateId)
    .execute();
}

export async function getRoutes(db: Executor, projectId: number): Promise<Record<string, string>> {
  const rows = await db
    .selectFrom('routes')
    .innerJoin('templates', 'templates.id', 'routes.template_id')
    .select(['routes.routing_key', 'templates.name'])
    .where('routes.project_id', '=', projectId)
    .orderBy('routes.routing_key')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.routing_key, r.name]));
}

export async function replaceRoutes(
  db: Executor,
  projectId: number,
  routes: { routing_key: string; template_id: number }[],
): Promise<void> {
  await db.deleteFrom('routes').where('project_id', '=', projectId).execute();
  if (routes.length)
    await db
      .insertInto('routes')
      .values(routes.map((r) => ({ project_id: projectId, ...r })))
      .execute();
}

/** Routes a free key (the caller has checked it is free, under the project's config lock). */
export async function addRoute(db: Executor, projectId: number, routingKey: string, templateId: number): Promise<void> {
  await db
    .insertInto('routes')
    .values({ project_id: projectId, routing_key: routingKey, template_id: templateId })
    .execute();
}

/** The template a routing key leads to in this project, if any. */
export async function routedTemplate(
  db: Executor,
  projectId: number,
  routingKey: string,
): Promise<TemplateRow | undefined> {
  const row = await db
    .selectFrom('routes')
    .innerJoin('templates', 'templates.id', 'routes.template_id')
    .selectAll('templates')
    .where('routes.project_id', '=', projectId)
    .where('routes.routing_key', '=', routingKey)
    .executeTakeFirst();
  return row && templateFromRow(row);
}
