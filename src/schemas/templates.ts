// Schemas of templates with a contract (SPEC §16): variables, versions, layouts, the impact answer, the
// editor's analysis. The members added to existing bodies and views are spread there (schemas/admin.ts).
import { TOPIC_KEY_PATTERN } from '../domain/consent.js';
import { Type, type Static } from 'typebox';
import { literalUnion, SiteKey } from './common.js';

export const TEMPLATE_FORMATS = ['html', 'mjml'] as const;
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const LayoutName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_.:-]+$',
  description: 'a layout of the project',
});

export const TemplateVariableSchema = Type.Object({
  name: Type.String({ description: 'the request member: name, order_id, amount, fields.course_name' }),
  required: Type.Boolean({ description: 'a request lacking it is refused (422) once the template is routed' }),
});

export const ImpactEntrySchema = Type.Object({
  event_type: Type.String(),
  template_key: Type.String(),
  newly_required: Type.Array(Type.String()),
  requests_7d: Type.Integer({ minimum: 0 }),
  would_fail_7d: Type.Integer({ minimum: 0 }),
});

/** Members a template save may carry beyond subject, html and text. */
export const TemplateContractMembers = {
  format: Type.Optional(literalUnion(TEMPLATE_FORMATS, { description: 'html (default) or mjml' })),
  layout: Type.Optional(Nullable(LayoutName)),
  topic: Type.Optional(
    Type.Union([Type.String({ pattern: TOPIC_KEY_PATTERN }), Type.Null()], {
      description:
        'consent topic (SPEC §18); null: transactional when routed, cart_reminders in a cart chain, newsletters in a campaign; absent: unchanged',
    }),
  ),
  tracking: Type.Optional(Type.Boolean()),
  draft: Type.Optional(Type.Boolean({ description: 'save a version without publishing it' })),
  confirm: Type.Optional(
    Type.Boolean({ description: 'save although the impact check found recent requests that would fail' }),
  ),
};

export const TemplateViewMembers = {
  format: literalUnion(TEMPLATE_FORMATS),
  layout: Nullable(Type.String()),
  topic: Nullable(Type.String()),
  tracking: Type.Boolean(),
  version: Nullable(Type.Integer({ description: 'the published version' })),
  variables: Type.Array(TemplateVariableSchema),
  unchecked: Type.Boolean({ description: 'saved before variables were analysed: checked from its next save' }),
};

export const ProjectTemplateMembers = {
  fallback_name: Type.Optional(
    Nullable(Type.String({ minLength: 1, maxLength: 100, description: 'what {{ name }} prints without a name' })),
  ),
  default_layout: Type.Optional(Nullable(LayoutName)),
  confirm: Type.Optional(
    Type.Boolean({ description: 'change the default layout although templates would newly require members' }),
  ),
};

export const ProjectTemplateView = {
  fallback_name: Type.String({ description: 'the project’s, else «коллега» (ru) or friend (en)' }),
  default_layout: Nullable(Type.String()),
};

export const TemplateSaved = Type.Object({
  ok: Type.Literal(true),
  site_key: Type.String(),
  template_id: Type.Integer(),
  name: Type.String(),
  created: Type.Boolean(),
  version: Type.Integer(),
  published: Type.Boolean(),
  variables: Type.Array(TemplateVariableSchema),
  impact: Type.Array(ImpactEntrySchema),
  routing: Type.Optional(
    Type.Object(
      {
        routing_key: Type.String(),
        status: literalUnion(['routed', 'already', 'taken', 'not_routed'] as const),
        current: Type.Optional(Type.String({ description: 'taken: the template that has the key' })),
      },
      {
        description:
          'a new template named as a gallery template (SPEC §22): its event or cart step routed when free ("routed"), ' +
          'already routed to it, "taken" by another template (routing unchanged), or "not_routed" because recent ' +
          'requests would fail its contract',
      },
    ),
  ),
  warnings: Type.Array(
    Type.Object({
      code: Type.Literal('href_member_not_url'),
      member: Type.String(),
      message: Type.String(),
    }),
    {
      description:
        'saved anyway: a request member decides a whole href, so it must be an http(s), mailto or tel URL (any other link is dropped from the e-mail)',
    },
  ),
});

export const TemplateParams = Type.Object({ site_key: SiteKey, name: Type.String({ minLength: 1, maxLength: 200 }) });
export const VersionParams = Type.Object({
  site_key: SiteKey,
  name: Type.String({ minLength: 1, maxLength: 200 }),
  n: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
});
export const LayoutParams = Type.Object({ site_key: SiteKey, name: LayoutName });

