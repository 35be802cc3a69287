import { Type, type Static, type TLiteral, type TSchema, type TSchemaOptions, type TUnion } from 'typebox';
import { CART_TYPES, PERMISSIONS } from '../domain/catalog.js';

/** anyOf of string constants, typed as the union of the values (a plain map would type it as never). */
export function literalUnion<const T extends readonly string[]>(
  values: T,
  options?: TSchemaOptions,
): TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }>;
}

/**
 * Row ids are positive integers within what both databases store and JavaScript counts exactly
 * (2^53 - 1, below bigint's 2^63 - 1): a larger id cannot exist, and one beyond bigint made PostgreSQL fail.
 */
/** The `ok: true` every successful answer carries. */
export const Ok = Type.Literal(true);
export const NullableString = Type.Union([Type.String(), Type.Null()]);

export const MAX_ID = Number.MAX_SAFE_INTEGER;
export const Id = Type.Integer({ minimum: 1, maximum: MAX_ID });

export const ErrorEnvelope = Type.Object(
  {
    detail: Type.Object({
      ok: Type.Literal(false),
      error: Type.Object(
        {
          code: Type.String(),
          message: Type.String({ description: 'a sentence for people: English, or Russian on Accept-Language: ru' }),
          reason: Type.Optional(Type.String({ description: 'a stable name of the case, where it has one (issue 28)' })),
          params: Type.Optional(
            Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
              description: 'the data the sentence names: field, limit, line, tag…',
            }),
          ),
        },
        { additionalProperties: true },
      ),
    }),
  },
  {
    $id: 'ErrorEnvelope',
    description: 'Every error answer (SPEC §1); `code` tells the cases apart and case-specific members stand beside it',
    examples: [
      {
        detail: {
          ok: false,
          error: {
            code: 'validation_error',
            message: 'Validation failed for event type contest_results: missing fields.event_title, fields.work_title',
            event_type: 'contest_results',
            missing_fields: ['fields.event_title', 'fields.work_title'],
            required_fields: ['event_type', 'email', 'fields.event_title', 'fields.work_title'],
            invalid_fields: {},
          },
        },
      },
    ],
  },
);

/** Error responses for a route, all with the envelope. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = Type.Ref('ErrorEnvelope');
  return out;
}

/** An e-mail address; a Unicode domain and a non-ASCII local part are accepted (SPEC §10, RFC 6531). */
export const Email = Type.String({ format: 'idn-email', maxLength: 254 });
export const ShortString = (max = 200) => Type.String({ maxLength: max });

/** The configurable limits of `fields` (SPEC §7: FIELDS_MAX_MEMBERS, FIELDS_MAX_STRING). */
export interface FieldLimits {
  maxMembers: number;
  maxString: number;
}
export const DEFAULT_FIELD_LIMITS: FieldLimits = { maxMembers: 100, maxString: 10_000 };

// Marks the `fields` schema so withFieldLimits can find it wherever it is embedded (a symbol: neither
// Ajv nor the OpenAPI document sees it, and TypeBox keeps it when it wraps the schema in Optional).
const FIELDS = Symbol('fields');

const fieldsOptions = (l: FieldLimits) => ({
  maxProperties: l.maxMembers,
  description: `Named values used by templates; at most ${l.maxMembers} members, strings at most ${l.maxString} characters`,
});

/** Written with the default limits; every app and the gateway's checks apply the configured ones. */
export const FieldsObject = Object.assign(
  Type.Record(Type.String(), Type.Unknown(), fieldsOptions(DEFAULT_FIELD_LIMITS)),
  { [FIELDS]: true },
);

/**
 * The schema with the configured limits on every `fields` member. Parts without one are returned as
 * they are, so a schema without `fields` comes back unchanged (same object).
 */
export function withFieldLimits<T>(schema: T, limits: FieldLimits): T {
  if (Array.isArray(schema)) {
    const items = schema.map((s: unknown) => withFieldLimits(s, limits));
    return (items.some((s, i) => s !== schema[i]) ? items : schema) as T;
  }
  if (!schema || typeof schema !== 'object') return schema;
  if ((schema as Record<symbol, unknown>)[FIELDS]) return { ...schema, ...fieldsOptions(limits) };
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    out[k] = withFieldLimits(v, limits);
    if (out[k] !== v) changed = true;
  }
  return changed ? (out as T) : schema;
}

export const CartTypeSchema = literalUnion(CART_TYPES);

export const Rights = Type.Object(
  {
    permissions: Type.Optional(Type.Array(literalUnion(PERMISSIONS), { maxItems: 10 })),
    allowed_api_events: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 200 })),
    allowed_template_keys: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 200 })),
    allowed_cart_types: Type.Optional(Type.Array(CartTypeSchema, { maxItems: 10 })),
    list_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_ID,
        description: 'the only address book a list_contacts_write key may write',
      }),
    ),
    note: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);
export type Rights = Static<typeof Rights>;

/** A per-key request limit (SPEC §7); also the type of the configured default and the limiter's input. */
export const RateLimit = Type.Object(
  {
    per_second: Type.Integer({ minimum: 1, maximum: 100000 }),
    burst: Type.Integer({ minimum: 1, maximum: 1000000 }),
  },
  { additionalProperties: false },
);
export type RateLimit = Static<typeof RateLimit>;

export const SiteKey = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' });
export const Cursor = Type.Optional(Type.String({ maxLength: 100 }));
/** Ajv fills the default in; the types do not know it, so readers write `limit ?? PAGE_SIZE`. */
export const PAGE_SIZE = 50;
export const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: PAGE_SIZE }));
