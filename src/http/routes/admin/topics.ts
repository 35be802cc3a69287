// A project's consent topics (SPEC §18).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as consent from '../../../services/consent.js';
import { auditActor } from '../../plugins/access.js';
import { SiteKeyParams } from '../../../schemas/admin.js';
import { TopicsBody, TopicsResponse } from '../../../schemas/consent.js';
import type { Deps } from '../../../services/context.js';
import { ADMIN, adminErrors } from '../schemaParts.js';

export const topicsAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/projects/:site_key/topics',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        ...ADMIN,
        summary: "The project's consent topics (SPEC §18)",
        params: SiteKeyParams,
        response: { 200: TopicsResponse, ...adminErrors },
      },
    },
    async (req) => consent.topics(deps, req.params.site_key),
  );

  app.put(
    '/api/admin/projects/:site_key/topics',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Replace the topics; transactional, cart_reminders and newsletters are kept when left out',
        params: SiteKeyParams,
        body: TopicsBody,
        response: { 200: TopicsResponse, ...adminErrors },
      },
    },
    async (req) => consent.replaceProjectTopics(deps, auditActor(req), req.params.site_key, req.body.topics),
  );
};
