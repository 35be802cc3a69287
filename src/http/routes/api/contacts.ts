// The API document's contact upsert (admin token).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as contacts from '../../../services/contacts.js';
import { auditActor } from '../../plugins/access.js';
import { ContactUpsertBody, Ok } from '../../../schemas/admin.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { LEGACY, legacyErrors } from '../schemaParts.js';

export const contactsApiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/contacts/upsert',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        ...LEGACY,
        summary: 'Create or update a contact',
        body: ContactUpsertBody,
        response: {
          200: Type.Object({ ok: Ok, site_key: Type.String(), contact_id: Type.Integer(), status: Type.String() }),
          ...legacyErrors,
        },
      },
    },
    async (req) => contacts.saveContact(deps, auditActor(req), req.body),
  );
};
