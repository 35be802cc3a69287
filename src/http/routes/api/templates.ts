// The API document's template save (admin token): a new version of a template (SPEC §16).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as templates from '../../../services/templates.js';
import { auditActor } from '../../plugins/access.js';
import { TemplateBody } from '../../../schemas/admin.js';
import { errors } from '../../../schemas/common.js';
import { TemplateSaved } from '../../../schemas/templates.js';
import type { Deps } from '../../../services/context.js';

const tags = ['legacy'];

const security = [{ adminToken: [] }];

const errs = errors(400, 401, 403, 404, 413, 415, 422, 500);

export const templatesApiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/templates',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        tags,
        security,
        summary:
          'Create a template, or save a new version of the one with this name (published unless draft); ' +
          '409 template_impact when recent requests would fail, unless confirm',
        body: TemplateBody,
        response: { 200: TemplateSaved, ...errs, ...errors(409) },
      },
    },
    async (req) => templates.saveTemplate(deps, auditActor(req), req.body),
  );
};
