// The API document's address-book lists (admin token).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as contacts from '../../../services/contacts.js';
import { auditActor } from '../../plugins/access.js';
import { ListBody, ListIdParams, ListMemberBody, MemberView, Ok } from '../../../schemas/admin.js';
import { Cursor, Limit } from '../../../schemas/common.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { LEGACY, legacyErrors } from '../schemaParts.js';

export const listsApiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/lists',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        ...LEGACY,
        summary: 'Create an address book (an existing name returns the existing book)',
        body: ListBody,
        response: {
          200: Type.Object({ ok: Ok, site_key: Type.String(), list_id: Type.Integer(), created: Type.Boolean() }),
          ...legacyErrors,
        },
      },
    },
    async (req) => contacts.saveList(deps, auditActor(req), req.body),
  );

  app.post(
    '/api/lists/:list_id/contacts',
    {
      config: { access: { object: { kind: 'list', id: 'params.list_id' }, write: true } },
      schema: {
        ...LEGACY,
        summary: 'Add a contact to an address book',
        params: ListIdParams,
        body: ListMemberBody,
        response: {
          200: Type.Object({ ok: Ok, list_id: Type.Integer(), contact_id: Type.Integer(), added: Type.Boolean() }),
          ...legacyErrors,
        },
      },
    },
    async (req) => contacts.addMember(deps, auditActor(req), req.params.list_id, req.body.contact_id),
  );

  app.get(
    '/api/lists/:list_id/contacts',
    {
      config: { access: { object: { kind: 'list', id: 'params.list_id' } } },
      schema: {
        ...LEGACY,
        summary: 'Contacts of an address book',
        params: ListIdParams,
        querystring: Type.Object({ limit: Limit, cursor: Cursor }),
        response: {
          200: Type.Object({
            ok: Ok,
            list_id: Type.Integer(),
            items: Type.Array(MemberView),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...legacyErrors,
        },
      },
    },
    async (req) => contacts.members(deps, req.params.list_id, req.query),
  );
};
