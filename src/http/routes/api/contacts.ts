// The API document's contact upsert (admin token).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as contacts from '../../../services/contacts.js';
import { auditActor } from '../../plugins/access.js';
import { ContactUpsertBody, Ok } from '../../../schemas/admin.js';
import { errors } from '../../../schemas/common.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';

const tags = ['legacy'];

const security = [{ adminToken: [] }];

const errs = errors(400, 401, 403, 404, 413, 415, 422, 500);

export const contactsApiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/contacts/upsert',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        tags,
        security,
        summary: 'Create or update a contact',
        body: ContactUpsertBody,
        response: {
          200: Type.Object({ ok: Ok, site_key: Type.String(), contact_id: Type.Integer(), status: Type.String() }),
          ...errs,
        },
      },
    },
    async (req) => contacts.saveContact(deps, auditActor(req), req.body),
  );
};
