// Webhook endpoints of a project and their deliveries (SPEC §13), and the payloads sites receive.
import { Type, type Static } from 'typebox';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_ENDPOINT_STATUSES, WEBHOOK_KINDS } from '../domain/statuses.js';
import { Cursor, Id, Limit, literalUnion, NullableString, Ok, SiteKey } from './common.js';

const IsoTime = Type.String({ format: 'date-time' });
const NullableTime = Type.Union([IsoTime, Type.Null()]);

export const WebhookKind = literalUnion(WEBHOOK_KINDS);
const Events = Type.Array(WebhookKind, { minItems: 1, maxItems: WEBHOOK_KINDS.length, uniqueItems: true });
const Url = Type.String({ minLength: 1, maxLength: 2000 });
const Description = Type.String({ maxLength: 500 });

export const WebhookParams = Type.Object({ site_key: SiteKey, id: Id });
export const DeliveryParams = Type.Object({ site_key: SiteKey, id: Id, delivery_id: Id });

export const CreateWebhookBody = Type.Object(
  { url: Url, events: Events, description: Type.Optional(Description) },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const PatchWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    enabled: Type.Optional(Type.Boolean({ description: 'true enables a disabled endpoint again' })),
  },
  { additionalProperties: false },
);
export type PatchWebhookBody = Static<typeof PatchWebhookBody>;

export const CreatedWebhook = Type.Object({
  ok: Ok,
  id: Type.Integer(),
  secret: Type.String({ description: 'whsec_ + base64: shown in this answer only' }),
});

export const WebhookView = Type.Object({
  id: Type.Integer(),
  site_key: Type.String(),
  url: Type.String(),
  description: NullableString,
  events: Type.Array(WebhookKind),
  status: literalUnion(WEBHOOK_ENDPOINT_STATUSES),
  /** Since when every attempt failed (null after a success). */
  failing_since: NullableTime,
  disabled_at: NullableTime,
  disabled_reason: NullableString,
  created_at: IsoTime,
  updated_at: IsoTime,
});

export const WebhookList = Type.Object({ ok: Ok, items: Type.Array(WebhookView) });
export const WebhookAnswer = Type.Object({ ok: Ok, webhook: WebhookView });

const Attempt = Type.Object({
  at: IsoTime,
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  latency_ms: Type.Integer(),
  error: NullableString,
  response_excerpt: NullableString,
});

export const DeliveryView = Type.Object({
  id: Type.Integer(),
  webhook_id: Type.String({ description: 'the webhook-id header, the same on every attempt' }),
  type: WebhookKind,
  status: literalUnion(WEBHOOK_DELIVERY_STATUSES),
  attempts: Type.Integer(),
  next_attempt_at: NullableTime,
  delivered_at: NullableTime,
  last_error: NullableString,
  created_at: IsoTime,
  data: Type.Record(Type.String(), Type.Unknown()),
  attempts_log: Type.Array(Attempt),
});

export const DeliveriesQuery = Type.Object({ limit: Limit, cursor: Cursor });
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;
export const DeliveryList = Type.Object({ ok: Ok, items: Type.Array(DeliveryView), next_cursor: NullableString });
export const ResendAnswer = Type.Object({ ok: Ok, id: Type.Integer(), status: Type.Literal('pending') });

/** An administrator's replay of a chronology event (issue 15). */
export const ReplayAnswer = Type.Object({
  ok: Ok,
  replay_of: Type.Integer(),
  accepted: Type.Boolean({ description: 'false: refused again; answer holds the error' }),
  replayed_stored_answer: Type.Boolean({
    description: 'the idempotency key already held an answer (the site sent it again meanwhile): nothing new done',
  }),
  event_id: Type.Union([Type.Integer(), Type.Null()]),
  http_status: Type.Integer(),
  answer: Type.Record(Type.String(), Type.Unknown()),
});

/** What a site's endpoint receives (the OpenAPI document's `webhooks`). */
export const WebhookPayload = Type.Object({
  type: WebhookKind,
  timestamp: IsoTime,
  data: Type.Object(
    {
      site_key: Type.String(),
      sequence: Type.Integer({ description: 'grows with every delivery of the endpoint: orders them' }),
      event_id: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
      scheduled_email_id: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
      event_type: Type.Optional(NullableString),
      order_id: Type.Optional(NullableString),
      idempotency_key: Type.Optional(NullableString),
      email: Type.Optional(NullableString),
      status: Type.Optional(NullableString),
      reason: Type.Optional(NullableString),
      template_key: Type.Optional(NullableString),
      step: Type.Optional(NullableString),
      http_status: Type.Optional(Type.Integer({ description: 'event.rejected: the refusal sent to the site' })),
      error_code: Type.Optional(Type.String({ description: 'event.rejected: the error code of the refusal' })),
      endpoint: Type.Optional(Type.String({ description: 'event.rejected: the gateway endpoint called' })),
      opened_at: Type.Optional(Type.String({ description: 'email.opened: the first human open (ISO 8601)' })),
      clicked_at: Type.Optional(Type.String({ description: 'email.clicked: the first human click (ISO 8601)' })),
      url: Type.Optional(Type.String({ description: 'email.clicked: where the first human click led' })),
    },
    { additionalProperties: true },
  ),
});

/** The OpenAPI 3.1 `webhooks` section: one POST per kind, signed as Standard Webhooks are. */
export function webhooksDocument(): Record<string, any> {
  const header = (name: string, description: string) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema: { type: 'string' },
  });
  return Object.fromEntries(
    WEBHOOK_KINDS.map((kind) => [
      kind,
      {
        post: {
          summary: `${kind}: sent to every endpoint of the project subscribed to it`,
          description:
            'Verify webhook-signature (HMAC-SHA256 over `webhook-id.webhook-timestamp.body` with the endpoint secret, base64, prefixed `v1,`), de-duplicate on webhook-id, order by data.sequence. A 2xx ends the delivery; anything else is retried.',
          parameters: [
            header('webhook-id', 'the same on every retry and re-send of this delivery'),
            header('webhook-timestamp', 'seconds since the epoch of this attempt'),
            header('webhook-signature', 'v1,<base64 HMAC-SHA256>'),
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  ...WebhookPayload,
                  properties: { ...WebhookPayload.properties, type: { const: kind, type: 'string' } },
                },
              },
            },
          },
          responses: { '200': { description: 'any 2xx: received' } },
        },
      },
    ]),
  );
}
