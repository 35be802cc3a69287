// Gateway body validation in the order SPEC §1 prescribes. Schema errors (types, formats, sizes) and
// the catalog's required members of `fields` are merged so one 422 names every problem at once.
import type { TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { bodyAjv, splitErrors } from '../schemas/ajv.js';
import { MAX_STRING } from '../schemas/common.js';
import { AppError, validationError } from '../errors.js';
import { inputProblems } from './inputRules.js';

export type Body = Record<string, unknown>;

/** 400 invalid_json for anything that is not a JSON object (arrays, strings, null). */
export function requireObject(body: unknown): Body {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError(400, 'invalid_json', 'The request body must be a JSON object');
  }
  return body as Body;
}

const compiled = new WeakMap<TSchema, ValidateFunction>();
function validator(schema: TSchema): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = bodyAjv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

/** A value that is there but says nothing counts as absent: null, or a string of only spaces. */
export function isAbsent(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
}

function longStrings(value: unknown, path: string, out: Record<string, string>, depth = 0): void {
  if (depth > 8) return;
  if (typeof value === 'string') {
    if (value.length > MAX_STRING) out[path] = `must be at most ${MAX_STRING} characters`;
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => longStrings(v, `${path}.${i}`, out, depth + 1));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) longStrings(v, `${path}.${k}`, out, depth + 1);
  }
}

export interface Problems {
  missing: string[];
  invalid: Record<string, string>;
}

/**
 * Collects every problem of a body: schema violations, plus required names (top level bare, members of
 * fields prefixed `fields.`) that are absent or blank.
 */
export function collectProblems(schema: TSchema, body: Body, required: string[]): Problems {
  // Addresses are compared after trimming (SPEC §4); a pasted trailing space is not a client error.
  if (typeof body.email === 'string') body.email = body.email.trim();
  const v = validator(schema);
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
  longStrings(body.fields, 'fields', invalid);
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

export function throwIfProblems(p: Problems, eventType: string | null, required: string[], what: string): void {
  if (p.missing.length === 0 && Object.keys(p.invalid).length === 0) return;
  const parts: string[] = [];
  if (p.missing.length) parts.push(`missing ${p.missing.join(', ')}`);
  const bad = Object.keys(p.invalid);
  if (bad.length) parts.push(`invalid ${bad.join(', ')}`);
  throw validationError(`Validation failed for ${what}: ${parts.join('; ')}`, {
    event_type: eventType,
    missing_fields: p.missing,
    required_fields: required,
    invalid_fields: p.invalid,
  });
}
