// Contacts (SPEC §6, §18): list, one contact, status change, export of a person's data, erasure.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as contacts from '../../../services/contacts.js';
import * as erasure from '../../../services/erasure.js';
import { auditActor, scopeOf } from '../../plugins/access.js';
import { ContactStatusBody, IdParams, Ok } from '../../../schemas/admin.js';
import { ContactDetail, ContactItem, ContactsQuery } from '../../../schemas/adminUi.js';
import { errors } from '../../../schemas/common.js';
import { ErasureView } from '../../../schemas/consent.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { ADMIN, adminErrors } from '../schemaParts.js';

export const contactsAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/admin/contacts/:id/status',
    {
      config: { access: { object: { kind: 'contact', id: 'params.id' }, write: true } },
      schema: {
        ...ADMIN,
        summary: "Set a contact's status",
        params: IdParams,
        body: ContactStatusBody,
        response: { 200: Type.Object({ ok: Ok, contact_id: Type.Integer(), status: Type.String() }), ...adminErrors },
      },
    },
    async (req) => contacts.changeStatus(deps, auditActor(req), req.params.id, req.body.status),
  );

  app.get(
    '/api/admin/contacts',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        ...ADMIN,
        summary: 'Find contacts by (part of) their e-mail address, newest first',
        querystring: ContactsQuery,
        response: {
          200: Type.Object({
            ok: Type.Literal(true),
            items: Type.Array(ContactItem),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...errors(401, 403, 404, 409, 422, 500),
        },
      },
    },
    async (req) => contacts.search(deps, req.query, scopeOf(req)),
  );

  app.get(
    '/api/admin/contacts/:id',
    {
      config: { access: { object: { kind: 'contact', id: 'params.id' } } },
      schema: {
        ...ADMIN,
        summary: 'One contact with its address books, and its latest events and e-mails',
        params: IdParams,
        response: { 200: ContactDetail, ...errors(401, 403, 404, 409, 422, 500) },
      },
    },
    async (req) => contacts.contact(deps, req.params.id),
  );

  app.get(
    '/api/admin/contacts/:id/export',
    {
      config: { access: { object: { kind: 'contact', id: 'params.id' } } },
      schema: {
        ...ADMIN,
        summary:
          'Everything held about the contact as one JSON document (contact, subscriptions, consent, events, e-mails, reports, orders, books), streamed',
        params: IdParams,
        response: { 200: Type.Unknown({ description: 'the JSON document' }), ...adminErrors },
      },
    },
    async (req, reply) => {
      const stream = await erasure.exportContact(deps, auditActor(req), req.params.id);
      return reply
        .type('application/json; charset=utf-8')
        .header('content-disposition', `attachment; filename="contact-${req.params.id}.json"`)
        .header('cache-control', 'no-store')
        .send(stream);
    },
  );

  app.post(
    '/api/admin/contacts/:id/erase',
    {
      config: { access: { object: { kind: 'contact', id: 'params.id' }, write: true } },
      schema: {
        ...ADMIN,
        summary:
          'Erase the person: every stored copy of the address, name and fields; in_progress while a long history is erased in the background',
        params: IdParams,
        response: { 200: ErasureView, ...adminErrors },
      },
    },
    async (req) => erasure.eraseContact(deps, auditActor(req), req.params.id),
  );
};
