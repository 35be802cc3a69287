// Each account's own UI sessions (SPEC §14): list and end.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as accounts from '../../../services/accounts.js';
import { auditActor } from '../../plugins/access.js';
import { SessionView } from '../../../schemas/accounts.js';
import { Ok } from '../../../schemas/admin.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { ADMIN, adminErrorsWithConflict } from '../schemaParts.js';

export const sessionsAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/sessions',
    {
      config: { access: { self: true } },
      schema: {
        ...ADMIN,
        summary: 'Your open UI sessions',
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(SessionView) }), ...adminErrorsWithConflict },
      },
    },
    async (req) => accounts.sessions(deps, req.principal!),
  );

  app.delete(
    '/api/admin/sessions/:session_id',
    {
      // Ending another of one's sessions is a change (SPEC §21); logging out is DELETE /api/admin/session.
      config: { access: { self: true, write: true } },
      schema: {
        ...ADMIN,
        summary: 'End one of your UI sessions',
        params: Type.Object({ session_id: Type.String({ pattern: '^[0-9a-f]{16}$' }) }),
        response: { 200: Type.Object({ ok: Ok }), ...adminErrorsWithConflict },
      },
    },
    async (req) => accounts.endOwnSession(deps, req.principal!, auditActor(req), req.params.session_id),
  );
};
