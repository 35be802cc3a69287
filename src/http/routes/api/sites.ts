// The API document's site (project) creation (admin token).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as admin from '../../../services/admin.js';
import { auditActor } from '../../plugins/access.js';
import { isOwner } from '../../../domain/access.js';
import { Ok, SiteBody } from '../../../schemas/admin.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { LEGACY, legacyErrors } from '../schemaParts.js';

export const sitesApiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/sites',
    {
      config: { access: { project: 'body.site_key', create: true, write: true } },
      schema: {
        ...LEGACY,
        summary: 'Create or update a project',
        body: SiteBody,
        response: {
          200: Type.Object({
            ok: Ok,
            site_key: Type.String(),
            project_id: Type.Integer(),
            created: Type.Boolean(),
            timezone: Type.String(),
            locale: Type.String(),
          }),
          ...legacyErrors,
        },
      },
    },
    async (req) =>
      admin.saveSite(deps, auditActor(req), req.body, { owner: !!req.principal && isOwner(req.principal) }),
  );
};
