// One Ajv setup for request validation, used by Fastify's validator compiler and by the gateway's own
// ordered checks. Bodies are never coerced (a number where a string belongs is the client's bug and gets
// named in invalid_fields); query strings and path parameters are, since they are text on the wire.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { isValidAddress } from '../domain/email.js';
import { inputProblems, NUMBER_PROBLEM } from '../domain/inputRules.js';

/** Keyword of the errors that inputProblems adds (text rules and finite numbers, SPEC §10). */
const INPUT_RULE = 'inputRule';

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
  // RFC 3339 allows a leap second (23:59:60) that Date.parse turns into NaN: a time must be one the
  // service can compute with, or it would reach the database as NaN.
  const dateTime = ajv.formats['date-time'] as { validate: (s: string) => boolean };
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) => dateTime.validate(s) && Number.isFinite(Date.parse(s)),
  });
  // RFC 6531 addresses (Unicode domain, non-ASCII local part): JSON Schema's own name for them.
  ajv.addFormat('idn-email', { type: 'string', validate: isValidAddress });
  return ajv;
}

export const bodyAjv = make(false);
const paramAjv = make(true);

/** "/fields/course_name" -> "fields.course_name"; a missing property is appended to its parent. */
export function errorPath(e: ErrorObject): string {
  const base = e.instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
  if (e.keyword === 'required') {
    const prop = (e.params as { missingProperty: string }).missingProperty;
    return base ? `${base}.${prop}` : prop;
  }
  // Name the unexpected member itself, not its parent.
  if (e.keyword === 'additionalProperties') {
    const prop = (e.params as { additionalProperty: string }).additionalProperty;
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
    case 'additionalProperties':
      return 'is not a member of this request';
    case INPUT_RULE:
      return e.message ?? 'is invalid';
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

/**
 * A request part's validator: the SPEC §10 input rules (no U+0000 or unpaired surrogate, finite numbers),
 * then the schema. In a path or query the text rule alone answers (400); in a body every problem is
 * named together (422). Query strings and path parameters are checked before coercion, as sent.
 */
export function compileRequestValidator(schema: object, httpPart: string | undefined) {
  const body = httpPart === 'body';
  const ajvValidate: ValidateFunction = (body ? bodyAjv : paramAjv).compile(schema);
  const validate = (data: unknown): boolean => {
    const before = inputErrors(data);
    if (!body && before.length) {
      validate.errors = before;
      return false;
    }
    const ok = ajvValidate(data);
    // Coercion may have made a number of a query value ("1e400" is Infinity): checked once more.
    const after = ok && !body ? inputErrors(data) : [];
    const errors = [...before, ...(ok ? after : (ajvValidate.errors ?? []))];
    validate.errors = errors.length ? errors : null;
    return errors.length === 0;
  };
  validate.errors = null as ErrorObject[] | null;
  return validate;
}

function inputErrors(data: unknown): ErrorObject[] {
  return Object.entries(inputProblems(data)).map(([path, message]) => ({
    keyword: INPUT_RULE,
    instancePath: path === 'body' ? '' : `/${path.split('.').join('/')}`,
    schemaPath: '#',
    params: { text: message !== NUMBER_PROBLEM },
    message,
  }));
}

/** True when the errors of a path or query are only text-rule breaches: SPEC §10 answers those with 400. */
export function onlyTextErrors(errors: ErrorObject[]): boolean {
  return errors.length > 0 && errors.every((e) => e.keyword === INPUT_RULE && (e.params as { text?: boolean }).text);
}
