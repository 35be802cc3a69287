// Layouts (SPEC §16): a project's frame around template bodies, printing `{{ content }}` exactly once
// in its HTML and in its text. Deleting one that a published template or the project's default uses is
// refused (409): the e-mails of those templates would lose their frame.
import type { LayoutRow, Project } from '../db/schema.js';
import { checkTemplate } from '../delivery/render.js';
import { contentUses } from '../delivery/variables.js';
import { AppError, notFound, validationError } from '../errors.js';
import { deleteLayout, findLayout, listLayouts, templatesUsingLayout, upsertLayout } from '../repos/layouts.js';
import { iso, type Executor } from '../repos/types.js';
import type { LayoutBody } from '../schemas/templates.js';
import { requireProject } from './admin.js';
import { audited, type AuditActor } from './audit.js';
import type { Deps } from './context.js';
import { templateProblemError } from './preview.js';

export async function requireLayout(db: Executor, projectId: number, name: string): Promise<LayoutRow> {
  const l = await findLayout(db, projectId, name);
  if (!l) {
    throw validationError(`No layout named ${name} in this project`, {
      invalid_fields: { default_layout: 'no such layout in this project' },
    });
  }
  return l;
}

async function layoutView(db: Executor, project: Project, l: LayoutRow) {
  return {
    name: l.name,
    html: l.html,
    text: l.text,
    used_by: await templatesUsingLayout(db, project, l.name),
    created_at: iso(l.created_at)!,
    updated_at: iso(l.updated_at)!,
  };
}

export async function layouts(deps: Deps, siteKey: string) {
  const db = deps.db.db;
  const project = await requireProject(db, siteKey);
  const items = [];
  for (const l of await listLayouts(db, project.id)) items.push(await layoutView(db, project, l));
  return { ok: true as const, items };
}

export async function layout(deps: Deps, siteKey: string, name: string) {
  const db = deps.db.db;
  const project = await requireProject(db, siteKey);
  const l = await findLayout(db, project.id, name);
  if (!l) throw notFound(`No layout ${name} in project ${siteKey}`);
  return { ok: true as const, created: false, layout: await layoutView(db, project, l) };
}

export async function saveLayout(deps: Deps, who: AuditActor, siteKey: string, name: string, body: LayoutBody) {
  const problem = checkTemplate({ subject: '', html: body.html, text: body.text });
  if (problem) throw templateProblemError(problem);
  const uses = contentUses(body);
  const invalid: Record<string, string> = {};
  for (const part of ['html', 'text'] as const)
    if (uses[part] !== 1) invalid[part] = `must print {{ content }} exactly once (found ${uses[part]})`;
  if (Object.keys(invalid).length)
    throw validationError('A layout prints {{ content }} exactly once in html and in text', {
      invalid_fields: invalid,
    });
  return audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    const before = await findLayout(trx, project.id, name);
    const created = await upsertLayout(trx, project.id, { name, ...body }, deps.clock.now());
    const after = (await findLayout(trx, project.id, name))!;
    note({
      action: 'layout.save',
      site_key: project.site_key,
      target: `layout:${name}`,
      before: before && { html: before.html, text: before.text },
      after: { html: after.html, text: after.text },
    });
    return { ok: true as const, created, layout: await layoutView(trx, project, after) };
  });
}

export async function removeLayout(deps: Deps, who: AuditActor, siteKey: string, name: string) {
  return audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    const l = await findLayout(trx, project.id, name);
    if (!l) throw notFound(`No layout ${name} in project ${siteKey}`);
    const users = await templatesUsingLayout(trx, project, name);
    if (users.length || project.default_layout === name) {
      throw new AppError(409, 'conflict', `Layout ${name} is in use: ${users.join(', ') || 'the project default'}`, {
        used_by: users,
        project_default: project.default_layout === name,
      });
    }
    await deleteLayout(trx, project.id, name);
    note({ action: 'layout.delete', site_key: project.site_key, target: `layout:${name}`, before: { html: l.html } });
    return { ok: true as const, name, deleted: true as const };
  });
}
