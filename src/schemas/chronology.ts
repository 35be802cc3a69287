// Schemas of what happened, as the admin API shows it (SPEC §5, §6, §17): the event chronology and its
// statistics, the e-mails with their reports and engagement, and the figures per template.
import { Type, type Static } from 'typebox';
import { EVENT_ENDPOINTS } from '../domain/catalog.js';
import { ATTEMPT_TRANSPORTS } from '../domain/delivery.js';
import { EMAIL_STATUSES, EVENT_OUTCOMES, REPORT_KINDS, REPORT_SOURCES } from '../domain/statuses.js';
import { EmailReasonSchema, EventRequestMembers } from './scoped.js';
import { MACHINE_REASONS, UA_CATEGORIES } from '../domain/machineHits.js';
import { Cursor, Id, Limit, literalUnion, NullableString, Ok, ShortString, SiteKey } from './common.js';

const Json = Type.Unknown();

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
  ...EventRequestMembers,
  key_id: Type.Union([Type.Integer(), Type.Null()]),
  key_last4: NullableString,
  http_status: Type.Integer(),
  accepted: Type.Boolean(),
  outcome: literalUnion(EVENT_OUTCOMES),
  repeat_of: Type.Union([Type.Integer(), Type.Null()], {
    description: 'repeated: the earlier call (event id) whose idempotency key this one reused; that call did the work',
  }),
  error_code: NullableString,
  replayable: Type.Boolean({
    description:
      'a replay can succeed once the configuration is fixed: false for a request at fault itself (a missing email, an invalid value)',
  }),
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
  attempts: Type.Integer({ description: 'attempts that reached a relay (a skip for an open breaker is none)' }),
  last_error: NullableString,
  waiting_since: Type.Union([Type.String(), Type.Null()], {
    description:
      'not sent yet: when it first could not go for a temporary reason (waiting for the relay since); it expires SEND_GIVE_UP_AFTER later',
  }),
  test: Type.Boolean({ description: 'a test send from the delivery settings; counts in no statistics' }),
  reason: Type.Union([EmailReasonSchema, Type.Null()], {
    description: 'why it will not go, named from last_error (the admin UI shows this in words, issue 37)',
  }),
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
