// Projects (SPEC §2, §6): list, change settings, resume paused marketing.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as admin from '../../../services/admin.js';
import { auditActor, requireOwner, scopeOf } from '../../plugins/access.js';
import { isOwner } from '../../../domain/access.js';
import { Ok, ProjectPatchBody, ProjectView, SiteKeyParams } from '../../../schemas/admin.js';
import { errors } from '../../../schemas/common.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { ADMIN, adminErrors } from '../schemaParts.js';

export const projectsAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/projects',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        ...ADMIN,
        summary: 'All projects',
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(ProjectView) }), ...adminErrors },
      },
    },
    async (req) => admin.projects(deps, scopeOf(req)),
  );

  app.patch(
    '/api/admin/projects/:site_key',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary:
          "Change a project's name, sender, time zone, locale or (owners) private webhook addresses; absent members stay as they are",
        params: SiteKeyParams,
        body: ProjectPatchBody,
        response: { 200: Type.Object({ ok: Ok, project: ProjectView }), ...adminErrors, ...errors(409) },
      },
    },
    async (req) => {
      if (req.body.allow_private_webhooks !== undefined) requireOwner(req, 'allow private webhook addresses');
      if (req.body.allow_private_relays !== undefined) requireOwner(req, 'allow private relay addresses');
      return admin.changeProject(deps, auditActor(req), req.params.site_key, req.body, {
        owner: !!req.principal && isOwner(req.principal),
      });
    },
  );

  app.post(
    '/api/admin/projects/:site_key/marketing/resume',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Resume the campaigns and cart chains a complaint rate above 0.3 % paused',
        params: SiteKeyParams,
        response: { 200: Type.Object({ ok: Ok, project: ProjectView }), ...adminErrors },
      },
    },
    async (req) => admin.resumeProjectMarketing(deps, auditActor(req), req.params.site_key),
  );
};
