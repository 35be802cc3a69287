// The audit log (SPEC §14), secrets redacted.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { siteKeysOf } from '../../../repos/access.js';
import { AuditItem, AuditQuery } from '../../../schemas/accounts.js';
import { Ok } from '../../../schemas/admin.js';
import { auditLog } from '../../../services/audit.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { ADMIN, adminErrorsWithConflict } from '../schemaParts.js';

export const auditAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/audit',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        ...ADMIN,
        summary: 'The audit log, newest first; an administrator of some projects sees only theirs',
        querystring: AuditQuery,
        response: {
          200: Type.Object({
            ok: Ok,
            items: Type.Array(AuditItem),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...adminErrorsWithConflict,
        },
      },
    },
    async (req) => {
      const ids = req.principal!.projectIds;
      return auditLog(deps, req.query, ids === null ? null : await siteKeysOf(deps.db.db, ids));
    },
  );
};
