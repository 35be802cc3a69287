// A project's first-run checklist (issue 28): project, template, routing, key, delivery, test e-mail,
// each ticked from the project's real state.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SiteKeyParams } from '../../../schemas/admin.js';
import { ChecklistResponse } from '../../../schemas/adminUi.js';
import { checklist } from '../../../services/checklist.js';
import type { Deps } from '../../../services/context.js';
import { ADMIN, adminErrorsWithConflict } from '../schemaParts.js';

export const checklistAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/projects/:site_key/checklist',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        ...ADMIN,
        summary: 'First-run steps (project, template, routing, key, delivery, test e-mail), each done or not',
        params: SiteKeyParams,
        response: { 200: ChecklistResponse, ...adminErrorsWithConflict },
      },
    },
    async (req) => checklist(deps, req.params.site_key),
  );
};
