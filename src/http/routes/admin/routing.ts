// A project's routing (SPEC §6): event → template, course categories, paid lists, cart chains.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as admin from '../../../services/admin.js';
import * as automation from '../../../services/campaigns.js';
import { CART_TYPES } from '../../../domain/catalog.js';
import { auditActor } from '../../plugins/access.js';
import {
  CategoriesBody,
  CategoriesResponse,
  Id,
  Ok,
  PaidListsBody,
  PaidListsResponse,
  RoutingBody,
  RoutingResponse,
  SiteKeyParams,
} from '../../../schemas/admin.js';
import { errors } from '../../../schemas/common.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { ADMIN, adminErrors } from '../schemaParts.js';

const CartChainsBody = Type.Object(
  {
    chains: Type.Record(Type.String({ description: CART_TYPES.join(', ') }), Type.Union([Id, Type.Null()]), {
      maxProperties: 10,
    }),
    confirm: Type.Optional(Type.Boolean({ description: 'save although recent requests would fail (SPEC §16)' })),
  },
  { additionalProperties: false },
);

const IntMap = Type.Record(Type.String(), Type.Integer());

export const routingAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/projects/:site_key/routing',
    {
      config: { access: { project: 'params.site_key' } },
      schema: { ...ADMIN, params: SiteKeyParams, response: { 200: RoutingResponse, ...adminErrors } },
    },
    async (req) => admin.routing(deps, req.params.site_key),
  );

  app.put(
    '/api/admin/projects/:site_key/routing',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary:
          'Replace the routing (event type or cart step -> template name); 409 template_impact when recent ' +
          'requests would fail, unless confirm',
        params: SiteKeyParams,
        body: RoutingBody,
        response: { 200: RoutingResponse, ...adminErrors, ...errors(409) },
      },
    },
    async (req) => admin.setRouting(deps, auditActor(req), req.params.site_key, req.body.routes, req.body.confirm),
  );

  app.get(
    '/api/admin/projects/:site_key/course-categories',
    {
      config: { access: { project: 'params.site_key' } },
      schema: { ...ADMIN, params: SiteKeyParams, response: { 200: CategoriesResponse, ...adminErrors } },
    },
    async (req) => admin.courseCategories(deps, req.params.site_key),
  );

  app.put(
    '/api/admin/projects/:site_key/course-categories',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Replace the course-category table',
        params: SiteKeyParams,
        body: CategoriesBody,
        response: { 200: CategoriesResponse, ...adminErrors },
      },
    },
    async (req) => admin.setCourseCategories(deps, auditActor(req), req.params.site_key, req.body.categories),
  );

  app.get(
    '/api/admin/projects/:site_key/paid-lists',
    {
      config: { access: { project: 'params.site_key' } },
      schema: { ...ADMIN, params: SiteKeyParams, response: { 200: PaidListsResponse, ...adminErrors } },
    },
    async (req) => admin.paidLists(deps, req.params.site_key),
  );

  app.put(
    '/api/admin/projects/:site_key/paid-lists',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Set the address book of paid orders per cart type',
        params: SiteKeyParams,
        body: PaidListsBody,
        response: { 200: PaidListsResponse, ...adminErrors },
      },
    },
    async (req) => admin.setPaidLists(deps, auditActor(req), req.params.site_key, req.body.lists),
  );

  app.put(
    '/api/admin/projects/:site_key/cart-chains',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Per cart type, a sequence replacing the default 1 h/1 d/3 d chain (null restores the default)',
        params: SiteKeyParams,
        body: CartChainsBody,
        response: {
          200: Type.Object({ ok: Ok, site_key: Type.String(), chains: IntMap }),
          ...errors(400, 401, 403, 404, 413, 415, 422, 500),
          ...errors(409),
        },
      },
    },
    async (req) =>
      automation.setCartChains(deps, auditActor(req), req.params.site_key, req.body.chains, req.body.confirm),
  );
};
