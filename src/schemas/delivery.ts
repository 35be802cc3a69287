// Per-project delivery (SPEC §11): the body of PUT …/delivery and what GET shows (secrets masked).
import { Type, type Static } from 'typebox';
import { DELIVERY_WARNINGS, STARTTLS_MODES, TRANSPORT_ROLES } from '../domain/delivery.js';
import { CHECK_REASONS } from '../domain/errorCatalog.js';
import { Email, literalUnion, NullableString } from './common.js';

const Str = (max: number) => Type.String({ minLength: 1, maxLength: max });

const TransportBody = Type.Object(
  {
    smtp_url: Type.String({ minLength: 1, maxLength: 2000, description: 'smtp://user:pass@host:587 or smtps://…' }),
    pool_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    rate_per_second: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 10_000 })),
    starttls: Type.Optional(literalUnion(STARTTLS_MODES)),
  },
  { additionalProperties: false },
);

const Creds = (members: Record<string, number>) =>
  Type.Object(Object.fromEntries(Object.entries(members).map(([k, max]) => [k, Str(max)])), {
    additionalProperties: false,
  });

export const WebhooksBody = Type.Object(
  {
    postmark: Type.Optional(Creds({ username: 200, password: 500 })),
    mailgun: Type.Optional(Creds({ signing_key: 500 })),
    sendgrid: Type.Optional(Creds({ public_key: 2000 })),
    ses: Type.Optional(Creds({ topic_arn: 500 })),
    unisender_go: Type.Optional(Creds({ api_key: 500 })),
  },
  { additionalProperties: false, description: 'provider webhook credentials (SPEC §12)' },
);

export const DeliveryBody = Type.Object(
  {
    primary: TransportBody,
    fallback: Type.Optional(TransportBody),
    from_name: Type.Optional(Type.String({ maxLength: 200 })),
    from_email: Type.Optional(Email),
    reply_to: Type.Optional(Email),
    dkim: Type.Optional(
      Type.Object(
        {
          domain: Str(253),
          selector: Str(63),
          private_key: Type.Optional(
            Type.String({ minLength: 1, maxLength: 20_000, description: 'PEM; absent keeps the stored key' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    daily_quota: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
    webhooks: Type.Optional(WebhooksBody),
  },
  { additionalProperties: false },
);
export type DeliveryBody = Static<typeof DeliveryBody>;

const TransportView = Type.Object({
  smtp_url: Type.String({ description: 'without the password' }),
  host: Type.String(),
  port: Type.Integer(),
  secure: Type.Boolean(),
  username: NullableString,
  password_set: Type.Boolean(),
  password_last4: NullableString,
  pool_size: Type.Integer(),
  rate_per_second: Type.Union([Type.Number(), Type.Null()]),
  starttls: literalUnion(STARTTLS_MODES),
});

const BreakerView = Type.Object({
  state: literalUnion(['closed', 'open', 'half_open'] as const),
  failures: Type.Integer(),
  open_until: NullableString,
});

export const DeliveryView = Type.Object({
  ok: Type.Literal(true),
  site_key: Type.String(),
  configured: Type.Boolean({ description: 'false: the installation transport (SMTP_URL or capture) is used' }),
  installation_transport: literalUnion(['installation', 'capture'] as const),
  primary: Type.Union([TransportView, Type.Null()]),
  fallback: Type.Union([TransportView, Type.Null()]),
  from_name: NullableString,
  from_email: NullableString,
  reply_to: NullableString,
  dkim: Type.Union([
    Type.Object({
      domain: Type.String(),
      selector: Type.String(),
      private_key_set: Type.Boolean(),
      private_key_fingerprint: Type.String(),
      dns_record: Type.Object({ name: Type.String(), type: Type.Literal('TXT'), value: Type.String() }),
    }),
    Type.Null(),
  ]),
  daily_quota: Type.Union([Type.Integer(), Type.Null()]),
  quota_used_today: Type.Integer(),
  warnings: Type.Array(literalUnion(DELIVERY_WARNINGS), {
    description: 'marketing_without_dkim: cart or campaign e-mail is sent without DKIM, so no one-click unsubscribe',
  }),
  webhooks: Type.Record(Type.String(), Type.Record(Type.String(), Type.Union([Type.String(), Type.Boolean()]))),
  breaker: Type.Object(Object.fromEntries(TRANSPORT_ROLES.map((r) => [r, Type.Optional(BreakerView)]))),
  updated_at: NullableString,
});

// `reason` says what the server's reply means (a sentence of the error catalogue); `reply` is the reply as it came.
const CheckReasonSchema = literalUnion(CHECK_REASONS, {
  description: 'what the outcome means, one of the catalogue of check outcomes',
});
const Check = Type.Object({ ok: Type.Boolean(), reason: CheckReasonSchema, reply: Type.String() });

export const VerifyView = Type.Object({
  ok: Type.Boolean(),
  transport: Type.Optional(Type.String()),
  primary: Check,
  fallback: Type.Optional(Check),
  dkim: Type.Optional(
    Type.Object({
      ok: Type.Boolean(),
      reason: CheckReasonSchema,
      reply: Type.String(),
      record: Type.Object({ name: Type.String(), type: Type.Literal('TXT'), value: Type.String() }),
      found: Type.Union([Type.Array(Type.String()), Type.Null()]),
    }),
  ),
});

export const TestSendBody = Type.Object(
  {
    template: Str(200),
    to: Email,
    version: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000_000,
        description: 'a saved version, e.g. a draft; default: the published one',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TestSendView = Type.Object({
  ok: Type.Literal(true),
  scheduled_email_id: Type.Integer(),
  test: Type.Literal(true),
});
