// Each account's own personal tokens (SPEC §14): create (shown once), list, revoke.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as accounts from '../../../services/accounts.js';
import { auditActor } from '../../plugins/access.js';
import { CreateTokenBody, CreatedToken, TokenView } from '../../../schemas/accounts.js';
import { IdParams, Ok } from '../../../schemas/admin.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { ADMIN, adminErrorsWithConflict } from '../schemaParts.js';

export const tokensAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/admin/tokens',
    {
      // A change like any other (SPEC §21): a viewer or a read-only token may not mint credentials, so a
      // leaked read-only token cannot make itself a longer-lived one.
      config: { access: { self: true, write: true } },
      schema: {
        ...ADMIN,
        summary: 'Create a personal API token for Authorization: Bearer; the token is in this answer only',
        body: CreateTokenBody,
        response: { 201: CreatedToken, ...adminErrorsWithConflict },
      },
    },
    async (req, reply) => {
      const created = await accounts.createToken(deps, req.principal!, auditActor(req), req.body);
      reply.code(201);
      return created;
    },
  );

  app.get(
    '/api/admin/tokens',
    {
      config: { access: { self: true } },
      schema: {
        ...ADMIN,
        summary: 'Your personal tokens (never the token itself)',
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(TokenView) }), ...adminErrorsWithConflict },
      },
    },
    async (req) => accounts.tokens(deps, req.principal!),
  );

  app.post(
    '/api/admin/tokens/:id/revoke',
    {
      // Not to a read-only token (SPEC §21): one leaked could revoke the account's read-write tokens.
      config: { access: { self: true, write: true } },
      schema: {
        ...ADMIN,
        summary: 'Revoke one of your personal tokens; it stops working at the next request',
        params: IdParams,
        response: { 200: Type.Intersect([Type.Object({ ok: Ok }), TokenView]), ...adminErrorsWithConflict },
      },
    },
    async (req) => accounts.revokeOwnToken(deps, req.principal!, auditActor(req), req.params.id),
  );
};
