// A project's own delivery settings (SPEC §11): relay, DKIM, check, test e-mail.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as delivery from '../../../services/delivery.js';
import { auditActor } from '../../plugins/access.js';
import { isOwner } from '../../../domain/access.js';
import { SiteKeyParams } from '../../../schemas/admin.js';
import { DeliveryBody, DeliveryView, TestSendBody, TestSendView, VerifyView } from '../../../schemas/delivery.js';
import type { Deps } from '../../../services/context.js';
import { ADMIN, adminErrors } from '../schemaParts.js';
import { errors } from '../../../schemas/common.js';
import { previewLimit } from '../../plugins/previewLimit.js';

export const deliveryAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.put(
    '/api/admin/projects/:site_key/delivery',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: "Replace the project's delivery settings; a password or DKIM key left out is kept",
        params: SiteKeyParams,
        body: DeliveryBody,
        response: { 200: DeliveryView, ...adminErrors },
      },
    },
    async (req) =>
      delivery.putDelivery(deps, auditActor(req), req.params.site_key, req.body, {
        owner: !!req.principal && isOwner(req.principal),
      }),
  );

  app.get(
    '/api/admin/projects/:site_key/delivery',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        ...ADMIN,
        summary: "The project's delivery settings, every secret masked",
        params: SiteKeyParams,
        response: { 200: DeliveryView, ...adminErrors },
      },
    },
    async (req) => delivery.getDelivery(deps, req.params.site_key),
  );

  app.delete(
    '/api/admin/projects/:site_key/delivery',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: "Back to the installation's SMTP_URL (or the capture transport)",
        params: SiteKeyParams,
        response: { 200: DeliveryView, ...adminErrors },
      },
    },
    async (req) => delivery.deleteDelivery(deps, auditActor(req), req.params.site_key),
  );

  app.post(
    '/api/admin/projects/:site_key/delivery/verify',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Connect, EHLO, STARTTLS and AUTH on each relay; check the DKIM record in DNS',
        params: SiteKeyParams,
        response: { 200: VerifyView, ...adminErrors },
      },
    },
    async (req) => delivery.verifyDelivery(deps, auditActor(req), req.params.site_key),
  );

  app.post(
    '/api/admin/projects/:site_key/delivery/test',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary:
          'Send one test e-mail of a template with sample data; it counts in no statistics; 429 beyond the preview limit',
        params: SiteKeyParams,
        body: TestSendBody,
        response: { 200: TestSendView, ...adminErrors, ...errors(429) },
      },
      preHandler: previewLimit(deps),
    },
    async (req) => delivery.testSend(deps, auditActor(req), req.params.site_key, req.body),
  );
};
