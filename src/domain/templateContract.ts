// What a template needs from a request, as SPEC §16 names it: request members (`name`, `order_id`,
// `fields.course_name`), required unless the gateway always supplies them. Plain functions over the
// variables found by delivery/variables.ts, used by the gateway (422 before the plan), the catalog, the
// impact check and the worker (a stored e-mail whose data no longer satisfies the published template).
import { isAbsent } from './validation.js';

/** How last_error begins for an e-mail failed for lack of data; emailReason reads it back. */
export const MISSING_FIELDS_NOTE = 'missing_fields: the template requires';

export interface TemplateVariable {
  name: string;
  required: boolean;
}

/** Members the gateway fills in itself: a template may always print them (SPEC §16). */
export const SUPPLIED_MEMBERS: ReadonlySet<string> = new Set([
  'email',
  'name',
  'site_name',
  'unsubscribe_url',
  'preferences_url',
  // The service's own keys of the context (delivery/render.ts buildContext).
  'event_type',
  'project_name',
  'project',
]);

/** Top-level members of the gateway requests; any other bare name reaches templates from `fields`. */
const TOP_LEVEL_MEMBERS: ReadonlySet<string> = new Set([
  'event_type',
  'email',
  'name',
  'order_id',
  'amount',
  'currency',
  'cart_type',
  'course_id',
]);

/**
 * The request member a variable path reads: `fields.x…` and a bare `x` that is no top-level member
 * are `fields.x` (the context copies members of fields to the top); top-level members are bare. Null for
 * a path that names no member (a computed root such as `[var]`).
 */
export function memberOf(segments: readonly unknown[]): string | null {
  const [root, second] = segments;
  if (typeof root !== 'string') return null;
  if (root === 'fields') return typeof second === 'string' ? `fields.${second}` : null;
  if (TOP_LEVEL_MEMBERS.has(root) || SUPPLIED_MEMBERS.has(root)) return root;
  return `fields.${root}`;
}

/** The stored JSON of a template's variables; null when it was saved before the contract (unchecked). */
export function parseVariables(json: string | null | undefined): TemplateVariable[] | null {
  if (json == null) return null;
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? (v as TemplateVariable[]) : null;
  } catch {
    return null;
  }
}

export function requiredMembers(vars: readonly TemplateVariable[] | null): string[] {
  return (vars ?? []).filter((v) => v.required).map((v) => v.name);
}

/**
 * The members of `required` a request body (or the template context stored from one) lacks. A member
 * of fields may also come top-level (`course_name` beside `fields`), as templates see it either way.
 * Blank (absent, null, empty or only spaces) is missing.
 */
export function missingMembers(required: readonly string[], body: Record<string, unknown>): string[] {
  const fields =
    body.fields && typeof body.fields === 'object' && !Array.isArray(body.fields)
      ? (body.fields as Record<string, unknown>)
      : {};
  return required.filter((m) => {
    if (!m.startsWith('fields.')) return isAbsent(body[m]);
    const k = m.slice(7);
    return isAbsent(fields[k]) && isAbsent(body[k]);
  });
}

/** Catalog and template needs together, in order, once each (the 422 body's required_fields). */
export function mergeRequired(...lists: readonly (readonly string[])[]): string[] {
  return [...new Set(lists.flat())];
}

/** The name `{{ name }}` prints when neither the request nor the contact has one (SPEC §16). */
export function fallbackName(project: { fallback_name?: string | null; locale?: string | null }): string {
  if (project.fallback_name && project.fallback_name.trim() !== '') return project.fallback_name;
  return project.locale === 'en' ? 'friend' : 'коллега';
}

/**
 * What the templates a request would send require of it, and which of those members it lacks. An
 * unchecked template (saved before the contract) requires nothing until its next save (SPEC §16).
 */
export function templateShortfall(
  templates: readonly { variables: string | null }[],
  body: Record<string, unknown>,
): { required: string[]; missing: string[] } {
  const required = mergeRequired(...templates.map((t) => requiredMembers(parseVariables(t.variables))));
  return { required, missing: missingMembers(required, body) };
}
