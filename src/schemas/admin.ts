// Schemas of the admin and legacy configuration API (SPEC §6).
import { Type, type Static, type TSchema } from 'typebox';
import { EVENT_ENDPOINTS } from '../domain/catalog.js';
import { ATTEMPT_TRANSPORTS } from '../domain/delivery.js';
import { LOCALES } from '../domain/locale.js';
import {
  CONTACT_STATUSES,
  EMAIL_STATUSES,
  EVENT_OUTCOMES,
  KEY_STATUSES,
  REPORT_KINDS,
  REPORT_SOURCES,
} from '../domain/statuses.js';
import { EmailReasonSchema } from './scoped.js';
import { MACHINE_REASONS, UA_CATEGORIES } from '../domain/machineHits.js';
import {
  Cursor,
  Email,
  FieldsObject,
  Id,
  Limit,
  literalUnion,
  RateLimit,
  Rights,
  ShortString,
  SiteKey,
} from './common.js';
import {
  ProjectTemplateMembers,
  ProjectTemplateView,
  TemplateContractMembers,
  TemplateViewMembers,
} from './templates.js';

const Ok = Type.Literal(true);
const NullableString = Type.Union([Type.String(), Type.Null()]);
const Json = Type.Unknown();

export const SiteKeyParams = Type.Object({ site_key: SiteKey });
export const IdParams = Type.Object({ id: Id });
export const ListIdParams = Type.Object({ list_id: Id });

export const KeyView = Type.Object({
  id: Type.Integer(),
  site_key: Type.String(),
  name: Type.String(),
  status: literalUnion(KEY_STATUSES),
  last4: Type.String(),
  rights: Rights,
  rate_limit: Type.Union([RateLimit, Type.Null()]),
  created_at: Type.String(),
  disabled_at: NullableString,
});

export const CreateKeyBody = Type.Object(
  { site_key: SiteKey, name: ShortString(200), rights: Rights, rate_limit: Type.Optional(RateLimit) },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;
export const CreatedKey = Type.Intersect(
  [KeyView, Type.Object({ key: Type.String({ description: 'the full key; shown only in this answer' }) })],
  // TypeBox 1 leaves the type out of an intersection; kept so the OpenAPI document says "object".
  { type: 'object' },
);

export const UpdateKeyBody = Type.Object(
  {
    name: Type.Optional(ShortString(200)),
    rights: Type.Optional(Rights),
    rate_limit: Type.Optional(Type.Union([RateLimit, Type.Null()])),
  },
  { additionalProperties: false },
);
export type UpdateKeyBody = Static<typeof UpdateKeyBody>;

export const ProjectLocale = literalUnion(LOCALES, {
  description: 'language of the template filters date, plural and money',
});
export const TimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$',
  description: 'IANA time zone name of the date filter, e.g. Europe/Moscow',
});

export const SiteBody = Type.Object(
  {
    site_key: SiteKey,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    from_email: Email,
    timezone: Type.Optional(TimeZone),
    locale: Type.Optional(ProjectLocale),
    reply_to: Type.Optional(Type.Union([Email, Type.Null()])),
  },
  { additionalProperties: false },
);
export type SiteBody = Static<typeof SiteBody>;

/** The accent colour of the project's public pages (the preference page, SPEC §18). */
const BrandColor = Type.Union([Type.String({ pattern: '^#[0-9a-fA-F]{6}$' }), Type.Null()], {
  description: 'accent colour of the preference page, #rrggbb; null: the default',
});
const UtmValue = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f]*$' });
/** UTM parameters added to tracked links that carry none (SPEC §17). */
export const Utm = Type.Object(
  {
    source: Type.Optional(UtmValue),
    medium: Type.Optional(UtmValue),
    campaign: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '^[^\\u0000-\\u001f]*$',
        description: 'may hold {{ template_key }}, replaced by the template of each e-mail',
      }),
    ),
  },
  { additionalProperties: false },
);
export const TrackingSwitches = Type.Object(
  {
    opens: Type.Optional(Type.Boolean({ description: 'an open pixel ends the HTML (default true)' })),
    clicks: Type.Optional(Type.Boolean({ description: 'links lead through {PUBLIC_URL}/c/ (default true)' })),
  },
  { additionalProperties: false },
);

