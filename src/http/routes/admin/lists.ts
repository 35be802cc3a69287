// A project's address-book lists and sequences, as the admin UI shows them.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as admin from '../../../services/admin.js';
import { ListView, Ok, SiteKeyParams } from '../../../schemas/admin.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { ADMIN, adminErrors } from '../schemaParts.js';

export const listsAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/projects/:site_key/lists',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        ...ADMIN,
        params: SiteKeyParams,
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(ListView) }), ...adminErrors },
      },
    },
    async (req) => admin.lists(deps, req.params.site_key),
  );

  app.get(
    '/api/admin/projects/:site_key/sequences',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        ...ADMIN,
        params: SiteKeyParams,
        response: {
          200: Type.Object({
            ok: Ok,
            items: Type.Array(
              Type.Object({
                sequence_id: Type.Integer(),
                name: Type.String(),
                steps: Type.Array(Type.Object({ template_id: Type.Integer(), delay_minutes: Type.Integer() })),
              }),
            ),
            cart_chains: Type.Record(Type.String(), Type.Integer()),
          }),
          ...adminErrors,
        },
      },
    },
    async (req) => admin.sequences(deps, req.params.site_key),
  );
};
