// Layouts (SPEC §16): a project's frame around template bodies, printing `{{ content }}` exactly once
// in its HTML and in its text. Deleting one that a published template or the project's default uses is
// refused (409): the e-mails of those templates would lose their frame.
import type { LayoutRow, Project, TemplateRow } from '../db/schema.js';
import { checkTemplate, type LayoutSource } from '../delivery/render.js';
import { analyzeTemplate, contentUses } from '../delivery/variables.js';
import { requiredMembers } from '../domain/templateContract.js';
import { listTemplates } from '../repos/templates.js';
import { assertNoImpact, impactOfChange, loadNeedsConfig, type ImpactEntry } from './impact.js';
import { AppError, notFound, validationError } from '../errors.js';
import { deleteLayout, findLayout, listLayouts, templatesUsingLayout, upsertLayout } from '../repos/layouts.js';
import { iso, type Executor } from '../repos/types.js';
import type { LayoutBody } from '../schemas/templates.js';
import { requireProject } from './admin.js';
import { audited, type AuditActor } from './audit.js';
import type { Deps } from './context.js';
import { templateProblemError } from './preview.js';

/**
 * A layout's content counts in the variables of the templates rendered in it (SPEC §16), so changing a
 * layout, or which layout is the project's default, re-analyses those templates (their published
 * version; unchecked ones stay unchecked) and is checked for its impact like a template save. Returns
 * the writes to make once the caller has decided to go ahead.
 */
export async function layoutChange(
  db: Executor,
  project: Project,
  affects: (t: TemplateRow) => boolean,
  layout: LayoutSource | null,
  confirm: boolean | undefined,
  now: number,
): Promise<{ impact: ImpactEntry[]; apply: (trx: Executor) => Promise<void> }> {
  const changed = (await listTemplates(db, project.id))
    .filter((t) => t.variables !== null && affects(t))
    .map((t) => ({ t, variables: analyzeTemplate(t, layout) }));
  const before = await loadNeedsConfig(db, project.id);
  const required = new Map(before.required);
  for (const c of changed) required.set(c.t.name, requiredMembers(c.variables));
  const impact = await impactOfChange(db, project, before, { ...before, required }, now);
  assertNoImpact(impact, confirm);
  return {
    impact,
    apply: async (trx) => {
      for (const c of changed)
        await trx
          .updateTable('templates')
          .set({ variables: JSON.stringify(c.variables) })
          .where('id', '=', c.t.id)
          .execute();
    },
  };
}

export async function requireLayout(db: Executor, projectId: number, name: string): Promise<LayoutRow> {
  const l = await findLayout(db, projectId, name);
  if (!l) {
    throw validationError(
      { reason: 'layout_unknown', params: { layout: name, field: 'default_layout' } },
      {
        invalid_fields: { default_layout: 'no such layout in this project' },
      },
    );
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
  return { ok: true as const, created: false, layout: await layoutView(db, project, l), impact: [] };
}

export async function saveLayout(deps: Deps, who: AuditActor, siteKey: string, name: string, body: LayoutBody) {
  const problem = checkTemplate({ subject: '', html: body.html, text: body.text });
  if (problem) throw templateProblemError(problem);
  const uses = contentUses(body);
  const invalid: Record<string, string> = {};
  for (const part of ['html', 'text'] as const)
    if (uses[part] !== 1) invalid[part] = `must print {{ content }} exactly once (found ${uses[part]})`;
  if (Object.keys(invalid).length)
    throw validationError(
      { reason: 'layout_content_once' },
      {
        invalid_fields: invalid,
      },
    );
  const now = deps.clock.now();
  const current = await requireProject(deps.db.db, siteKey);
  const change = await layoutChange(
    deps.db.db,
    current,
    (t) => t.layout === name || (t.layout === null && current.default_layout === name),
    body,
    body.confirm,
    now,
  );
  return audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    const before = await findLayout(trx, project.id, name);
    const created = await upsertLayout(trx, project.id, { name, html: body.html, text: body.text }, now);
    await change.apply(trx);
    const after = (await findLayout(trx, project.id, name))!;
    note({
      action: 'layout.save',
      site_key: project.site_key,
      target: `layout:${name}`,
      before: before && { html: before.html, text: before.text },
      after: { html: after.html, text: after.text },
    });
    return { ok: true as const, created, layout: await layoutView(trx, project, after), impact: change.impact };
  });
}

export async function removeLayout(deps: Deps, who: AuditActor, siteKey: string, name: string) {
  return audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    const l = await findLayout(trx, project.id, name);
    if (!l) throw notFound(`No layout ${name} in project ${siteKey}`);
    const users = await templatesUsingLayout(trx, project, name);
    if (users.length || project.default_layout === name) {
      const what = users.join(', ') || 'the project default';
      throw new AppError(
        409,
        'conflict',
        { reason: 'layout_in_use', params: { layout: name, users: what } },
        {
          used_by: users,
          project_default: project.default_layout === name,
        },
      );
    }
    await deleteLayout(trx, project.id, name);
    note({ action: 'layout.delete', site_key: project.site_key, target: `layout:${name}`, before: { html: l.html } });
    return { ok: true as const, name, deleted: true as const };
  });
}
