// Request and response schemas of the external gateway (API document + SPEC §3). The same objects give
// the TypeScript types, the validation and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { MAX_AMOUNT } from '../domain/money.js';
import { PLAN_STATUSES } from '../domain/plan.js';
import { CartTypeSchema, Email, FieldsObject, literalUnion, ShortString } from './common.js';
import { EmailReasonSchema } from './scoped.js';
import { ConsentList } from './consent.js';

// What PHP sends is read as meant before validation (SPEC §10; domain/tolerances.ts): null is absent,
// "fields": [] is {}, an integer order_id is its string, an amount may be "2500.00" or "2500,00".
const ORDER_ID = 'an integer is taken as its decimal string';
const AMOUNT = 'a number, or a decimal string such as "2500", "2500.00" or "2500,00"';
const Amount = Type.Number({
  minimum: 0,
  maximum: MAX_AMOUNT,
  description: `${AMOUNT}; finite, from 0 to ${MAX_AMOUNT} with at most 2 decimals`,
});

const common = {
  email: Email,
  name: Type.Optional(ShortString(500)),
  order_id: Type.Optional(Type.String({ maxLength: 200, description: ORDER_ID })),
  idempotency_key: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'unique per project; the sample shape is <order_id>:<event_type>',
    }),
  ),
  fields: Type.Optional(FieldsObject),
  consent: Type.Optional(ConsentList),
};

export const TransactionalBody = Type.Object(
  {
    event_type: Type.String({ minLength: 1, maxLength: 100 }),
    ...common,
    amount: Type.Optional(Amount),
    currency: Type.Optional(ShortString(10)),
    cart_type: Type.Optional(ShortString(20)),
    course_name: Type.Optional(ShortString(1000)),
    course_id: Type.Optional(ShortString(200)),
  },
  {
    additionalProperties: true,
    examples: [
      {
        event_type: 'contest_results',
        email: 'user@example.com',
        name: 'Anna',
        idempotency_key: '1001:contest_results',
        fields: { event_title: 'Spring contest', work_title: 'My project', place: '1' },
      },
    ],
  },
);
export type TransactionalBody = Static<typeof TransactionalBody>;

export const OrderCreatedBody = Type.Object(
  {
    cart_type: CartTypeSchema,
    ...common,
    order_id: Type.String({ maxLength: 200, description: ORDER_ID }),
    course_name: Type.Optional(ShortString(1000)),
  },
  {
    additionalProperties: true,
    examples: [
      {
        cart_type: 'course',
        email: 'user@example.com',
        name: 'Anna',
        order_id: '1001',
        course_name: 'Inclusive education',
        fields: { pay_url: 'https://site.example/pay/1001' },
      },
    ],
  },
);
export type OrderCreatedBody = Static<typeof OrderCreatedBody>;

export const PurchaseBody = Type.Object(
  {
    cart_type: CartTypeSchema,
    ...common,
    order_id: Type.String({ maxLength: 200, description: ORDER_ID }),
    course_id: Type.Optional(ShortString(200)),
    amount: Type.Optional(Amount),
    currency: Type.Optional(ShortString(10)),
  },
  {
    additionalProperties: true,
    examples: [
      {
        cart_type: 'course',
        email: 'user@example.com',
        order_id: '1001',
        course_id: '77',
        amount: 2500,
        currency: 'RUB',
        fields: {
          paid_at: '2026-11-20T10:15:00+03:00',
          account_url: 'https://site.example/account',
          course_category_id: '3',
        },
      },
    ],
  },
);
export type PurchaseBody = Static<typeof PurchaseBody>;

export const ScopedListContactBody = Type.Object(
  { email: Email, name: Type.Optional(ShortString(500)), fields: Type.Optional(FieldsObject) },
  { additionalProperties: true },
);
export type ScopedListContactBody = Static<typeof ScopedListContactBody>;

export const TransactionalStatus = literalUnion(['sent', 'queued', 'scheduled', 'failed', 'suppressed', 'no_template']);

const Nullable = <T extends import('typebox').TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** SPEC §13: present (true) only in the answer to a dry run. */
const DryRun = Type.Optional(
  Type.Literal(true, { description: 'a dry run: nothing was written but a chronology row marked dry_run' }),
);

/** SPEC §13: additive to version 1; one entry per e-mail scheduled, cancelled or not scheduled. */
export const Plan = Type.Array(
  Type.Object({
    scheduled_email_id: Nullable(Type.Integer()),
    template_key: Nullable(Type.String()),
    step: Nullable(
      Type.String({ description: 'the cart-chain step (1h, 1d, 3d or stepN); null for a transactional e-mail' }),
    ),
    due_at: Nullable(Type.String({ description: 'when it is due; null for one not scheduled' })),
    status: literalUnion(PLAN_STATUSES),
    reason: Nullable(EmailReasonSchema),
    send_started_at: Type.Optional(
      Type.String({
        description:
          'with reason in_flight (status sending): when the e-mail was handed to the relay, before the purchase committed; it counts as sent, not stopped',
      }),
    ),
  }),
  { description: 'each e-mail the request scheduled, cancelled or did not schedule, with why it will not go' },
);
export type Plan = Static<typeof Plan>;

