// API keys (SPEC §2): create (secret shown once), list, change rights, disable.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as admin from '../../../services/admin.js';
import { auditActor, scopeOf } from '../../plugins/access.js';
import { CreateKeyBody, CreatedKey, IdParams, KeyView, Ok, UpdateKeyBody } from '../../../schemas/admin.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { ADMIN, adminErrors } from '../schemaParts.js';

export const keysAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/admin/keys',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Create an API key; the full key is in this answer only',
        body: CreateKeyBody,
        response: { 201: CreatedKey, ...adminErrors },
      },
    },
    async (req, reply) => {
      reply.code(201);
      return admin.createApiKey(deps, auditActor(req), req.body);
    },
  );

  app.get(
    '/api/admin/keys',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        ...ADMIN,
        summary: 'List API keys (never the key itself)',
        querystring: Type.Object({ site_key: Type.Optional(Type.String()) }),
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(KeyView) }), ...adminErrors },
      },
    },
    async (req) => admin.apiKeys(deps, req.query.site_key, scopeOf(req)),
  );

  app.patch(
    '/api/admin/keys/:id',
    {
      config: { access: { object: { kind: 'key', id: 'params.id' }, write: true } },
      schema: {
        ...ADMIN,
        summary: "Change a key's name, rights or rate limit",
        params: IdParams,
        body: UpdateKeyBody,
        response: { 200: KeyView, ...adminErrors },
      },
    },
    async (req) => admin.changeApiKey(deps, auditActor(req), req.params.id, req.body),
  );

  app.post(
    '/api/admin/keys/:id/disable',
    {
      config: { access: { object: { kind: 'key', id: 'params.id' }, write: true } },
      schema: {
        ...ADMIN,
        summary: 'Disable a key; it stops working on the next request',
        params: IdParams,
        response: { 200: Type.Object({ id: Type.Integer(), status: Type.Literal('disabled') }), ...adminErrors },
      },
    },
    async (req) => {
      const k = await admin.changeApiKey(deps, auditActor(req), req.params.id, { status: 'disabled' });
      return { id: k.id, status: 'disabled' as const };
    },
  );
};
