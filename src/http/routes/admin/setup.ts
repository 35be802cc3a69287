// First-run setup (SPEC §14): the one-time link creates the first owner.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SetupBody, UserView } from '../../../schemas/accounts.js';
import { Ok } from '../../../schemas/admin.js';
import { errors } from '../../../schemas/common.js';
import type { Deps } from '../../../services/context.js';
import { completeSetup } from '../../../services/setup.js';
import { Type } from 'typebox';

const tags = ['admin'];

const errs = errors(401, 403, 404, 409, 422, 500);

export const setupAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/admin/setup',
    {
      config: { access: { public: true } },
      schema: {
        tags,
        summary: "First run: create the first owner with the setup link's code printed on the console",
        body: SetupBody,
        response: { 201: Type.Object({ ok: Ok, user: UserView }), ...errs },
      },
    },
    async (req, reply) => {
      const user = await completeSetup(deps, req.ip, req.body);
      reply.code(201);
      return { ok: true as const, user };
    },
  );
};
