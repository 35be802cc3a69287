// Admin endpoints the web UI needs beyond SPEC §6's admin API (admin token or UI session): catalog
// metadata for the forms, dashboard figures, template preview, e-mail cancel/retry/preview, contacts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  EVENT_ENDPOINTS,
  CART_STEPS,
  CART_TYPES,
  CATALOG,
  EXTRA_EVENT_TYPES,
  KNOWN_TEMPLATE_KEYS,
  PERMISSIONS,
  allRoutingKeys,
} from '../../domain/catalog.js';
import {
  AUDIT_ACTIONS,
  CONTACT_STATUSES,
  EMAIL_STATUSES,
  WEBHOOK_KINDS,
  WEBHOOK_PROVIDERS,
} from '../../domain/statuses.js';
import { IdParams, SiteKeyParams } from '../../schemas/admin.js';
import {
  ContactDetail,
  ContactItem,
  ContactsQuery,
  DashboardQuery,
  DashboardResponse,
  EmailActionResponse,
  EmailPreviewResponse,
  PreviewBody,
  PreviewResponse,
  ChecklistResponse,
  TemplateGalleryResponse,
  UiMeta,
} from '../../schemas/adminUi.js';
import { checklist } from '../../services/checklist.js';
import { templateGallery } from '../../services/demoTemplates.js';
import { errors } from '../../schemas/common.js';
import * as contacts from '../../services/contacts.js';
import type { Deps } from '../../services/context.js';
import { auditActor, scopeOf } from '../plugins/access.js';
import { dashboard } from '../../services/dashboard.js';
import * as outbox from '../../services/emails.js';
import { previewTemplate } from '../../services/preview.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const errs = errors(401, 403, 404, 409, 422, 500);

export const adminUiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/ui/meta',
    {
      config: { access: { self: true } },
      schema: {
        tags,
        security,
        summary: 'The catalog, rights vocabularies and statuses the admin UI offers in its forms',
        response: { 200: UiMeta, ...errs },
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
      public_url: deps.config.publicUrl,
      bounce_domain: deps.config.bounces.domain,
    }),
  );

  app.get(
    '/api/admin/ui/template-gallery',
    {
      config: { access: { self: true } },
      schema: {
        tags,
        security,
        summary: 'Russian starting templates for the catalog events and cart steps; saved with POST /api/templates',
        response: { 200: TemplateGalleryResponse, ...errs },
      },
    },
    async () => ({ ok: true as const, items: templateGallery() }),
  );

  app.get(
    '/api/admin/projects/:site_key/checklist',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        tags,
        security,
        summary: 'First-run steps (project, template, routing, key, delivery, test e-mail), each done or not',
        params: SiteKeyParams,
        response: { 200: ChecklistResponse, ...errs },
      },
    },
    async (req) => checklist(deps, req.params.site_key),
  );

  app.get(
    '/api/admin/dashboard',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        tags,
        security,
        summary: 'Dashboard figures: events, e-mails, outbox and cart recovery over the last days (UTC)',
        querystring: DashboardQuery,
        response: { 200: DashboardResponse, ...errs },
      },
    },
    async (req) => dashboard(deps, req.query, scopeOf(req)),
  );

  app.post(
    '/api/admin/templates/preview',
    {
      config: { access: { project: 'body.site_key' } },
      schema: {
        tags,
        security,
        summary: 'Render unsaved template source with sample values; 422 names the part and line that does not parse',
        body: PreviewBody,
        response: { 200: PreviewResponse, ...errs },
      },
    },
    async (req) => previewTemplate(deps, req.body),
  );

  app.get(
    '/api/admin/emails/:id/preview',
    {
      config: { access: { object: { kind: 'email', id: 'params.id' } } },
      schema: {
        tags,
        security,
        summary: 'The e-mail as sent, or, before it is rendered, as its template renders it now',
        params: IdParams,
        response: { 200: EmailPreviewResponse, ...errs },
      },
    },
    async (req) => outbox.emailPreview(deps, req.params.id),
  );

  app.post(
    '/api/admin/emails/:id/cancel',
    {
      config: { access: { object: { kind: 'email', id: 'params.id' }, write: true } },
      schema: {
        tags,
        security,
        summary: 'Cancel a scheduled or queued e-mail (409 once it is being sent or done)',
        params: IdParams,
        response: { 200: EmailActionResponse, ...errs },
      },
    },
    async (req) => outbox.cancel(deps, auditActor(req), req.params.id),
  );

  app.post(
    '/api/admin/emails/:id/retry',
    {
      config: { access: { object: { kind: 'email', id: 'params.id' }, write: true } },
      schema: {
        tags,
        security,
        summary: 'Send a failed e-mail again now (attempts start over)',
        params: IdParams,
        response: { 200: EmailActionResponse, ...errs },
      },
    },
    async (req) => outbox.retry(deps, auditActor(req), req.params.id),
  );

  app.get(
    '/api/admin/contacts',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        tags,
        security,
        summary: 'Find contacts by (part of) their e-mail address, newest first',
        querystring: ContactsQuery,
        response: {
          200: Type.Object({
            ok: Type.Literal(true),
            items: Type.Array(ContactItem),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...errs,
        },
      },
    },
    async (req) => contacts.search(deps, req.query, scopeOf(req)),
  );

  app.get(
    '/api/admin/contacts/:id',
    {
      config: { access: { object: { kind: 'contact', id: 'params.id' } } },
      schema: {
        tags,
        security,
        summary: 'One contact with its address books, and its latest events and e-mails',
        params: IdParams,
        response: { 200: ContactDetail, ...errs },
      },
    },
    async (req) => contacts.contact(deps, req.params.id),
  );
};
