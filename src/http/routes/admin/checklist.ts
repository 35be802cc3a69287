// A project's first-run checklist (issue 28): project, template, routing, key, delivery, test e-mail,
// each ticked from the project's real state.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SiteKeyParams } from '../../../schemas/admin.js';
import { ChecklistResponse } from '../../../schemas/adminUi.js';
import { errors } from '../../../schemas/common.js';
import { checklist } from '../../../services/checklist.js';
import type { Deps } from '../../../services/context.js';

const tags = ['admin'];

const security = [{ adminToken: [] }];

const errs = errors(401, 403, 404, 409, 422, 500);

export const checklistAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
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
};
