// The API document's template save (admin token): a new version of a template (SPEC §16).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as templates from '../../../services/templates.js';
import { auditActor } from '../../plugins/access.js';
import { TemplateBody } from '../../../schemas/admin.js';
import { errors } from '../../../schemas/common.js';
import { TemplateSaved } from '../../../schemas/templates.js';
import type { Deps } from '../../../services/context.js';
import { LEGACY, legacyErrors } from '../schemaParts.js';

export const templatesApiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/templates',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        ...LEGACY,
        summary:
          'Create a template, or save a new version of the one with this name (published unless draft); ' +
          '409 template_impact when recent requests would fail, unless confirm',
        body: TemplateBody,
        response: { 200: TemplateSaved, ...legacyErrors, ...errors(409) },
      },
    },
    async (req) => templates.saveTemplate(deps, auditActor(req), req.body),
  );
};
