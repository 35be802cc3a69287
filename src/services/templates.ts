// Templates with a contract (SPEC §16): every save is analysed (variables), checked for its impact on
// the project's recent requests, and kept as an immutable version; publishing a version (the save
// itself, unless `draft`, or an older one: a rollback) copies it into the templates row, which is what
// delivery, routing and everything else read.
import { membersInHref } from '../domain/safeLinks.js';
import { diffLines } from 'diff';
import type { Project, TemplateRow, TemplateVersionRow } from '../db/schema.js';
import { lockProjectConfig } from '../db/index.js';
import { buildContext, type EmailSource } from '../delivery/render.js';
import { isBudgetExceeded, prepareInPool, renderInPool } from '../delivery/renderPool.js';
import { parseVariables, requiredMembers, type TemplateVariable } from '../domain/templateContract.js';
import { AppError, notFound, validationError } from '../errors.js';
import { listTopics } from '../repos/consent.js';
import { findLayout } from '../repos/layouts.js';
import { addRoute, findTemplateByName, getRoutes, publishContent, upsertTemplate } from '../repos/templates.js';
import { galleryRouting } from '../domain/galleryRouting.js';
import { galleryRoutingKeyOf } from './demoTemplates.js';
import { findVersion, insertVersion, listVersions, type VersionContent } from '../repos/templateVersions.js';
import { iso, type Executor } from '../repos/types.js';
import type { TemplateBody } from '../schemas/admin.js';
import { requireProject } from './admin.js';
import { audited, type AuditActor, type Note } from './audit.js';
import type { Deps } from './context.js';
import { assertNoImpact, impactOfChange, loadNeedsConfig, type ImpactEntry } from './impact.js';
import { sampleRequest, templateProblemError, tooHeavyError } from './preview.js';

/** What a save or an analysis reads from the editor. */
export interface TemplateSourceInput {
  subject: string;
  html: string;
  text: string;
  format?: 'html' | 'mjml';
  layout?: string | null;
}

export interface Prepared {
  compiled_html: string | null;
  variables: TemplateVariable[];
}

/**
 * Parses, compiles (MJML) and analyses template source with the layout it will be rendered in: the
 * named one, else the project's default. Throws the 422 that names the part and line at fault. The work
 * runs in the render pool (SPEC §20); a save (`trial`) also renders the template once with sample values
 * there, so a template that needs more than RENDER_BUDGET_MS is refused now (422 template_too_heavy)
 * rather than failing every e-mail later.
 */
export async function prepareSource(
  db: Executor,
  project: Project,
  input: TemplateSourceInput,
  opts: { trial?: boolean } = {},
): Promise<Prepared> {
  const layoutName = input.layout ?? project.default_layout;
  const layout = layoutName ? await findLayout(db, project.id, layoutName) : undefined;
  const frame = layout ? { html: layout.html, text: layout.text } : null;
  const source = { subject: input.subject, html: input.html, text: input.text, format: input.format };
  const out = await inPool(() => prepareInPool(project.id, { source, layout: frame }));
  if (!out.ok) {
    if (out.mjml)
      throw templateProblemError({ ...out.problem, message: `MJML: ${out.problem.message}` }, 'template_mjml');
    throw templateProblemError(out.problem);
  }
  if (input.layout && !layout) {
    throw validationError(
      { reason: 'layout_unknown', params: { layout: input.layout, field: 'layout' } },
      {
        invalid_fields: { layout: 'no such layout in this project' },
      },
    );
  }
  if (opts.trial) await trialRender(project, { ...source, compiled_html: out.compiled_html }, frame, out.variables);
  return { compiled_html: out.compiled_html, variables: out.variables };
}

/** A pool task's budget error as the 422 of a save or preview; any other error as it is. */
async function inPool<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isBudgetExceeded(err)) throw tooHeavyError(err.budgetMs);
    throw err;
  }
}

/**
 * One render with sample values, for its CPU only: an error other than the budget is not the save's
 * business (the data of real requests decides; the worker reports it per e-mail, as before).
 */
async function trialRender(
  project: Project,
  template: EmailSource,
  layout: { html: string; text: string } | null,
  variables: TemplateVariable[],
): Promise<void> {
  const context = buildContext({ request: sampleRequest(undefined, project.locale, variables), project });
  const settings = { locale: project.locale, timezone: project.timezone };
  await inPool(() => renderInPool(project.id, { template, layout, context, settings }, 'save')).catch(
    (err: unknown) => {
      if (err instanceof AppError) throw err;
    },
  );
}

export type SaveTemplateInput = TemplateBody;

function contentOf(input: SaveTemplateInput, prepared: Prepared, existing?: TemplateRow): VersionContent {
  return {
    subject: input.subject,
    html: input.html,
    compiled_html: prepared.compiled_html,
    text: input.text,
    layout: input.layout !== undefined ? input.layout : (existing?.layout ?? null),
    format: input.format ?? existing?.format ?? 'html',
    topic: input.topic !== undefined ? input.topic : (existing?.topic ?? null),
    tracking: input.tracking ?? existing?.tracking ?? true,
    variables: JSON.stringify(prepared.variables),
  };
}

