// Administration use cases shared by the admin API, the legacy endpoints, the CLI and the demo loader:
// projects, API keys, templates and the per-project configuration.
import { requireSenderDomains } from './senderDomains.js';
import { isCartType, isRoutingKey } from '../domain/catalog.js';
import { canonicalTimeZone } from '../domain/locale.js';

import { notFound, validationError } from '../errors.js';
import type { Project } from '../db/schema.js';
import { lockProjectConfig } from '../db/index.js';
import { findList, listLists } from '../repos/contacts.js';
import {
  getCartChains,
  getCourseCategories,
  getPaidLists,
  listSequences,
  replaceCourseCategories,
  replacePaidLists,
  type CourseCategory,
} from '../repos/projectConfig.js';
import {
  findProjectBySiteKey,
  listProjects,
  resumeMarketing,
  updateProject,
  upsertProject,
  type ProjectInput,
} from '../repos/projects.js';
import { findTemplateByName, getRoutes, listTemplates, replaceRoutes } from '../repos/templates.js';
import { fallbackName } from '../domain/templateContract.js';
import { layoutChange, requireLayout } from './layouts.js';
import { templateView } from './templates.js';
import { assertNoImpact, impactOfChange, loadNeedsConfig } from './impact.js';
import type { Executor, ProjectFilter } from '../repos/types.js';
import { iso } from '../repos/types.js';
import type { ProjectPatchBody, SiteBody } from '../schemas/admin.js';
import { mergeTracking, trackingView } from './trackingSettings.js';
import type { Deps } from './context.js';
import { audited, type AuditActor } from './audit.js';
import { releasePaused } from '../repos/outbox.js';

export async function requireProject(db: Executor, siteKey: string): Promise<Project> {
  const p = await findProjectBySiteKey(db, siteKey);
  if (!p) throw notFound(`Project ${siteKey}`);
  return p;
}

/**
 * A list's project filter: the site key asked for (its access already checked), else the projects the
 * caller may see (`scope`, SPEC §14; null: all).
 */
export async function projectFilter(
  db: Executor,
  siteKey: string | undefined,
  scope: readonly number[] | null = null,
): Promise<ProjectFilter | undefined> {
  return siteKey ? (await requireProject(db, siteKey)).id : (scope ?? undefined);
}

export async function projects(deps: Deps, scope: readonly number[] | null = null) {
  const all = await listProjects(deps.db.db);
  return { ok: true as const, items: all.filter((p) => scope === null || scope.includes(p.id)).map(projectView) };
}

/** Legacy POST /api/sites: creates the project of a site key or updates what the body names. */
export async function saveSite(deps: Deps, who: AuditActor, input: SiteBody, opts = { owner: true }) {
  const { project, created } = await saveProject(deps, who, input, opts);
  return {
    ok: true as const,
    site_key: project.site_key,
    project_id: project.id,
    created,
    timezone: project.timezone,
    locale: project.locale,
  };
}

export async function templates(deps: Deps, siteKey: string) {
  const p = await requireProject(deps.db.db, siteKey);
  const items = (await listTemplates(deps.db.db, p.id)).map((t) => templateView(t, p.site_key));
  return { ok: true as const, items };
}

export async function lists(deps: Deps, siteKey: string) {
  const p = await requireProject(deps.db.db, siteKey);
  const items = (await listLists(deps.db.db, p.id)).map((l) => ({
    list_id: l.id,
    name: l.name,
    members: l.members,
    created_at: iso(l.created_at)!,
  }));
  return { ok: true as const, items };
}

export async function sequences(deps: Deps, siteKey: string) {
  const db = deps.db.db;
  const p = await requireProject(db, siteKey);
  const items = (await listSequences(db, p.id)).map((s) => ({ sequence_id: s.id, name: s.name, steps: s.steps }));
  return { ok: true as const, items, cart_chains: await getCartChains(db, p.id) };
}

export { apiKeys, changeApiKey, createApiKey } from './apiKeys.js';

export async function routing(deps: Deps, siteKey: string) {
  const p = await requireProject(deps.db.db, siteKey);
  return { ok: true as const, site_key: p.site_key, routes: await getRoutes(deps.db.db, p.id) };
}

