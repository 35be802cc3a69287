// Service and legacy endpoints of the API document (SPEC §6), admin token required.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errors } from '../../schemas/common.js';
import {
  ContactUpsertBody,
  ListBody,
  ListIdParams,
  ListMemberBody,
  MemberView,
  Ok,
  SiteBody,
  TemplateBody,
} from '../../schemas/admin.js';
import { Cursor, Limit } from '../../schemas/common.js';
import * as admin from '../../services/admin.js';
import * as contacts from '../../services/contacts.js';
import * as templates from '../../services/templates.js';
import { TemplateSaved } from '../../schemas/templates.js';
import type { Deps } from '../../services/context.js';
import { auditActor } from '../plugins/access.js';

const tags = ['legacy'];
const security = [{ adminToken: [] }];
const errs = errors(400, 401, 403, 404, 413, 415, 422, 500);

export const legacyRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/sites',
    {
      config: { access: { project: 'body.site_key', create: true, write: true } },
      schema: {
        tags,
        security,
        summary: 'Create or update a project',
        body: SiteBody,
        response: {
          200: Type.Object({
            ok: Ok,
            site_key: Type.String(),
            project_id: Type.Integer(),
            created: Type.Boolean(),
            timezone: Type.String(),
            locale: Type.String(),
          }),
          ...errs,
        },
      },
    },
    async (req) => admin.saveSite(deps, auditActor(req), req.body),
  );

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

  app.post(
    '/api/templates',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        tags,
        security,
        summary:
          'Create a template, or save a new version of the one with this name (published unless draft); ' +
          '409 template_impact when recent requests would fail, unless confirm',
        body: TemplateBody,
        response: { 200: TemplateSaved, ...errs, ...errors(409) },
      },
    },
    async (req) => templates.saveTemplate(deps, auditActor(req), req.body),
  );

  app.post(
    '/api/lists',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        tags,
        security,
        summary: 'Create an address book (an existing name returns the existing book)',
        body: ListBody,
        response: {
          200: Type.Object({ ok: Ok, site_key: Type.String(), list_id: Type.Integer(), created: Type.Boolean() }),
          ...errs,
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
        tags,
        security,
        summary: 'Add a contact to an address book',
        params: ListIdParams,
        body: ListMemberBody,
        response: {
          200: Type.Object({ ok: Ok, list_id: Type.Integer(), contact_id: Type.Integer(), added: Type.Boolean() }),
          ...errs,
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
        tags,
        security,
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
          ...errs,
        },
      },
    },
    async (req) => contacts.members(deps, req.params.list_id, req.query),
  );
};
