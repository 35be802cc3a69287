// Schemas of SPEC §18: topics, consent items and records, the scoped consent and erase endpoints, the
// export and erasure answers. The same objects give the types, the validation and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { CONSENT_SOURCES, ERASURE_STATUSES } from '../domain/statuses.js';
import { TOPIC_KEY_PATTERN } from '../domain/consent.js';
import { Email, literalUnion } from './common.js';

const Nullable = <T extends import('typebox').TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const TopicSchema = Type.Object(
  {
    key: Type.String({ pattern: TOPIC_KEY_PATTERN, description: 'a-z, digits and _, e.g. newsletters' }),
    title: Type.String({ minLength: 1, maxLength: 200 }),
    advertising: Type.Boolean(),
    require_consent: Type.Boolean({
      description: 'an e-mail of this topic goes only to contacts whose latest consent record for it is a grant',
    }),
  },
  { additionalProperties: false },
);

export const TopicsBody = Type.Object(
  { topics: Type.Array(TopicSchema, { maxItems: 50 }) },
  { additionalProperties: false },
);
export type TopicsBody = Static<typeof TopicsBody>;

export const TopicsResponse = Type.Object({
  ok: Type.Literal(true),
  site_key: Type.String(),
  topics: Type.Array(TopicSchema),
});

const consentMembers = {
  topic: Type.String({ description: 'a topic key of the project' }),
  granted: Type.Boolean({ description: 'true: consent given; false: withdrawn' }),
  at: Type.Optional(
    Type.String({ description: 'when the person decided (ISO 8601 with time zone); the request time when absent' }),
  ),
  text_version: Type.Optional(Type.String({ maxLength: 200, description: 'which text of the consent was shown' })),
  ip: Type.Optional(Type.String({ maxLength: 64, description: "the person's IPv4 or IPv6 address" })),
  user_agent: Type.Optional(Type.String({ maxLength: 500 })),
};

/** One item of `consent` in a gateway body (checked by domain/consent.ts readConsentItem). */
export const ConsentItemSchema = Type.Object(consentMembers);

export const ConsentList = Type.Array(ConsentItemSchema, {
  maxItems: 20,
  description: 'consent given or withdrawn with this event (SPEC §18), recorded in the same transaction',
});

export const ScopedConsentBody = Type.Object({ email: Email, ...consentMembers }, { additionalProperties: true });
export type ScopedConsentBody = Static<typeof ScopedConsentBody>;

export const ScopedConsentResponse = Type.Object({
  ok: Type.Literal(true),
  site_key: Type.String(),
  event_id: Type.Integer(),
  contact_id: Type.Integer(),
  topic: Type.String(),
  granted: Type.Boolean(),
  subscribed: Type.Boolean({ description: 'whether the contact now receives e-mails of the topic' }),
});

export const ConsentRecordView = Type.Object({
  id: Type.Integer(),
  topic: Type.String(),
  granted: Type.Boolean(),
  at: Type.String(),
  source: literalUnion(CONSENT_SOURCES),
  text_version: Nullable(Type.String()),
  ip: Nullable(Type.String()),
  user_agent: Nullable(Type.String()),
  recorded_at: Type.String(),
});

export const SubscriptionView = Type.Object({
  key: Type.String(),
  title: Type.String(),
  advertising: Type.Boolean(),
  require_consent: Type.Boolean(),
  subscribed: Type.Boolean({ description: 'false when the contact left the topic (or is unsubscribed)' }),
  latest_grant: Nullable(Type.Boolean()),
});

const erasureMembers = {
  ok: Type.Literal(true),
  contact_id: Type.Integer(),
  erasure_id: Type.Integer(),
  status: literalUnion(ERASURE_STATUSES),
  erased: Type.Record(Type.String(), Type.Integer(), { description: 'rows erased so far, per table' }),
  started_at: Type.String(),
  finished_at: Nullable(Type.String()),
};
export const ErasureView = Type.Object(erasureMembers);
export const ScopedErasureView = Type.Object({ ...erasureMembers, site_key: Type.String(), event_id: Type.Integer() });

export const ScopedEraseBody = Type.Object({ email: Email }, { additionalProperties: false });
export type ScopedEraseBody = Static<typeof ScopedEraseBody>;