export const ProjectPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    from_email: Type.Optional(Email),
    timezone: Type.Optional(TimeZone),
    locale: Type.Optional(ProjectLocale),
    allow_private_webhooks: Type.Optional(
      Type.Boolean({
        description:
          "Owners only: this project's webhooks may go to loopback and private addresses (local development)",
      }),
    ),
    reply_to: Type.Optional(Type.Union([Email, Type.Null()], { description: 'null: no Reply-To' })),
    brand_color: Type.Optional(BrandColor),
    ...ProjectTemplateMembers,
    tracking: Type.Optional(TrackingSwitches),
    utm: Type.Optional(Type.Union([Utm, Type.Null()], { description: 'null: no UTM parameters' })),
  },
  { additionalProperties: false },
);
export type ProjectPatchBody = Static<typeof ProjectPatchBody>;

export const ProjectView = Type.Object({
  id: Type.Integer(),
  site_key: Type.String(),
  name: Type.String(),
  from_email: Type.String(),
  timezone: Type.String(),
  locale: ProjectLocale,
  brand_color: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
  marketing_paused_at: Type.Union([Type.String(), Type.Null()], {
    description: 'campaigns and cart chains paused since (complaint rate above 0.3 % over 7 days); null: running',
  }),
  marketing_paused_reason: Type.Union([Type.String(), Type.Null()]),
  allow_private_webhooks: Type.Boolean({
    description: 'webhooks may go to loopback and private addresses (set by an owner, for local development)',
  }),
  reply_to: Type.Union([Type.String(), Type.Null()], {
    description: "Reply-To of the project's e-mails; the relay settings' reply_to wins when set",
  }),
  ...ProjectTemplateView,
  tracking: Type.Object({ opens: Type.Boolean(), clicks: Type.Boolean() }),
  utm: Type.Union([Utm, Type.Null()]),
});

export const ContactUpsertBody = Type.Object(
  { site_key: SiteKey, email: Email, name: Type.Optional(ShortString(500)), fields: Type.Optional(FieldsObject) },
  { additionalProperties: false },
);
export type ContactUpsertBody = Static<typeof ContactUpsertBody>;

export const TemplateBody = Type.Object(
  {
    site_key: SiteKey,
    name: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '^[A-Za-z0-9_.:-]+$',
      description: 'the template key routing and rights refer to',
    }),
    subject: Type.String({ minLength: 1, maxLength: 1000 }),
    html: Type.String({ maxLength: 500_000 }),
    text: Type.String({ maxLength: 500_000 }),
    ...TemplateContractMembers,
  },
  { additionalProperties: false },
);
export type TemplateBody = Static<typeof TemplateBody>;

export const TemplateView = Type.Object({
  id: Type.Integer(),
  site_key: Type.String(),
  name: Type.String(),
  subject: Type.String(),
  html: Type.String(),
  text: Type.String(),
  ...TemplateViewMembers,
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const ListBody = Type.Object(
  { site_key: SiteKey, name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export type ListBody = Static<typeof ListBody>;
export const ListMemberBody = Type.Object({ contact_id: Id }, { additionalProperties: false });
export const ListView = Type.Object({
  list_id: Type.Integer(),
  name: Type.String(),
  members: Type.Integer(),
  created_at: Type.String(),
});

export const MemberView = Type.Object({
  contact_id: Type.Integer(),
  email: Type.String(),
  name: NullableString,
  status: Type.String(),
  added_at: Type.String(),
});

export const RoutingBody = Type.Object(
  {
    routes: Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 200 }), { maxProperties: 500 }),
    confirm: Type.Optional(
      Type.Boolean({ description: 'save although the impact check found recent requests that would fail' }),
    ),
  },
  { additionalProperties: false },
);
export const RoutingResponse = Type.Object({
  ok: Ok,
  site_key: Type.String(),
  routes: Type.Record(Type.String(), Type.String()),
});

export const Category = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 50 }),
    list_id: Id,
    slug: Type.String({ minLength: 1, maxLength: 200 }),
    title: Type.String({ maxLength: 500, default: '' }),
  },
  { additionalProperties: false },
);
export const CategoriesBody = Type.Object(
  { categories: Type.Array(Category, { maxItems: 1000 }) },
  { additionalProperties: false },
);
export const CategoriesResponse = Type.Object({ ok: Ok, site_key: Type.String(), categories: Type.Array(Category) });

export const PaidListsBody = Type.Object(
  { lists: Type.Record(Type.String(), Id, { maxProperties: 10 }) },
  { additionalProperties: false },
);
export const PaidListsResponse = Type.Object({
  ok: Ok,
  site_key: Type.String(),
  lists: Type.Record(Type.String(), Type.Integer()),
});

