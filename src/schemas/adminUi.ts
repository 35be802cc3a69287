// Schemas of the admin endpoints the web UI needs beyond the admin API of SPEC §6: catalog metadata,
// dashboard figures, template preview, e-mail actions and contact search.
import { Type, type Static } from 'typebox';
import { ConsentRecordView, ErasureView, SubscriptionView } from './consent.js';
import { Ok } from './admin.js';
import { EmailListItem, EventView } from './chronology.js';
import { Cursor, Limit, literalUnion, NullableString, ShortString, SiteKey } from './common.js';
import { CHECKLIST_STEPS } from '../domain/statuses.js';
import { LOCALES } from '../domain/locale.js';
import { PreviewContractMembers, TemplateVariableSchema } from './templates.js';

const Count = Type.Integer({ minimum: 0 });

export const UiMeta = Type.Object({
  ok: Ok,
  catalog: Type.Array(
    Type.Object({ event_type: Type.String(), description: Type.String(), fields: Type.Array(Type.String()) }),
  ),
  extra_event_types: Type.Array(Type.String()),
  cart_types: Type.Array(Type.String()),
  cart_steps: Type.Array(Type.Object({ step: Type.String(), delay_minutes: Type.Integer() })),
  permissions: Type.Array(Type.String()),
  known_template_keys: Type.Array(Type.String()),
  routing_keys: Type.Array(Type.String()),
  endpoints: Type.Array(Type.String()),
  contact_statuses: Type.Array(Type.String()),
  email_statuses: Type.Array(Type.String()),
  webhook_providers: Type.Array(Type.String()),
  webhook_kinds: Type.Array(Type.String({ description: 'what a site webhook endpoint may subscribe to' })),
  audit_actions: Type.Array(Type.String()),
  roles: Type.Array(Type.String({ description: 'account roles (SPEC §14)' })),
  status_tones: Type.Record(
    Type.String(),
    Type.Union([
      Type.Literal('ok'),
      Type.Literal('bad'),
      Type.Literal('warn'),
      Type.Literal('info'),
      Type.Literal('muted'),
    ]),
    { description: "how the UI colours each status's badge" },
  ),
  public_url: Type.String({ description: 'PUBLIC_URL: the base of the provider webhook URLs shown per project' }),
  bounce_domain: Type.Union([Type.String(), Type.Null()], { description: 'BOUNCE_DOMAIN (VERP), or null' }),
  consent_by_default: Type.Array(Type.String(), {
    description: 'topics a new project requires consent for; a project made before is offered the switch for these',
  }),
  tracking_active: Type.Boolean({
    description: 'PUBLIC_URL is set, so opens and clicks can be tracked; false: nothing is, whatever the projects say',
  }),
});

export const DASHBOARD_DAYS = 14;
export const DashboardQuery = Type.Object({
  site_key: Type.Optional(SiteKey),
  days: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 90,
      default: DASHBOARD_DAYS,
      description: 'the window: this many UTC days up to today',
    }),
  ),
});
export type DashboardQuery = Static<typeof DashboardQuery>;

const EmailOutcomes = {
  sent: Count,
  delivered: Count,
  bounced: Count,
  soft_bounced: Count,
  complained: Count,
  failed: Count,
  suppressed: Count,
  cancelled: Count,
  pending: Count,
};
const RateWindow = Type.Object({
  sent: Count,
  bounced: Count,
  complained: Count,
  bounce_rate: Type.Number(),
  complaint_rate: Type.Number(),
  level: Type.Union([Type.Literal('ok'), Type.Literal('warning'), Type.Literal('stop')], {
    description: 'warning above 2 % bounces or 0.1 % complaints; stop above 0.3 % complaints',
  }),
});
export const DashboardResponse = Type.Object({
  ok: Ok,
  site_key: NullableString,
  since: Type.String(),
  until: Type.String(),
  events_by_day: Type.Array(
    Type.Object({
      day: Type.String(),
      accepted: Count,
      rejected: Count,
      repeated: Count,
      by_type: Type.Record(Type.String(), Count),
    }),
  ),
  events_by_type: Type.Array(
    Type.Object({
      key: Type.String({ description: 'endpoint and event type, the key of events_by_day[].by_type' }),
      endpoint: Type.String(),
      event_type: Type.String(),
      accepted: Count,
      rejected: Count,
      repeated: Count,
      total: Count,
    }),
  ),
  emails_by_day: Type.Array(Type.Object({ day: Type.String(), ...EmailOutcomes })),
  emails_by_outcome: Type.Object(EmailOutcomes),
  emails_sent: Type.Object(
    { sent: Count, delivered: Count, opened: Count, clicked: Count },
    {
      description:
        'e-mails sent in the window (by sent time, test sends left out): sent = accepted by the relay; delivered = sent and not bounced back; opened, clicked = by a person at least once. The same definitions as cart_steps',
    },
  ),
  key_refusals: Type.Array(
    Type.Object({ site_key: Type.String(), total: Count, by_code: Type.Record(Type.String(), Count) }),
    {
      description:
        'per project, requests refused in the window because of their key (disabled, or without the right asked for)',
    },
  ),
  outbox: Type.Object({
    scheduled: Count,
    queued: Count,
    sending: Count,
    over_quota: Count,
    oldest_due_at: NullableString,
    oldest_due_age_seconds: Type.Union([Type.Integer(), Type.Null()]),
  }),
  carts: Type.Object({
    orders_created: Count,
    orders_paid: Count,
    paid_after_cart_email: Count,
    by_day: Type.Array(Type.Object({ day: Type.String(), created: Count, paid: Count, recovered: Count })),
    by_cart_type: Type.Array(Type.Object({ cart_type: Type.String(), created: Count, paid: Count, recovered: Count })),
    amounts: Type.Array(Type.Object({ currency: Type.String(), paid: Type.Number(), recovered: Type.Number() })),
  }),
  cart_steps: Type.Array(
    Type.Object({
      cart_type: Type.String(),
      step: Type.String({ description: '1h, 1d, 3d, or step<n> of a sequence' }),
      sent: Count,
      delivered: Count,
      opened: Count,
      clicked: Count,
      purchased_after_click: Count,
      recovered_by_currency: Type.Record(Type.String(), Type.Number()),
    }),
    {
      description:
        'per cart type and step, the cart e-mails sent in the window (human opens and clicks) and the orders attributed to them (SPEC §17)',
    },
  ),
  paid_amount_by_currency: Type.Record(Type.String(), Type.Number(), {
    description: 'amounts of the orders paid in the window, per currency (XXX: recorded without one)',
  }),
  deliverability: Type.Array(
    Type.Object({
      site_key: Type.String(),
      marketing_paused_at: Type.Union([Type.String(), Type.Null()]),
      marketing_paused_reason: Type.Union([Type.String(), Type.Null()]),
      days7: RateWindow,
      days30: RateWindow,
    }),
    {
      description:
        'per project, hard-bounce and complaint rates of the e-mails sent in the last 7 and 30 days, and whether its campaigns and cart chains are paused',
    },
  ),
});