/** Replaces a project's routing; one unknown key or template refuses the whole change. */
export async function setRouting(
  deps: Deps,
  who: AuditActor,
  siteKey: string,
  routes: Record<string, string>,
  confirm?: boolean,
) {
  await audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    await lockProjectConfig(trx, deps.db.dialect, project.id);
    const before = await getRoutes(trx, project.id);
    const invalid: Record<string, string> = {};
    const rows: { routing_key: string; template_id: number }[] = [];
    for (const [key, name] of Object.entries(routes)) {
      if (!isRoutingKey(key)) {
        invalid[`routes.${key}`] =
          'unknown routing key: use a catalog or extra event type, or <cart_type>_abandoned_cart_<1h|1d|3d>';
        continue;
      }
      const t = await findTemplateByName(trx, project.id, name);
      if (!t) invalid[`routes.${key}`] = `no template named ${name} in this project`;
      else rows.push({ routing_key: key, template_id: t.id });
    }
    if (Object.keys(invalid).length) throw validationError({ reason: 'routing_invalid' }, { invalid_fields: invalid });
    // SPEC §16: a route that makes members newly required is refused while recent requests lacked them.
    const needs = await loadNeedsConfig(trx, project.id);
    const impact = await impactOfChange(trx, project, needs, { ...needs, routes }, deps.clock.now());
    assertNoImpact(impact, confirm);
    await replaceRoutes(trx, project.id, rows);
    const after = await getRoutes(trx, project.id);
    note({ action: 'routing.replace', site_key: project.site_key, before, after });
  });
  return routing(deps, siteKey);
}

async function requireProjectLists(
  db: Executor,
  project: Project,
  listIds: { path: string; id: number }[],
): Promise<void> {
  const invalid: Record<string, string> = {};
  for (const { path, id } of listIds) {
    const list = await findList(db, id);
    if (!list || list.project_id !== project.id)
      invalid[path] = `address book ${id} does not exist in project ${project.site_key}`;
  }
  if (Object.keys(invalid).length) throw validationError({ reason: 'lists_unknown' }, { invalid_fields: invalid });
}

export async function courseCategories(deps: Deps, siteKey: string) {
  const p = await requireProject(deps.db.db, siteKey);
  return { ok: true as const, site_key: p.site_key, categories: await getCourseCategories(deps.db.db, p.id) };
}

export async function setCourseCategories(deps: Deps, who: AuditActor, siteKey: string, categories: CourseCategory[]) {
  await audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    await lockProjectConfig(trx, deps.db.dialect, project.id);
    const before = await getCourseCategories(trx, project.id);
    const seen = new Set<string>();
    for (const c of categories) {
      if (seen.has(c.id))
        throw validationError(
          { reason: 'category_duplicate', params: { id: c.id } },
          {
            invalid_fields: { 'categories.id': `duplicate ${c.id}` },
          },
        );
      seen.add(c.id);
    }
    await requireProjectLists(
      trx,
      project,
      categories.map((c, i) => ({ path: `categories.${i}.list_id`, id: c.list_id })),
    );
    await replaceCourseCategories(
      trx,
      project.id,
      categories.map((c) => ({ ...c, title: c.title ?? '' })),
    );
    const after = await getCourseCategories(trx, project.id);
    note({ action: 'course_categories.replace', site_key: project.site_key, before, after });
  });
  return courseCategories(deps, siteKey);
}

export async function paidLists(deps: Deps, siteKey: string) {
  const p = await requireProject(deps.db.db, siteKey);
  return { ok: true as const, site_key: p.site_key, lists: await getPaidLists(deps.db.db, p.id) };
}

export async function setPaidLists(deps: Deps, who: AuditActor, siteKey: string, lists: Record<string, number>) {
  await audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    await lockProjectConfig(trx, deps.db.dialect, project.id);
    const before = await getPaidLists(trx, project.id);
    const bad = Object.keys(lists).filter((c) => !isCartType(c));
    if (bad.length)
      throw validationError(
        { reason: 'cart_types_unknown' },
        {
          invalid_fields: Object.fromEntries(bad.map((b) => [`lists.${b}`, 'unknown cart type'])),
        },
      );
    await requireProjectLists(
      trx,
      project,
      Object.entries(lists).map(([c, id]) => ({ path: `lists.${c}`, id })),
    );
    await replacePaidLists(trx, project.id, lists);
    const after = await getPaidLists(trx, project.id);
    note({ action: 'paid_lists.replace', site_key: project.site_key, before, after });
  });
  return paidLists(deps, siteKey);
}

