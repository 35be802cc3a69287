// Gateway body validation in the order SPEC §1 prescribes. Schema errors (types, formats, sizes) and
// the catalog's required members of `fields` are merged so one 422 names every problem at once.
import type { Static, TSchema } from 'typebox';
import type { ValidateFunction } from 'ajv';
import { bodyAjv, splitErrors } from '../schemas/ajv.js';
import { withFieldLimits, type FieldLimits } from '../schemas/common.js';
import { AppError, validationError } from '../errors.js';
import { inputProblems } from './inputRules.js';

export type Body = Record<string, unknown>;

/** A JSON object (not an array, not null). */
export function isObject(v: unknown): v is Body {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** 400 invalid_json for anything that is not a JSON object (arrays, strings, null). */
export function requireObject(body: unknown): Body {
  if (!isObject(body)) throw new AppError(400, 'invalid_json', 'The request body must be a JSON object');
  return body;
}

// One compiled validator per schema and configured limits (an installation has one set of limits).
const compiled = new WeakMap<TSchema, Map<string, ValidateFunction>>();
function validator(schema: TSchema, limits: FieldLimits): ValidateFunction {
  let bySchema = compiled.get(schema);
  if (!bySchema) compiled.set(schema, (bySchema = new Map<string, ValidateFunction>()));
  const key = `${limits.maxMembers}/${limits.maxString}`;
  let v = bySchema.get(key);
  if (!v) {
    v = bodyAjv.compile(withFieldLimits(schema, limits));
    bySchema.set(key, v);
  }
  return v;
}

/** A value that is there but says nothing counts as absent: null, or a string of only spaces. */
export function isAbsent(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
}

function longStrings(value: unknown, path: string, max: number, out: Record<string, string>, depth = 0): void {
  if (depth > 8) return;
  if (typeof value === 'string') {
    if (value.length > max) out[path] = `must be at most ${max} characters`;
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => longStrings(v, `${path}.${i}`, max, out, depth + 1));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) longStrings(v, `${path}.${k}`, max, out, depth + 1);
  }
}

/** How a gateway body is checked and how its 422 names the request. */
export interface BodyCheck {
  /** Required names: top level bare, members of fields prefixed `fields.` (absent or blank is missing). */
  required: string[];
  /** The event type the 422 reports (null when the body does not tell). */
  eventType: string | null;
  /** What failed, for the message: "Validation failed for <what>: …". */
  what: string;
  limits: FieldLimits;
}

/** What is wrong with a body: `missing_fields` and `invalid_fields` of the 422. */
export interface Problems {
  missing: string[];
  invalid: Record<string, string>;
}

/**
 * Checks a gateway body against its schema, the required names and the limits of `fields`, and throws
 * one 422 naming every problem at once; afterwards the body has the schema's type.
 */
export function assertBody<S extends TSchema>(
  schema: S,
  body: Body,
  check: BodyCheck,
): asserts body is Body & Static<S> {
  assertNoProblems<Static<S>>(body, bodyProblems(schema, body, check), check);
}

/**
 * For a body that tolerates some problems (a purchase): the caller passes the problems that refuse it,
 * and names as T the part of the schema's type those problems cover, which the body has afterwards.
 */
export function assertNoProblems<T>(
  body: Body,
  p: Problems,
  report: Omit<BodyCheck, 'limits'>,
): asserts body is Body & T {
  if (p.missing.length === 0 && Object.keys(p.invalid).length === 0) return;
  const parts: string[] = [];
  if (p.missing.length) parts.push(`missing ${p.missing.join(', ')}`);
  const bad = Object.keys(p.invalid);
  if (bad.length) parts.push(`invalid ${bad.join(', ')}`);
  throw validationError(
    { reason: 'fields_failed', params: { what: report.what, problems: parts.join('; ') } },
    {
      event_type: report.eventType,
      missing_fields: p.missing,
      required_fields: report.required,
      invalid_fields: p.invalid,
    },
  );
}

/** Every problem of a body: schema violations, required names absent or blank, over-long `fields` strings. */
export function bodyProblems(schema: TSchema, body: Body, check: Pick<BodyCheck, 'required' | 'limits'>): Problems {
  const { required, limits } = check;
  // Addresses are compared after trimming (SPEC §4); a pasted trailing space is not a client error.
  if (typeof body.email === 'string') body.email = body.email.trim();
  const v = validator(schema, limits);
  v(body);
  const { missing, invalid } = splitErrors(v.errors);
  for (const name of required) {
    const value = name.startsWith('fields.')
      ? body.fields && typeof body.fields === 'object'
        ? (body.fields as Body)[name.slice(7)]
        : undefined
      : body[name];
    if (isAbsent(value) && !missing.includes(name)) {
      missing.push(name);
      delete invalid[name];
    } else if (name.startsWith('fields.') && !isAbsent(value) && typeof value !== 'string') {
      // Required members of fields are titles and names that templates print.
      invalid[name] = 'must be a string';
    }
  }
  longStrings(body.fields, 'fields', limits.maxString, invalid);
  // SPEC §10: no U+0000 or unpaired surrogate in any string or member name, every number finite.
  Object.assign(invalid, inputProblems(body));
  // Order the list as the required list reads, then anything else.
  missing.sort((a, b) => rank(required, a) - rank(required, b));
  return { missing, invalid };
}

function rank(required: string[], name: string): number {
  const i = required.indexOf(name);
  return i < 0 ? required.length : i;
}