export const VersionList = Type.Object({
  ok: Type.Literal(true),
  items: Type.Array(
    Type.Object({
      version: Type.Integer(),
      created_at: Type.String(),
      actor: Nullable(Type.String()),
      published: Type.Boolean(),
    }),
  ),
});

export const VersionView = Type.Object({
  ok: Type.Literal(true),
  ...TemplateViewMembers,
  version: Type.Integer(),
  name: Type.String(),
  subject: Type.String(),
  html: Type.String(),
  text: Type.String(),
  actor: Nullable(Type.String()),
  created_at: Type.String(),
  published: Type.Boolean(),
});

export const PublishBody = Type.Object({ confirm: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export const Published = Type.Object({
  ok: Type.Literal(true),
  name: Type.String(),
  version: Type.Integer(),
  published: Type.Literal(true),
  impact: Type.Array(ImpactEntrySchema),
});

const DiffChunk = Type.Object({ op: literalUnion(['added', 'removed', 'same'] as const), value: Type.String() });
export const VersionDiff = Type.Object({
  ok: Type.Literal(true),
  version: Type.Integer(),
  against: Nullable(Type.Integer({ description: 'the published version the diff starts from' })),
  subject: Type.Array(DiffChunk),
  html: Type.Array(DiffChunk),
  text: Type.Array(DiffChunk),
});

export const LayoutBody = Type.Object(
  {
    html: Type.String({ minLength: 1, maxLength: 500_000, description: 'prints {{ content }} exactly once' }),
    text: Type.String({ minLength: 1, maxLength: 500_000, description: 'prints {{ content }} exactly once' }),
    confirm: Type.Optional(
      Type.Boolean({ description: 'save although templates in it would newly require members recent requests lacked' }),
    ),
  },
  { additionalProperties: false },
);
export type LayoutBody = Static<typeof LayoutBody>;
export const LayoutViewSchema = Type.Object({
  name: Type.String(),
  html: Type.String(),
  text: Type.String(),
  used_by: Type.Array(Type.String(), { description: 'templates whose published version uses it' }),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export const LayoutSaved = Type.Object({
  ok: Type.Literal(true),
  created: Type.Boolean(),
  layout: LayoutViewSchema,
  impact: Type.Array(ImpactEntrySchema),
});
export const LayoutList = Type.Object({ ok: Type.Literal(true), items: Type.Array(LayoutViewSchema) });

/** The editor asks, as the author types, what the source needs and what saving it would do. */
export const AnalyzeBody = Type.Object(
  {
    site_key: SiteKey,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    subject: Type.String({ maxLength: 1000 }),
    html: Type.String({ maxLength: 500_000 }),
    text: Type.String({ maxLength: 500_000 }),
    format: Type.Optional(literalUnion(TEMPLATE_FORMATS)),
    layout: Type.Optional(Nullable(LayoutName)),
  },
  { additionalProperties: false },
);
export type AnalyzeBody = Static<typeof AnalyzeBody>;

export const AnalyzeResponse = Type.Object({
  ok: Type.Literal(true),
  variables: Type.Array(TemplateVariableSchema),
  problem: Nullable(
    Type.Object({ part: Type.String(), line: Type.Integer(), message: Type.String() }, { additionalProperties: true }),
  ),
  routed: Type.Array(
    Type.Object({
      event_type: Type.String(),
      endpoint: Type.String(),
      required_fields: Type.Array(Type.String(), { description: 'what a request would then have to carry' }),
      newly_required: Type.Array(Type.String()),
    }),
  ),
  impact: Type.Array(ImpactEntrySchema),
});

/** What the editor's preview may add: format and layout of the unsaved source, a stored event as data. */
export const PreviewContractMembers = {
  format: Type.Optional(literalUnion(TEMPLATE_FORMATS)),
  layout: Type.Optional(Nullable(LayoutName)),
  event_id: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'render with this stored event’s request',
    }),
  ),
};

export const VersionPreviewBody = Type.Object(
  {
    version: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'default: the published one' }),
    ),
    event_type: Type.Optional(Type.String({ maxLength: 100 })),
    event_id: PreviewContractMembers.event_id,
    sample: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 200 })),
  },
  { additionalProperties: false },
);
export const VersionPreviewResponse = Type.Object({
  ok: Type.Literal(true),
  subject: Type.String(),
  html: Type.String(),
  text: Type.String(),
  sample: Type.Record(Type.String(), Type.Unknown()),
  variables: Type.Array(TemplateVariableSchema),
  version: Nullable(Type.Integer()),
});
