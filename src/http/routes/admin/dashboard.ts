// The dashboard figures (SPEC §17 cart steps included).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { scopeOf } from '../../plugins/access.js';
import { DashboardQuery, DashboardResponse } from '../../../schemas/adminUi.js';
import { errors } from '../../../schemas/common.js';
import type { Deps } from '../../../services/context.js';
import { dashboard } from '../../../services/dashboard.js';

const tags = ['admin'];

const security = [{ adminToken: [] }];

const errs = errors(401, 403, 404, 409, 422, 500);

export const dashboardAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
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
};