export const ContactStatusBody = Type.Object(
  { status: literalUnion(CONTACT_STATUSES) },
  { additionalProperties: false },
);

const EndpointSchema = literalUnion(EVENT_ENDPOINTS, { description: 'the gateway endpoint the request came to' });

export const EventsQuery = Type.Object({
  site_key: Type.Optional(SiteKey),
  order_id: Type.Optional(ShortString(200)),
  event_type: Type.Optional(ShortString(100)),
  endpoint: Type.Optional(EndpointSchema),
  email: Type.Optional(ShortString(254)),
  status: Type.Optional(
    literalUnion(EVENT_OUTCOMES, {
      description: 'repeated: a retry whose body changed under an idempotency key already used (not a rejection)',
    }),
  ),
  since: Type.Optional(Type.String({ format: 'date-time' })),
  until: Type.Optional(Type.String({ format: 'date-time' })),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' })),
  limit: Limit,
  cursor: Cursor,
});
export type EventsQuery = Static<typeof EventsQuery>;

export const EventView = Type.Object({
  id: Type.Integer(),
  site_key: Type.String(),
  received_at: Type.String(),
  endpoint: Type.String(),
  event_type: NullableString,
  email: NullableString,
  order_id: NullableString,
  idempotency_key: NullableString,
  key_id: Type.Union([Type.Integer(), Type.Null()]),
  key_last4: NullableString,
  http_status: Type.Integer(),
  accepted: Type.Boolean(),
  outcome: literalUnion(EVENT_OUTCOMES),
  repeat_of: Type.Union([Type.Integer(), Type.Null()], {
    description: 'repeated: the earlier call (event id) whose idempotency key this one reused; that call did the work',
  }),
  error_code: NullableString,
  payload: Json,
  effects: Type.Record(Type.String(), Json),
});

export const StatsQuery = Type.Object({
  site_key: Type.Optional(SiteKey),
  endpoint: Type.Optional(EndpointSchema),
  since: Type.Optional(Type.String({ format: 'date-time' })),
  until: Type.Optional(Type.String({ format: 'date-time' })),
});
export type StatsQuery = Static<typeof StatsQuery>;

const Count = Type.Integer();
const Bucket = {
  total: Count,
  accepted: Count,
  rejected: Count,
  repeated: Type.Integer({ description: 'retries with a changed body under a used idempotency key (not rejections)' }),
};
export const StatsResponse = Type.Object({
  ok: Ok,
  site_key: Type.Union([Type.String(), Type.Null()]),
  total: Count,
  accepted: Count,
  rejected: Count,
  repeated: Bucket.repeated,
  by_event_type: Type.Array(Type.Object({ event_type: NullableString, ...Bucket })),
  by_endpoint: Type.Array(Type.Object({ endpoint: Type.String(), ...Bucket })),
  by_endpoint_and_type: Type.Array(Type.Object({ endpoint: Type.String(), event_type: NullableString, ...Bucket }), {
    description: 'course_paid from purchase and course_paid from a transactional send are counted apart',
  }),
  by_day: Type.Array(Type.Object({ day: Type.String(), ...Bucket })),
  rejected_by_code: Type.Array(Type.Object({ code: Type.String(), total: Count })),
  emails_by_status: Type.Record(Type.String(), Count),
});

export const EmailStatusSchema = literalUnion(EMAIL_STATUSES);

export const EmailsQuery = Type.Object({
  site_key: Type.Optional(SiteKey),
  order_id: Type.Optional(ShortString(200)),
  status: Type.Optional(EmailStatusSchema),
  to: Type.Optional(ShortString(254)),
  event_id: Type.Optional(Id),
  contact_id: Type.Optional(Id),
  campaign_id: Type.Optional(Id),
  limit: Limit,
  cursor: Cursor,
});
export type EmailsQuery = Static<typeof EmailsQuery>;

const AttemptView = Type.Object({
  attempt: Type.Integer(),
  at: Type.String(),
  transport: literalUnion(ATTEMPT_TRANSPORTS),
  ok: Type.Boolean(),
  reply: NullableString,
  queue_id: NullableString,
  provider_message_id: NullableString,
  message_id: NullableString,
});

