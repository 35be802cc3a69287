// The dashboard figures (SPEC §17 cart steps included).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { scopeOf } from '../../plugins/access.js';
import { DashboardQuery, DashboardResponse } from '../../../schemas/adminUi.js';
import type { Deps } from '../../../services/context.js';
import { dashboard } from '../../../services/dashboard.js';
import { ADMIN, adminErrorsWithConflict } from '../schemaParts.js';

export const dashboardAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/dashboard',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        ...ADMIN,
        summary: 'Dashboard figures: events, e-mails, outbox and cart recovery over the last days (UTC)',
        querystring: DashboardQuery,
        response: { 200: DashboardResponse, ...adminErrorsWithConflict },
      },
    },
    async (req) => dashboard(deps, req.query, scopeOf(req)),
  );
};
