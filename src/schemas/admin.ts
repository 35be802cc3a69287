// Schemas of the admin and legacy configuration API (SPEC §6): keys, projects, templates, lists, routing;
// what happened (events, e-mails, figures) is in chronology.ts.
import { Type, type Static, type TSchema } from 'typebox';
import { LOCALES } from '../domain/locale.js';
import { CONTACT_STATUSES, KEY_STATUSES } from '../domain/statuses.js';
import {
  Email,
  FieldsObject,
  Id,
  literalUnion,
  NullableString,
  Ok,
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
    transactional_opens: Type.Optional(
      Type.Boolean({
        description:
          'with opens, the pixel ends transactional e-mails too (new projects: false; projects made before issue 39 read it as equal to opens)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Who sends (SPEC §22): shown by the default layout, each only when set (issue 39). */
const ProjectIdentityMembers = {
  logo_url: Type.Optional(
    Type.Union([Type.String({ maxLength: 2000, pattern: '^https://[^\\s"<>]+$' }), Type.Null()], {
      description: "https URL of the logo in the default layout's header; null: the project's name only",
    }),
  ),
  postal_address: Type.Optional(
    Type.Union(
      [Type.String({ minLength: 1, maxLength: 500, pattern: '^[^\\u0000-\\u0008\\u000b-\\u001f]*$' }), Type.Null()],
      {
        description: "the sender's postal address in the default layout's footer; null: not shown",
      },
    ),
  ),
};

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
    allow_private_relays: Type.Optional(
      Type.Boolean({
        description:
          "Owners only: this project's relay URLs may name loopback, private or link-local addresses (a relay on the same host or network)",
      }),
    ),
    reply_to: Type.Optional(Type.Union([Email, Type.Null()], { description: 'null: no Reply-To' })),
    brand_color: Type.Optional(BrandColor),
    ...ProjectIdentityMembers,
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
  allow_private_relays: Type.Boolean({
    description: 'relay URLs may name loopback, private or link-local addresses (set by an owner)',
  }),
  reply_to: Type.Union([Type.String(), Type.Null()], {
    description: "Reply-To of the project's e-mails; the relay settings' reply_to wins when set",
  }),
  logo_url: Type.Union([Type.String(), Type.Null()]),
  postal_address: Type.Union([Type.String(), Type.Null()]),
  ...ProjectTemplateView,
  tracking: Type.Object({ opens: Type.Boolean(), clicks: Type.Boolean(), transactional_opens: Type.Boolean() }),
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

export const Page = <T extends TSchema>(item: T) =>
  Type.Object({ ok: Ok, items: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export { Ok, Id };