const EmailCommon = {
  id: Type.Integer(),
  site_key: Type.String(),
  kind: Type.String(),
  template_key: Type.String(),
  to: Type.String(),
  status: Type.String(),
  due_at: Type.String(),
  sent_at: NullableString,
  order_id: NullableString,
  event_id: Type.Union([Type.Integer(), Type.Null()]),
  campaign_id: Type.Union([Type.Integer(), Type.Null()]),
  contact_id: Type.Integer(),
  chain_step: NullableString,
  attempts: Type.Integer(),
  last_error: NullableString,
  test: Type.Boolean({ description: 'a test send from the delivery settings; counts in no statistics' }),
};
export const EmailListItem = Type.Object({
  ...EmailCommon,
  subject: Type.Union([Type.String(), Type.Null()], { description: 'the subject as rendered; null until it is' }),
});

/** An inbound report about the e-mail (SPEC §12), as received and as read. */
export const EmailReport = Type.Object({
  id: Type.Integer(),
  received_at: Type.String(),
  source: literalUnion(REPORT_SOURCES),
  kind: literalUnion(REPORT_KINDS),
  status_code: NullableString,
  diagnostic: NullableString,
  recipient: NullableString,
  message_id: NullableString,
  provider_message_id: NullableString,
  matched_by: NullableString,
  email_id: Type.Union([Type.Integer(), Type.Null()]),
  effects: Type.Record(Type.String(), Json, { description: 'what the report changed: email_status, contact_status' }),
  raw: Type.String({ description: 'the DSN or webhook body as received (the first 64 KiB)' }),
});

/** Opens and clicks of one e-mail (SPEC §17): counts are people's; machines' apart. */
export const Engagement = Type.Object({
  opens: Type.Integer(),
  clicks: Type.Integer(),
  machine_opens: Type.Integer(),
  machine_clicks: Type.Integer(),
  first_open_at: NullableString,
  first_click_at: NullableString,
  links: Type.Array(Type.Object({ url: Type.String(), clicks: Type.Integer() }), {
    description: 'human clicks per link, in the order of the links in the e-mail',
  }),
  hits: Type.Array(
    Type.Object({
      at: Type.String(),
      kind: Type.Union([Type.Literal('open'), Type.Literal('click')]),
      url: NullableString,
      machine: Type.Boolean(),
      machine_reason: Type.Union([literalUnion(MACHINE_REASONS), Type.Null()]),
      ua_category: literalUnion(UA_CATEGORIES),
    }),
    { description: 'the latest 100 hits, newest first, machines marked (kept as long as the e-mail body)' },
  ),
});

export const EmailDetail = Type.Object({
  ...EmailCommon,
  to_name: NullableString,
  created_at: Type.String(),
  message_id: NullableString,
  cancelled_by_event_id: Type.Union([Type.Integer(), Type.Null()], {
    description: 'the purchase event that cancelled it',
  }),
  reason: Type.Union([EmailReasonSchema, Type.Null()]),
  send_started_at: Type.Union([Type.String(), Type.Null()], {
    description: 'when the last attempt was handed to the relay; null before any',
  }),
  in_flight_event_id: Type.Union([Type.Integer(), Type.Null()], {
    description: 'the purchase event that found this cart e-mail already handed to the relay (reason in_flight)',
  }),
  context: Type.Record(Type.String(), Json),
  subject: NullableString,
  html: NullableString,
  text: NullableString,
  headers: Type.Record(Type.String(), Type.String()),
  template_version: Type.Union([Type.Integer(), Type.Null()], {
    description: 'the template version it was rendered with (SPEC §16)',
  }),
  attempts_log: Type.Array(AttemptView, {
    description: 'every delivery attempt: the transport and what the relay said',
  }),
  reports: Type.Array(EmailReport),
  engagement: Engagement,
});

export const TemplateStatsQuery = Type.Object({
  since: Type.Optional(Type.String({ format: 'date-time', description: 'default: 30 days before until' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'default: now' })),
});
export const TemplateStatsParams = Type.Object({
  site_key: SiteKey,
  name: Type.String({ minLength: 1, maxLength: 200 }),
});
export const TemplateStats = Type.Object({
  ok: Ok,
  site_key: Type.String(),
  name: Type.String(),
  since: Type.String(),
  until: Type.String(),
  sent: Type.Integer(),
  delivered: Type.Integer(),
  bounced: Type.Integer({ description: 'hard and soft' }),
  complained: Type.Integer(),
  opened: Type.Integer({ description: 'e-mails a person opened at least once' }),
  clicked: Type.Integer({ description: 'e-mails with at least one human click' }),
  unsubscribed: Type.Integer({
    description: 'contacts who unsubscribed with this template’s e-mail the last one received',
  }),
});

export const Page = <T extends TSchema>(item: T) =>
  Type.Object({ ok: Ok, items: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export { Ok, Id };
