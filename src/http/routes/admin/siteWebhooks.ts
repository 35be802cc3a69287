// Admin API: a project's webhook endpoints, their deliveries and re-sends (SPEC §13).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errors } from '../../../schemas/common.js';
import { SiteKeyParams } from '../../../schemas/admin.js';
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeliveriesQuery,
  DeliveryList,
  DeliveryParams,
  PatchWebhookBody,
  ResendAnswer,
  WebhookAnswer,
  WebhookList,
  WebhookParams,
} from '../../../schemas/siteWebhooks.js';
import type { Deps } from '../../../services/context.js';
import * as webhooks from '../../../services/siteWebhooks/endpoints.js';
import { auditActor } from '../../plugins/access.js';
import { ADMIN, adminErrors } from '../schemaParts.js';

const base = '/api/admin/projects/:site_key/webhooks';

export const siteWebhooksAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    base,
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Add a webhook endpoint; its signing secret is in this answer only',
        params: SiteKeyParams,
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, ...adminErrors },
      },
    },
    async (req, reply) => {
      reply.code(201);
      return webhooks.createWebhook(deps, auditActor(req), req.params.site_key, req.body);
    },
  );

  app.get(
    base,
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        ...ADMIN,
        summary: "The project's webhook endpoints (never their secrets), disabled ones with the reason",
        params: SiteKeyParams,
        response: { 200: WebhookList, ...adminErrors },
      },
    },
    async (req) => webhooks.listWebhooks(deps, req.params.site_key),
  );

  app.patch(
    `${base}/:id`,
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Change the URL, kinds or description; `enabled: true` turns a disabled endpoint back on',
        params: WebhookParams,
        body: PatchWebhookBody,
        response: { 200: WebhookAnswer, ...adminErrors },
      },
    },
    async (req) => webhooks.changeWebhook(deps, auditActor(req), req.params.site_key, req.params.id, req.body),
  );

  app.delete(
    `${base}/:id`,
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Remove an endpoint with its deliveries',
        params: WebhookParams,
        response: { 200: Type.Object({ ok: Type.Literal(true) }), ...adminErrors },
      },
    },
    async (req) => webhooks.removeWebhook(deps, auditActor(req), req.params.site_key, req.params.id),
  );

  app.get(
    `${base}/:id/deliveries`,
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        ...ADMIN,
        summary: "An endpoint's deliveries, newest first, each with every attempt",
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryList, ...adminErrors },
      },
    },
    async (req) => webhooks.webhookDeliveries(deps, req.params.site_key, req.params.id, req.query),
  );

  app.post(
    `${base}/:id/deliveries/:delivery_id/resend`,
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Send a delivery again now, with the same webhook-id',
        params: DeliveryParams,
        response: { 200: ResendAnswer, ...errors(401, 403, 404, 409, 422, 500) },
      },
    },
    async (req) => webhooks.resend(deps, auditActor(req), req.params.site_key, req.params.id, req.params.delivery_id),
  );
};