/** The canonical time zone name, or a 422 naming the member. */
function checkTimeZone(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const canonical = canonicalTimeZone(name);
  if (!canonical)
    throw validationError(
      { reason: 'timezone_unknown', params: { timezone: name, field: 'timezone' } },
      {
        invalid_fields: { timezone: 'not an IANA time zone name known to this service' },
      },
    );
  return canonical;
}

/** POST /api/sites: create, or update what the body names (timezone and locale stay when absent). */
export async function saveProject(deps: Deps, who: AuditActor, input: ProjectInput, opts = { owner: true }) {
  const timezone = checkTimeZone(input.timezone);
  return audited(deps, who, async (trx, note) => {
    const before = await findProjectBySiteKey(trx, input.site_key);
    const out = await upsertProject(trx, { ...input, ...(timezone ? { timezone } : {}) }, deps.clock.now());
    note({
      action: out.created ? 'project.create' : 'project.update',
      site_key: out.project.site_key,
      before: before && projectView(before),
      after: projectView(out.project),
    });
    // SPEC §21: as PATCH does; checked after the upsert (a new project has no id before), rolled back on 422.
    await requireSenderDomains(trx, { now: deps.clock.now(), who, owner: opts.owner, note }, out.project, {
      from_email: input.from_email,
      reply_to: input.reply_to,
    });
    return out;
  });
}

/** PATCH /api/admin/projects/{site_key}: the members given change, the others stay. */
export async function changeProject(
  deps: Deps,
  who: AuditActor,
  siteKey: string,
  changes: ProjectPatchBody,
  opts: { owner: boolean } = { owner: true },
) {
  const timezone = checkTimeZone(changes.timezone);
  const { confirm, tracking: switches, utm, ...fields } = changes;
  const project = await audited(deps, who, async (trx, note) => {
    const before = await requireProject(trx, siteKey);
    // SPEC §21: a sender only on a domain verified or approved for the project (an owner's change approves).
    await requireSenderDomains(trx, { now: deps.clock.now(), who, owner: opts.owner, note }, before, {
      from_email: fields.from_email,
      reply_to: fields.reply_to,
    });
    // SPEC §16: templates that name no layout are re-analysed in the new default one.
    if (fields.default_layout !== undefined && fields.default_layout !== before.default_layout) {
      const layout = fields.default_layout ? await requireLayout(trx, before.id, fields.default_layout) : null;
      const change = await layoutChange(trx, before, (t) => t.layout === null, layout, confirm, deps.clock.now());
      await change.apply(trx);
    }
    const tracking = mergeTracking(before.tracking, switches, utm);
    const after = await updateProject(
      trx,
      before,
      {
        ...fields,
        timezone,
        tracking,
      },
      deps.clock.now(),
    );
    note({ action: 'project.update', site_key: siteKey, before: projectView(before), after: projectView(after) });
    return after;
  });
  return { ok: true as const, project: projectView(project) };
}

/** An administrator resumes the campaigns and cart chains a complaint rate paused; held e-mails go now. */
export async function resumeProjectMarketing(deps: Deps, who: AuditActor, siteKey: string) {
  const now = deps.clock.now();
  const project = await audited(deps, who, async (trx, note) => {
    const before = await requireProject(trx, siteKey);
    const released = await releasePaused(trx, before.id, now);
    const after = (await resumeMarketing(trx, before.id, now))!;
    note({
      action: 'project.marketing_resume',
      site_key: siteKey,
      before: projectView(before),
      after: { ...projectView(after), released_emails: released },
    });
    return after;
  });
  return { ok: true as const, project: projectView(project) };
}

export function projectView(p: Project) {
  return {
    id: p.id,
    site_key: p.site_key,
    name: p.name,
    from_email: p.from_email,
    timezone: p.timezone,
    locale: p.locale,
    brand_color: p.brand_color ?? null,
    created_at: iso(p.created_at)!,
    updated_at: iso(p.updated_at)!,
    marketing_paused_at: iso(p.marketing_paused_at),
    marketing_paused_reason: p.marketing_paused_reason,
    allow_private_webhooks: p.allow_private_webhooks,
    allow_private_relays: p.allow_private_relays,
    reply_to: p.reply_to,
    logo_url: p.logo_url ?? null,
    postal_address: p.postal_address ?? null,
    fallback_name: fallbackName(p),
    default_layout: p.default_layout,
    ...trackingView(p.tracking),
  };
}
