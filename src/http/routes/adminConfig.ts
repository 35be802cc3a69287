// Admin API: projects, keys and per-project configuration (SPEC §2, §6).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errors } from '../../schemas/common.js';
import {
  CategoriesBody,
  CategoriesResponse,
  CreateKeyBody,
  CreatedKey,
  IdParams,
  KeyView,
  ListView,
  Ok,
  PaidListsBody,
  PaidListsResponse,
  ProjectPatchBody,
  ProjectView,
  RoutingBody,
  RoutingResponse,
  SiteKeyParams,
  TemplateView,
  UpdateKeyBody,
} from '../../schemas/admin.js';
import * as admin from '../../services/admin.js';
import type { Deps } from '../../services/context.js';
import { auditActor, requireOwner, scopeOf } from '../plugins/access.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const errs = errors(401, 403, 404, 422, 500);

export const adminConfigRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/projects',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        tags,
        security,
        summary: 'All projects',
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(ProjectView) }), ...errs },
      },
    },
    async (req) => admin.projects(deps, scopeOf(req)),
  );

  app.patch(
    '/api/admin/projects/:site_key',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        tags,
        security,
        summary:
          "Change a project's name, sender, time zone, locale or (owners) private webhook addresses; absent members stay as they are",
        params: SiteKeyParams,
        body: ProjectPatchBody,
        response: { 200: Type.Object({ ok: Ok, project: ProjectView }), ...errs, ...errors(409) },
      },
    },
    async (req) => {
      if (req.body.allow_private_webhooks !== undefined) requireOwner(req, 'allow private webhook addresses');
      return admin.changeProject(deps, auditActor(req), req.params.site_key, req.body);
    },
  );

  app.post(
    '/api/admin/projects/:site_key/marketing/resume',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        tags,
        security,
        summary: 'Resume the campaigns and cart chains a complaint rate above 0.3 % paused',
        params: SiteKeyParams,
        response: { 200: Type.Object({ ok: Ok, project: ProjectView }), ...errs },
      },
    },
    async (req) => admin.resumeProjectMarketing(deps, auditActor(req), req.params.site_key),
  );

  app.post(
    '/api/admin/keys',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        tags,
        security,
        summary: 'Create an API key; the full key is in this answer only',
        body: CreateKeyBody,
        response: { 201: CreatedKey, ...errs },
      },
    },
    async (req, reply) => {
      reply.code(201);
      return admin.createApiKey(deps, auditActor(req), req.body);
    },
  );

  app.get(
    '/api/admin/keys',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        tags,
        security,
        summary: 'List API keys (never the key itself)',
        querystring: Type.Object({ site_key: Type.Optional(Type.String()) }),
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(KeyView) }), ...errs },
      },
    },
    async (req) => admin.apiKeys(deps, req.query.site_key, scopeOf(req)),
  );

  app.patch(
    '/api/admin/keys/:id',
    {
      config: { access: { object: { kind: 'key', id: 'params.id' }, write: true } },
      schema: {
        tags,
        security,
        summary: "Change a key's name, rights or rate limit",
        params: IdParams,
        body: UpdateKeyBody,
        response: { 200: KeyView, ...errs },
      },
    },
    async (req) => admin.changeApiKey(deps, auditActor(req), req.params.id, req.body),
  );

  app.post(
    '/api/admin/keys/:id/disable',
    {
      config: { access: { object: { kind: 'key', id: 'params.id' }, write: true } },
      schema: {
        tags,
        security,
        summary: 'Disable a key; it stops working on the next request',
        params: IdParams,
        response: { 200: Type.Object({ id: Type.Integer(), status: Type.Literal('disabled') }), ...errs },
      },
    },
    async (req) => {
      const k = await admin.changeApiKey(deps, auditActor(req), req.params.id, { status: 'disabled' });
      return { id: k.id, status: 'disabled' as const };
    },
  );

  app.get(
    '/api/admin/projects/:site_key/routing',
    {
      config: { access: { project: 'params.site_key' } },
      schema: { tags, security, params: SiteKeyParams, response: { 200: RoutingResponse, ...errs } },
    },
    async (req) => admin.routing(deps, req.params.site_key),
  );

  app.put(
    '/api/admin/projects/:site_key/routing',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        tags,
        security,
        summary:
          'Replace the routing (event type or cart step -> template name); 409 template_impact when recent ' +
          'requests would fail, unless confirm',
        params: SiteKeyParams,
        body: RoutingBody,
        response: { 200: RoutingResponse, ...errs, ...errors(409) },
      },
    },
    async (req) => admin.setRouting(deps, auditActor(req), req.params.site_key, req.body.routes, req.body.confirm),
  );

  app.get(
    '/api/admin/projects/:site_key/course-categories',
    {
      config: { access: { project: 'params.site_key' } },
      schema: { tags, security, params: SiteKeyParams, response: { 200: CategoriesResponse, ...errs } },
    },
    async (req) => admin.courseCategories(deps, req.params.site_key),
  );

  app.put(
    '/api/admin/projects/:site_key/course-categories',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        tags,
        security,
        summary: 'Replace the course-category table',
        params: SiteKeyParams,
        body: CategoriesBody,
        response: { 200: CategoriesResponse, ...errs },
      },
    },
    async (req) => admin.setCourseCategories(deps, auditActor(req), req.params.site_key, req.body.categories),
  );

  app.get(
    '/api/admin/projects/:site_key/paid-lists',
    {
      config: { access: { project: 'params.site_key' } },
      schema: { tags, security, params: SiteKeyParams, response: { 200: PaidListsResponse, ...errs } },
    },
    async (req) => admin.paidLists(deps, req.params.site_key),
  );

  app.put(
    '/api/admin/projects/:site_key/paid-lists',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        tags,
        security,
        summary: 'Set the address book of paid orders per cart type',
        params: SiteKeyParams,
        body: PaidListsBody,
        response: { 200: PaidListsResponse, ...errs },
      },
    },
    async (req) => admin.setPaidLists(deps, auditActor(req), req.params.site_key, req.body.lists),
  );

  app.get(
    '/api/admin/projects/:site_key/templates',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        tags,
        security,
        params: SiteKeyParams,
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(TemplateView) }), ...errs },
      },
    },
    async (req) => admin.templates(deps, req.params.site_key),
  );

  app.get(
    '/api/admin/projects/:site_key/lists',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        tags,
        security,
        params: SiteKeyParams,
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(ListView) }), ...errs },
      },
    },
    async (req) => admin.lists(deps, req.params.site_key),
  );

  app.get(
    '/api/admin/projects/:site_key/sequences',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        tags,
        security,
        params: SiteKeyParams,
        response: {
          200: Type.Object({
            ok: Ok,
            items: Type.Array(
              Type.Object({
                sequence_id: Type.Integer(),
                name: Type.String(),
                steps: Type.Array(Type.Object({ template_id: Type.Integer(), delay_minutes: Type.Integer() })),
              }),
            ),
            cart_chains: Type.Record(Type.String(), Type.Integer()),
          }),
          ...errs,
        },
      },
    },
    async (req) => admin.sequences(deps, req.params.site_key),
  );
};
