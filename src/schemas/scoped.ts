// Scoped reads (SPEC §13): what a site may read back about its own project with any active key. Never
// the rendered body, the context or the key ids: a site's key is not an administrator.
import { Type, type Static } from 'typebox';
import { Cursor, Limit, literalUnion, NullableString, ShortString } from './common.js';

/** Why an e-mail will not go (or did not): the vocabulary of the plan (SPEC §13), defined once. */
export const EMAIL_REASONS = [
  'no_template',
  'contact_unsubscribed',
  'no_consent',
  'contact_invalid',
  'contact_admin_blocked',
  'order_already_paid',
  'quota',
  'cancelled_by_purchase',
  'cancelled_by_admin',
  'template_error',
  // Not a stop: a cart e-mail already handed to the relay when its order's purchase committed (issue 30).
  'in_flight',
  'missing_fields',
  // The template needed more than RENDER_BUDGET_MS of CPU to render (SPEC §20): failed, not retried.
  'render_budget',
  // Given up after SEND_GIVE_UP_AFTER of temporary relay failures (SPEC §20); the last reply is kept.
  'expired',
] as const;
export type EmailReason = (typeof EMAIL_REASONS)[number];
export const EmailReasonSchema = literalUnion(EMAIL_REASONS, { description: 'why the e-mail will not go' });

export const ScopedEmail = Type.Object({
  id: Type.Integer(),
  status: Type.String({ description: 'scheduled, queued, sending, sent, failed, cancelled or suppressed' }),
  event_type: NullableString,
  order_id: NullableString,
  template_key: Type.String(),
  to: Type.String(),
  due_at: Type.String(),
  sent_at: NullableString,
  attempts: Type.Integer(),
  outcome: Type.Union([Type.String(), Type.Null()], {
    description: 'the last delivery note: the receiving server’s reply or why it stopped',
  }),
  reason: Type.Union([EmailReasonSchema, Type.Null()]),
  opened_at: Type.Union([Type.String(), Type.Null()], { description: 'the first time a person opened it, or null' }),
  clicked_at: Type.Union([Type.String(), Type.Null()], {
    description: 'the first time a person followed one of its links, or null',
  }),
});
export type ScopedEmail = Static<typeof ScopedEmail>;

export const ScopedEmailParams = Type.Object({ scheduled_email_id: Type.Integer({ minimum: 1 }) });

export const ScopedEmailResponse = Type.Object({ ok: Type.Literal(true), email: ScopedEmail });

export const ScopedEmailsQuery = Type.Object({
  order_id: Type.Optional(ShortString(200)),
  idempotency_key: Type.Optional(ShortString(200)),
  limit: Limit,
  cursor: Cursor,
});

export const ScopedEventsQuery = Type.Object({
  order_id: Type.Optional(ShortString(200)),
  since: Type.Optional(Type.String({ format: 'date-time' })),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' })),
  limit: Limit,
  cursor: Cursor,
});

/** What the chronology keeps of every request, as both the admin API and a site's own key read it. */
export const EventRequestMembers = {
  received_at: Type.String(),
  endpoint: Type.String(),
  event_type: NullableString,
  email: NullableString,
  order_id: NullableString,
  idempotency_key: NullableString,
};

export const ScopedEvent = Type.Object({
  id: Type.Integer(),
  ...EventRequestMembers,
  key_last4: NullableString,
  http_status: Type.Integer(),
  accepted: Type.Boolean(),
  error_code: NullableString,
  payload: Type.Unknown({ description: 'the body as the site sent it' }),
  effects: Type.Record(Type.String(), Type.Unknown()),
});

const page = <T extends import('typebox').TSchema>(item: T) =>
  Type.Object({
    ok: Type.Literal(true),
    items: Type.Array(item),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  });
export const ScopedEmailsResponse = page(ScopedEmail);
export const ScopedEventsResponse = page(ScopedEvent);
