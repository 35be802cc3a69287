// The API document's campaigns and their statistics (admin token).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as automation from '../../../services/campaigns.js';
import { auditActor } from '../../plugins/access.js';
import { Id, IdParams, Ok } from '../../../schemas/admin.js';
import { SiteKey } from '../../../schemas/common.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { LEGACY, legacyErrors } from '../schemaParts.js';

const CampaignBody = Type.Object(
  {
    site_key: SiteKey,
    template_id: Id,
    list_id: Id,
    send_at: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

const Counts = {
  recipients: Type.Integer(),
  scheduled: Type.Integer(),
  due: Type.Integer(),
  sent: Type.Integer(),
  failed: Type.Integer(),
  suppressed: Type.Integer(),
  cancelled: Type.Integer(),
  unsubscribed: Type.Integer(),
};

export const campaignsApiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/campaigns',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        ...LEGACY,
        summary: 'Send a template to the active contacts of an address book, now or at send_at',
        body: CampaignBody,
        response: {
          200: Type.Object({
            ok: Ok,
            site_key: Type.String(),
            campaign_id: Type.Integer(),
            recipients: Type.Integer(),
            send_at: Type.String(),
          }),
          ...legacyErrors,
        },
      },
    },
    async (req) => automation.createCampaign(deps, auditActor(req), req.body),
  );

  app.get(
    '/api/campaigns/:id/stats',
    {
      config: { access: { object: { kind: 'campaign', id: 'params.id' } } },
      schema: {
        ...LEGACY,
        summary: 'Campaign statistics',
        params: IdParams,
        response: {
          200: Type.Object({
            ok: Ok,
            campaign_id: Type.Integer(),
            site_key: Type.String(),
            template_id: Type.Integer(),
            list_id: Type.Integer(),
            send_at: Type.String(),
            ...Counts,
          }),
          ...legacyErrors,
        },
      },
    },
    async (req) => automation.campaignStats(deps, req.params.id),
  );
};
