// Admin API: what the e-mails of a template achieved (SPEC §17).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors } from '../../schemas/common.js';
import { TemplateStats, TemplateStatsParams, TemplateStatsQuery } from '../../schemas/admin.js';
import type { Deps } from '../../services/context.js';
import { templateStats } from '../../services/engagement.js';

export const adminEngagementRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/projects/:site_key/templates/:name/stats',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        tags: ['admin'],
        security: [{ adminToken: [] }],
        summary:
          "A template's e-mails sent between since and until: delivered, bounced, complained, opened, clicked (people only) and unsubscribed",
        params: TemplateStatsParams,
        querystring: TemplateStatsQuery,
        response: { 200: TemplateStats, ...errors(401, 403, 404, 422, 500) },
      },
    },
    async (req) => templateStats(deps, req.params.site_key, req.params.name, req.query),
  );
};