export const TransactionalResponse = Type.Object({
  ok: Type.Literal(true),
  site_key: Type.String(),
  event_type: Type.String(),
  email: Type.String(),
  event_id: Type.Integer(),
  scheduled_email_id: Type.Union([Type.Integer(), Type.Null()]),
  sent: Type.Integer(),
  failed: Type.Integer(),
  status: TransactionalStatus,
  plan: Plan,
  dry_run: DryRun,
});
export type TransactionalResponse = Static<typeof TransactionalResponse>;

export const OrderCreatedResponse = Type.Object({
  ok: Type.Literal(true),
  site_key: Type.String(),
  event_id: Type.Integer(),
  order_id: Type.String(),
  cart_type: Type.String(),
  scheduled_email_ids: Type.Array(Type.Integer()),
  duplicate: Type.Boolean(),
  plan: Plan,
  dry_run: DryRun,
});
export type OrderCreatedResponse = Static<typeof OrderCreatedResponse>;

export const AttributedTo = Type.Object({
  scheduled_email_id: Type.Integer(),
  step: Type.Union([Type.String(), Type.Null()]),
  template_key: Type.String(),
});

export const PurchaseResponse = Type.Object({
  ok: Type.Literal(true),
  site_key: Type.String(),
  event_id: Type.Integer(),
  order_id: Type.String(),
  stopped: Type.Integer({ description: 'pending cart e-mails of this order that were cancelled' }),
  address_books: Type.Array(Type.Integer()),
  warnings: Type.Array(Type.String(), {
    description: 'one sentence per warning, naming the member it is about; the purchase was applied',
  }),
  warning_details: Type.Array(
    Type.Object({
      member: Type.String({ description: 'as invalid_fields would name it, e.g. amount, fields.paid_at' }),
      problem: Type.String({ description: 'what was wrong and what was recorded instead' }),
    }),
    { description: 'the same warnings as {member, problem} (SPEC §10)' },
  ),
  duplicate: Type.Boolean(),
  plan: Plan,
  attributed_to: Type.Optional(
    Type.Union([AttributedTo, Type.Null()], {
      description:
        'the cart e-mail of this order a person last clicked within ATTRIBUTION_WINDOW_DAYS before the purchase; null: none (absent in answers stored before this version)',
    }),
  ),
  dry_run: DryRun,
});
export type PurchaseResponse = Static<typeof PurchaseResponse>;

export const ScopedListContactResponse = Type.Object({
  ok: Type.Literal(true),
  site_key: Type.String(),
  event_id: Type.Integer(),
  list_id: Type.Integer(),
  contact_id: Type.Integer(),
});

const TemplateRequired = Type.Array(Type.String(), {
  description: 'members the routed template(s) require, apart (SPEC §16)',
});
export const CatalogResponse = Type.Object({
  ok: Type.Literal(true),
  site_key: Type.String(),
  events: Type.Array(
    Type.Object({
      event_type: Type.String(),
      description: Type.String(),
      required_fields: Type.Array(Type.String(), {
        description: 'what a request must carry: the catalog’s members and what the routed template requires',
      }),
      template_required_fields: TemplateRequired,
      has_api: Type.Boolean(),
      has_template: Type.Boolean(),
      template_key: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  supported_events: Type.Array(Type.String()),
  extra_events: Type.Array(
    Type.Object({
      event_type: Type.String(),
      required_fields: Type.Array(Type.String()),
      template_required_fields: TemplateRequired,
      template_key: Type.String(),
    }),
    { description: 'extra event types routed to a template in this project, with what they must carry' },
  ),
  cart_orders: Type.Array(
    Type.Object({
      cart_type: Type.String(),
      required_fields: Type.Array(Type.String()),
      template_required_fields: TemplateRequired,
      template_keys: Type.Array(Type.String()),
    }),
    { description: 'per cart type with a cart chain: what an order-created must carry for its e-mails' },
  ),
});
export type CatalogResponse = Static<typeof CatalogResponse>;

/** `?dry_run=true` on the three gateway POSTs (SPEC §13); `Prefer: dry-run` does the same. */
export const DryRunQuery = Type.Object({
  dry_run: Type.Optional(Type.Boolean({ description: 'check, route, render and plan; write nothing' })),
});