/** The impact on recent requests if `name` came to require `required` (routed or in a cart chain). */
export async function templateImpact(
  db: Executor,
  project: Project,
  name: string,
  required: string[],
  now: number,
): Promise<ImpactEntry[]> {
  const before = await loadNeedsConfig(db, project.id);
  const after = { ...before, required: new Map(before.required).set(name, required) };
  return impactOfChange(db, project, before, after, now);
}

/**
 * A template created (or re-saved) and published as a new version inside the caller's transaction, for
 * loaders that run within an audited change of their own (the demo).
 */
export async function publishTemplateIn(
  trx: Executor,
  project: Project,
  input: { name: string; subject: string; html: string; text: string; tracking?: boolean },
  actor: string,
  now: number,
): Promise<{ id: number; version: number }> {
  const prepared = await prepareSource(trx, project, input);
  const { id } = await upsertTemplate(trx, project.id, input, now);
  const content = contentOf({ ...input, site_key: project.site_key }, prepared);
  const version = await insertVersion(trx, { id, project_id: project.id }, content, actor, now);
  await publishContent(trx, id, version, content, now);
  return { id, version };
}

/**
 * A template just created under a gallery template's name is that template taken (SPEC §22): its event
 * or cart step is routed to it when free (and the route makes no recent request fail); when another
 * template has it, the answer says so and the routing stays as it was. Not a gallery name: undefined.
 */
async function routeTakenGalleryTemplate(
  trx: Executor,
  project: Project,
  templateId: number,
  name: string,
  now: number,
  note: Note,
) {
  const routingKey = galleryRoutingKeyOf(name);
  if (routingKey === undefined) return undefined;
  const routes = await getRoutes(trx, project.id);
  const decision = galleryRouting(routes, routingKey, name);
  if (decision.status !== 'routed') return { routing_key: routingKey, ...decision };
  const needs = await loadNeedsConfig(trx, project.id);
  const next = { ...routes, [routingKey]: name };
  if ((await impactOfChange(trx, project, needs, { ...needs, routes: next }, now)).length)
    return { routing_key: routingKey, status: 'not_routed' as const };
  await addRoute(trx, project.id, routingKey, templateId);
  // Audited as the routing change it is, beside the template's creation.
  note({ action: 'routing.replace', site_key: project.site_key, before: routes, after: next });
  return { routing_key: routingKey, status: 'routed' as const };
}

/** POST /api/templates: a new version of the template, published unless `draft`. */
export async function saveTemplate(deps: Deps, who: AuditActor, input: SaveTemplateInput) {
  const db = deps.db.db;
  const project = await requireProject(db, input.site_key);
  const existingBefore = await findTemplateByName(db, project.id, input.name);
  const format = input.format ?? existingBefore?.format ?? 'html';
  const layout = input.layout !== undefined ? input.layout : (existingBefore?.layout ?? null);
  const prepared = await prepareSource(db, project, { ...input, format, layout }, { trial: true });
  // SPEC §18: a template's topic is one of its project's topics (null: the default of how it is used).
  if (input.topic && !(await listTopics(db, project.id)).some((t) => t.key === input.topic))
    throw validationError(
      { reason: 'topic_unknown', params: { topic: input.topic, field: 'topic' } },
      {
        invalid_fields: { topic: 'no such topic in this project' },
      },
    );
  if (input.draft && !existingBefore) {
    throw validationError(
      { reason: 'draft_needs_template' },
      {
        invalid_fields: { draft: 'the template does not exist yet: save it without draft first' },
      },
    );
  }
  const now = deps.clock.now();
  const impact = input.draft
    ? []
    : await templateImpact(db, project, input.name, requiredMembers(prepared.variables), now);
  assertNoImpact(impact, input.confirm);

  return audited(deps, who, async (trx, note) => {
    await lockProjectConfig(trx, deps.db.dialect, project.id);
    const before = await findTemplateByName(trx, project.id, input.name);
    const content = contentOf({ ...input, format, layout }, prepared, before);
    let id: number;
    let created = false;
    if (before) {
      id = before.id;
    } else {
      ({ id, created } = await upsertTemplate(trx, project.id, input, now));
    }
    const version = await insertVersion(trx, { id, project_id: project.id }, content, who.actor, now);
    if (!input.draft) await publishContent(trx, id, version, content, now);
    const routing = created ? await routeTakenGalleryTemplate(trx, project, id, input.name, now, note) : undefined;
    note({
      action: created ? 'template.create' : input.draft ? 'template.draft' : 'template.update',
      site_key: project.site_key,
      target: `template:${id}`,
      before: before && { name: before.name, version: before.version, subject: before.subject },
      after: { name: input.name, version, published: !input.draft, subject: input.subject },
    });
    return {
      ok: true as const,
      site_key: project.site_key,
      template_id: id,
      name: input.name,
      created,
      version,
      published: !input.draft,
      variables: prepared.variables,
      impact,
      ...(routing ? { routing } : {}),
      warnings: membersInHref(input.html).map((member) => ({
        code: 'href_member_not_url' as const,
        member,
        message: `${member} is printed as a link (href): it must be an http(s), mailto or tel URL, or the link is dropped from the e-mail`,
      })),
    };
  });
}

