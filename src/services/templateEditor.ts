// What the template editor asks while the author types (SPEC §16): the variables of the unsaved source,
// the events routed to the template with what each would then require, and the impact answer the save
// would give. Nothing is stored.
import { mergeRequired, requiredMembers } from '../domain/templateContract.js';
import { baseRequired, needsOf, requiredOfNeed } from '../domain/templateNeeds.js';
import { AppError } from '../errors.js';
import type { AnalyzeBody } from '../schemas/templates.js';
import { requireProject } from './admin.js';
import type { Deps } from './context.js';
import { impactOfChange, loadNeedsConfig } from './impact.js';
import { prepareSource } from './templates.js';

export async function analyzeDraft(deps: Deps, input: AnalyzeBody) {
  const db = deps.db.db;
  const project = await requireProject(db, input.site_key);
  let prepared;
  try {
    prepared = await prepareSource(db, project, input);
  } catch (err) {
    const problem =
      err instanceof AppError
        ? (err.extra.template_problem as { part: string; line: number; message: string } | undefined)
        : undefined;
    if (!problem && err instanceof AppError && err.status === 422) {
      const invalid = (err.extra.invalid_fields ?? {}) as Record<string, string>;
      const [part, message] = Object.entries(invalid)[0] ?? ['html', err.message];
      return { ok: true as const, variables: [], problem: { part, line: 1, message }, routed: [], impact: [] };
    }
    if (!problem) throw err;
    return { ok: true as const, variables: [], problem, routed: [], impact: [] };
  }
  const required = requiredMembers(prepared.variables);
  if (!input.name) return { ok: true as const, variables: prepared.variables, problem: null, routed: [], impact: [] };
  const before = await loadNeedsConfig(db, project.id);
  const after = { ...before, required: new Map(before.required).set(input.name, required) };
  const beforeNeeds = needsOf(before);
  const routed = [...needsOf(after).entries()]
    .filter(([, n]) => input.name! in n.templates)
    .map(([k, n]) => {
      const had = new Set(requiredOfNeed(beforeNeeds.get(k)));
      return {
        event_type: n.event_type,
        endpoint: n.endpoint,
        required_fields: mergeRequired(baseRequired(n.endpoint, n.event_type), requiredOfNeed(n)),
        newly_required: required.filter((m) => !had.has(m)),
      };
    });
  const impact = await impactOfChange(db, project, before, after, deps.clock.now());
  return { ok: true as const, variables: prepared.variables, problem: null, routed, impact };
}
