// One Ajv setup for request validation, used by Fastify's validator compiler and by the gateway's own
// ordered checks. Bodies are never coerced (a number where a string belongs is the client's bug and gets
// named in invalid_fields); query strings and path parameters are, since they are text on the wire.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { isValidAddress } from '../domain/email.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv, formats?: string[]) => Ajv;

function make(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
  addFormats(ajv, ['email', 'date-time', 'uri']);
  // RFC 6531 addresses (Unicode domain, non-ASCII local part): JSON Schema's own name for them.
  ajv.addFormat('idn-email', { type: 'string', validate: isValidAddress });
  return ajv;
}

export const bodyAjv = make(false);
export const paramAjv = make(true);

/** "/fields/course_name" -> "fields.course_name"; a missing property is appended to its parent. */
export function errorPath(e: ErrorObject): string {
  const base = e.instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
  if (e.keyword === 'required') {
    const prop = (e.params as { missingProperty: string }).missingProperty;
    return base ? `${base}.${prop}` : prop;
  }
  return base;
}

export function errorReason(e: ErrorObject): string {
  switch (e.keyword) {
    case 'format':
      return ['email', 'idn-email'].includes((e.params as { format: string }).format)
        ? 'must be a valid e-mail address'
        : `must be a valid ${(e.params as { format: string }).format}`;
    case 'type':
      return `must be ${(e.params as { type: string }).type === 'integer' ? 'an integer' : `a ${(e.params as { type: string }).type}`}`;
    case 'maxProperties':
      return `must have at most ${(e.params as { limit: number }).limit} members`;
    case 'maxLength':
      return `must be at most ${(e.params as { limit: number }).limit} characters`;
    case 'minLength':
      return 'must not be empty';
    case 'enum':
      return `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    default:
      return e.message ?? 'is invalid';
  }
}

/** Splits Ajv errors into the 422 body's missing_fields and invalid_fields. */
export function splitErrors(errors: ErrorObject[] | null | undefined): {
  missing: string[];
  invalid: Record<string, string>;
} {
  const missing: string[] = [];
  const invalid: Record<string, string> = {};
  for (const e of errors ?? []) {
    const path = errorPath(e);
    if (e.keyword === 'required') {
      if (!missing.includes(path)) missing.push(path);
    } else if (e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      continue;
    } else if (!(path in invalid)) {
      invalid[path || 'body'] = errorReason(e);
    }
  }
  return { missing, invalid };
}