async function requireTemplate(db: Executor, siteKey: string, name: string) {
  const project = await requireProject(db, siteKey);
  const template = await findTemplateByName(db, project.id, name);
  if (!template) throw notFound(`No template ${name} in project ${siteKey}`);
  return { project, template };
}

async function requireVersion(db: Executor, template: TemplateRow, n: number): Promise<TemplateVersionRow> {
  const v = await findVersion(db, template.id, n);
  if (!v) throw notFound(`Template ${template.name} has no version ${n}`);
  return v;
}

/** A template as the admin API shows it (list and single). */
export function templateView(t: TemplateRow, siteKey: string) {
  const variables = parseVariables(t.variables);
  return {
    id: t.id,
    site_key: siteKey,
    name: t.name,
    subject: t.subject,
    html: t.html,
    text: t.text,
    format: t.format,
    layout: t.layout,
    topic: t.topic,
    tracking: t.tracking,
    version: t.version === null ? null : Number(t.version),
    variables: variables ?? [],
    unchecked: variables === null,
    created_at: iso(t.created_at)!,
    updated_at: iso(t.updated_at)!,
  };
}

export async function getTemplate(deps: Deps, siteKey: string, name: string) {
  const { project, template } = await requireTemplate(deps.db.db, siteKey, name);
  return { ok: true as const, template: templateView(template, project.site_key) };
}

export async function versions(deps: Deps, siteKey: string, name: string) {
  const { template } = await requireTemplate(deps.db.db, siteKey, name);
  const items = (await listVersions(deps.db.db, template.id)).map((v) => ({
    version: Number(v.version),
    created_at: iso(v.created_at)!,
    actor: v.actor,
    published: Number(v.version) === Number(template.version),
  }));
  return { ok: true as const, items };
}

function versionView(v: TemplateVersionRow, template: TemplateRow) {
  const variables = parseVariables(v.variables);
  return {
    version: Number(v.version),
    name: template.name,
    subject: v.subject,
    html: v.html,
    text: v.text,
    layout: v.layout,
    format: v.format,
    topic: v.topic,
    tracking: v.tracking,
    variables: variables ?? [],
    unchecked: variables === null,
    actor: v.actor,
    created_at: iso(v.created_at)!,
    published: Number(v.version) === Number(template.version),
  };
}

export async function version(deps: Deps, siteKey: string, name: string, n: number) {
  const { template } = await requireTemplate(deps.db.db, siteKey, name);
  return { ok: true as const, ...versionView(await requireVersion(deps.db.db, template, n), template) };
}

/** A version of a template, by number, for previews and test sends (published when none is given). */
export async function versionFor(db: Executor, template: TemplateRow, n: number | undefined) {
  if (n === undefined || n === Number(template.version)) return template;
  return requireVersion(db, template, n);
}

/** POST …/versions/{n}/publish: that version becomes the live one; an older one is a rollback. */
export async function publishVersion(
  deps: Deps,
  who: AuditActor,
  siteKey: string,
  name: string,
  n: number,
  confirm?: boolean,
) {
  const db = deps.db.db;
  const { project, template } = await requireTemplate(db, siteKey, name);
  const v = await requireVersion(db, template, n);
  if (v.layout && !(await findLayout(db, project.id, v.layout)))
    throw new AppError(409, 'conflict', { reason: 'version_layout_gone', params: { version: n, layout: v.layout } });
  const now = deps.clock.now();
  const impact = await templateImpact(db, project, name, requiredMembers(parseVariables(v.variables)), now);
  assertNoImpact(impact, confirm);
  await audited(deps, who, async (trx, note) => {
    await lockProjectConfig(trx, deps.db.dialect, project.id);
    const { id: _id, template_id: _t, project_id: _p, version: _v, actor: _a, created_at: _c, ...content } = v;
    // An unchecked version (saved before the contract) stays unchecked when published again.
    await publishContent(trx, template.id, n, content, now);
    note({
      action: 'template.publish',
      site_key: project.site_key,
      target: `template:${template.id}`,
      before: { version: template.version },
      after: { version: n },
    });
  });
  return { ok: true as const, name, version: n, published: true as const, impact };
}

/** Line changes of each part from the published version to version n (the `diff` package). */
export async function versionDiff(deps: Deps, siteKey: string, name: string, n: number) {
  const { template } = await requireTemplate(deps.db.db, siteKey, name);
  const v = await requireVersion(deps.db.db, template, n);
  const part = (a: string, b: string) =>
    diffLines(a, b).map((c) => ({
      op: c.added ? ('added' as const) : c.removed ? ('removed' as const) : ('same' as const),
      value: c.value,
    }));
  return {
    ok: true as const,
    version: n,
    against: template.version === null ? null : Number(template.version),
    subject: part(template.subject, v.subject),
    html: part(template.html, v.html),
    text: part(template.text, v.text),
  };
}
