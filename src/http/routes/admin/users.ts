// Accounts (SPEC §14): create, list, change and disable; owners only.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as accounts from '../../../services/accounts.js';
import { unlockUser } from '../../../services/loginThrottle.js';
import { auditActor } from '../../plugins/access.js';
import { CreateUserBody, PatchUserBody, UserView } from '../../../schemas/accounts.js';
import { IdParams, Ok } from '../../../schemas/admin.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { ADMIN, adminErrorsWithConflict } from '../schemaParts.js';

export const usersAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/admin/users',
    {
      config: { access: { owner: true, write: true } },
      schema: {
        ...ADMIN,
        summary: 'Create an administrator account (owners only)',
        body: CreateUserBody,
        response: { 201: Type.Object({ ok: Ok, user: UserView }), ...adminErrorsWithConflict },
      },
    },
    async (req, reply) => {
      const user = await accounts.createUser(deps, auditActor(req), req.body);
      reply.code(201);
      return { ok: true as const, user };
    },
  );

  app.get(
    '/api/admin/users',
    {
      config: { access: { owner: true } },
      schema: {
        ...ADMIN,
        summary: 'Administrator accounts (owners only)',
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(UserView) }), ...adminErrorsWithConflict },
      },
    },
    async () => accounts.users(deps),
  );

  app.patch(
    '/api/admin/users/:id',
    {
      config: { access: { owner: true, write: true } },
      schema: {
        ...ADMIN,
        summary: "Change an account's name, e-mail, password, role or projects (owners only)",
        params: IdParams,
        body: PatchUserBody,
        response: { 200: Type.Object({ ok: Ok, user: UserView }), ...adminErrorsWithConflict },
      },
    },
    async (req) => ({
      ok: true as const,
      user: await accounts.changeUser(deps, auditActor(req), req.params.id, req.body),
    }),
  );

  app.post(
    '/api/admin/users/:id/disable',
    {
      config: { access: { owner: true, write: true } },
      schema: {
        ...ADMIN,
        summary: 'Disable an account: its sessions and tokens stop at the next request (owners only)',
        params: IdParams,
        response: { 200: Type.Object({ ok: Ok, user: UserView }), ...adminErrorsWithConflict },
      },
    },
    async (req) => ({
      ok: true as const,
      user: await accounts.changeUser(deps, auditActor(req), req.params.id, { status: 'disabled' }),
    }),
  );

  app.post(
    '/api/admin/users/:id/unlock',
    {
      config: { access: { owner: true, write: true } },
      schema: {
        ...ADMIN,
        summary:
          'Unlock an account that failed logins locked: its failures are forgotten (owners only; a lock also ends by itself within 15 minutes)',
        params: IdParams,
        response: {
          200: Type.Object({ ok: Ok, id: Type.Integer(), email: Type.String(), failures_forgotten: Type.Integer() }),
          ...adminErrorsWithConflict,
        },
      },
    },
    async (req) => unlockUser(deps, auditActor(req), req.params.id),
  );
};
