import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { FIELD_LIMITS } from '../config.js';
import { CART_TYPES, PERMISSIONS } from '../domain/catalog.js';

export const MAX_STRING = FIELD_LIMITS.maxString;

/**
 * Row ids are positive integers within what both databases store and JavaScript counts exactly
 * (2^53 - 1, below bigint's 2^63 - 1): a larger id cannot exist, and one beyond bigint made PostgreSQL fail.
 */
export const MAX_ID = Number.MAX_SAFE_INTEGER;
export const Id = Type.Integer({ minimum: 1, maximum: MAX_ID });
export const MAX_FIELDS = FIELD_LIMITS.maxMembers;

export const ErrorEnvelope = Type.Object(
  {
    detail: Type.Object({
      ok: Type.Literal(false),
      error: Type.Object(
        {
          code: Type.String(),
          message: Type.String(),
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
export const FieldsObject = Type.Record(Type.String(), Type.Unknown(), {
  maxProperties: MAX_FIELDS,
  description: `Named values used by templates; at most ${MAX_FIELDS} members, strings at most ${MAX_STRING} characters`,
});
export const CartTypeSchema = Type.Union(CART_TYPES.map((c) => Type.Literal(c)));
export const IsoTime = Type.String({ format: 'date-time' });

export const Rights = Type.Object(
  {
    permissions: Type.Optional(Type.Array(Type.Union(PERMISSIONS.map((p) => Type.Literal(p))), { maxItems: 10 })),
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
export const Limit = Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 }));
