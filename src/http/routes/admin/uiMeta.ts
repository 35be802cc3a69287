// The vocabularies the admin UI offers in its forms: catalog, rights, statuses.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CART_STEPS,
  CART_TYPES,
  CATALOG,
  EVENT_ENDPOINTS,
  EXTRA_EVENT_TYPES,
  KNOWN_TEMPLATE_KEYS,
  PERMISSIONS,
  allRoutingKeys,
} from '../../../domain/catalog.js';
import {
  ADMIN_ROLES,
  AUDIT_ACTIONS,
  STATUS_TONES,
  CONTACT_STATUSES,
  EMAIL_STATUSES,
  WEBHOOK_KINDS,
  WEBHOOK_PROVIDERS,
} from '../../../domain/statuses.js';
import { CONSENT_BY_DEFAULT } from '../../../domain/consent.js';
import {
  DefaultLayoutQuery,
  DefaultLayoutResponse,
  TemplateGalleryResponse,
  UiMeta,
} from '../../../schemas/adminUi.js';
import { defaultLayout } from '../../../domain/defaultLayout.js';
import { templateGallery } from '../../../services/demoTemplates.js';
import type { Deps } from '../../../services/context.js';
import { ADMIN, adminErrorsWithConflict } from '../schemaParts.js';

export const uiMetaAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/ui/meta',
    {
      config: { access: { self: true } },
      schema: {
        ...ADMIN,
        summary: 'The catalog, rights vocabularies and statuses the admin UI offers in its forms',
        response: { 200: UiMeta, ...adminErrorsWithConflict },
      },
    },
    async () => ({
      ok: true as const,
      catalog: CATALOG.map((e) => ({ event_type: e.event_type, description: e.description, fields: [...e.fields] })),
      extra_event_types: [...EXTRA_EVENT_TYPES],
      cart_types: [...CART_TYPES],
      cart_steps: CART_STEPS.map((s) => ({ step: s.step, delay_minutes: s.delayMinutes })),
      permissions: [...PERMISSIONS],
      known_template_keys: [...KNOWN_TEMPLATE_KEYS],
      routing_keys: allRoutingKeys(),
      endpoints: [...EVENT_ENDPOINTS],
      contact_statuses: [...CONTACT_STATUSES],
      email_statuses: [...EMAIL_STATUSES],
      webhook_providers: [...WEBHOOK_PROVIDERS],
      webhook_kinds: [...WEBHOOK_KINDS],
      audit_actions: [...AUDIT_ACTIONS],
      roles: [...ADMIN_ROLES],
      status_tones: STATUS_TONES,
      public_url: deps.config.publicUrl,
      bounce_domain: deps.config.bounces.domain,
      tracking_active: deps.config.publicUrlSet,
      consent_by_default: [...CONSENT_BY_DEFAULT],
    }),
  );

  // SPEC §22: what a new project is framed in, so that the UI can offer it to a project made before.
  app.get(
    '/api/admin/ui/default-layout',
    {
      config: { access: { self: true } },
      schema: {
        ...ADMIN,
        summary: "A new project's default layout in a language; saved with PUT …/layouts/{name}",
        querystring: DefaultLayoutQuery,
        response: { 200: DefaultLayoutResponse, ...adminErrorsWithConflict },
      },
    },
    async (req) => ({ ok: true as const, ...defaultLayout(req.query.locale) }),
  );

  app.get(
    '/api/admin/ui/template-gallery',
    {
      config: { access: { self: true } },
      schema: {
        ...ADMIN,
        summary: 'Russian starting templates for the catalog events and cart steps; saved with POST /api/templates',
        response: { 200: TemplateGalleryResponse, ...adminErrorsWithConflict },
      },
    },
    async () => ({ ok: true as const, items: templateGallery() }),
  );
};