const Part = Type.String({ maxLength: 500_000 });
export const PreviewBody = Type.Object(
  {
    site_key: SiteKey,
    subject: Type.String({ maxLength: 1000 }),
    html: Part,
    text: Part,
    event_type: Type.Optional(Type.String({ maxLength: 100, description: 'routing key whose sample values to use' })),
    sample: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        maxProperties: 200,
        description: 'the event request to render with; defaults to sample values for event_type',
      }),
    ),
    ...PreviewContractMembers,
  },
  { additionalProperties: false },
);
export type PreviewBody = Static<typeof PreviewBody>;

export const PreviewResponse = Type.Object({
  ok: Ok,
  subject: Type.String(),
  html: Type.String(),
  text: Type.String(),
  sample: Type.Record(Type.String(), Type.Unknown(), { description: 'the event request that was rendered' }),
  variables: Type.Optional(Type.Array(TemplateVariableSchema)),
});

export const EmailActionResponse = Type.Object({ ok: Ok, id: Type.Integer(), status: Type.String() });

export const EmailPreviewResponse = Type.Object({
  ok: Ok,
  id: Type.Integer(),
  stored: Type.Boolean({ description: 'true: what was sent; false: rendered now from the current template' }),
  subject: Type.String(),
  html: Type.String(),
  text: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
});

export const ContactsQuery = Type.Object({
  email: Type.Optional(ShortString(254)),
  site_key: Type.Optional(SiteKey),
  limit: Limit,
  cursor: Cursor,
});
export type ContactsQuery = Static<typeof ContactsQuery>;

const ContactCore = {
  id: Type.Integer(),
  site_key: Type.String(),
  email: Type.String(),
  name: NullableString,
  status: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
};
export const ContactItem = Type.Object(ContactCore);

export const ContactDetail = Type.Object({
  ok: Ok,
  contact: Type.Object({
    ...ContactCore,
    fields: Type.Record(Type.String(), Type.Unknown()),
    erased_at: Type.Union([Type.String(), Type.Null()]),
    status_cause: Type.Union([
      Type.Object(
        {
          reason: Type.String({
            description: 'admin, unsubscribe_link, smtp_rejection, hard_bounce, complaint, soft_bounces',
          }),
          email_id: Type.Union([Type.Integer(), Type.Null()]),
          report_id: Type.Union([Type.Integer(), Type.Null()]),
          at: Type.Union([Type.String(), Type.Null()]),
        },
        { description: 'what set the status last (SPEC §12); null when it never changed' },
      ),
      Type.Null(),
    ]),
  }),
  lists: Type.Array(Type.Object({ list_id: Type.Integer(), name: Type.String(), added_at: Type.String() })),
  events: Type.Array(EventView),
  events_more: Type.Boolean(),
  emails: Type.Array(EmailListItem),
  emails_more: Type.Boolean(),
  /** SPEC §18: the contact's state per topic, its consent records (newest first), its erasure. */
  topics: Type.Array(SubscriptionView),
  consent: Type.Array(ConsentRecordView),
  erasure: Type.Union([ErasureView, Type.Null()]),
});

export const ChecklistResponse = Type.Object({
  ok: Ok,
  site_key: Type.String(),
  complete: Type.Boolean({ description: 'every step is done' }),
  steps: Type.Array(
    Type.Object({
      step: literalUnion(CHECKLIST_STEPS),
      done: Type.Boolean(),
      count: Type.Integer({ minimum: 0, description: 'what the step counts (templates, routes, usable keys…)' }),
    }),
  ),
});

export const DefaultLayoutQuery = Type.Object({
  locale: literalUnion(LOCALES, { description: "the project's language" }),
});
export const DefaultLayoutResponse = Type.Object({
  ok: Ok,
  name: Type.String({ description: 'the name a new project has it under' }),
  html: Type.String(),
  text: Type.String(),
});

export const TemplateGalleryResponse = Type.Object({
  ok: Ok,
  items: Type.Array(
    Type.Object({
      routing_key: Type.String({ description: 'the event type or cart step the template is written for' }),
      name: Type.String(),
      subject: Type.String(),
      html: Type.String(),
      text: Type.String(),
      tracking: Type.Boolean(),
    }),
  ),
});
