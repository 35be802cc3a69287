// A project's layouts (SPEC §16): list, get, save, delete.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as layouts from '../../../services/layouts.js';
import { auditActor } from '../../plugins/access.js';
import { Ok, SiteKeyParams } from '../../../schemas/admin.js';
import { errors } from '../../../schemas/common.js';
import { LayoutBody, LayoutList, LayoutParams, LayoutSaved } from '../../../schemas/templates.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { ADMIN, adminErrors } from '../schemaParts.js';

const read = { access: { project: 'params.site_key' } } as const;

const write = { access: { project: 'params.site_key', write: true } } as const;

export const layoutsAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/projects/:site_key/layouts',
    {
      config: read,
      schema: {
        ...ADMIN,
        summary: "The project's layouts",
        params: SiteKeyParams,
        response: { 200: LayoutList, ...adminErrors },
      },
    },
    async (req) => layouts.layouts(deps, req.params.site_key),
  );

  app.get(
    '/api/admin/projects/:site_key/layouts/:name',
    {
      config: read,
      schema: { ...ADMIN, summary: 'One layout', params: LayoutParams, response: { 200: LayoutSaved, ...adminErrors } },
    },
    async (req) => layouts.layout(deps, req.params.site_key, req.params.name),
  );

  app.put(
    '/api/admin/projects/:site_key/layouts/:name',
    {
      config: write,
      schema: {
        ...ADMIN,
        summary:
          'Create or replace a layout; html and text each print {{ content }} exactly once; 409 template_impact ' +
          'when templates in it would newly require members recent requests lacked, unless confirm',
        params: LayoutParams,
        body: LayoutBody,
        response: { 200: LayoutSaved, ...adminErrors, ...errors(409) },
      },
    },
    async (req) => layouts.saveLayout(deps, auditActor(req), req.params.site_key, req.params.name, req.body),
  );

  app.delete(
    '/api/admin/projects/:site_key/layouts/:name',
    {
      config: write,
      schema: {
        ...ADMIN,
        summary: 'Delete a layout; 409 while a published template or the project default uses it',
        params: LayoutParams,
        response: {
          200: Type.Object({ ok: Ok, name: Type.String(), deleted: Type.Literal(true) }),
          ...adminErrors,
          ...errors(409),
        },
      },
    },
    async (req) => layouts.removeLayout(deps, auditActor(req), req.params.site_key, req.params.name),
  );
};
