// Admin API of SPEC §18: a project's topics, and a contact's export and erasure.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errors } from '../../schemas/common.js';
import { IdParams, SiteKeyParams } from '../../schemas/admin.js';
import { ErasureView, TopicsBody, TopicsResponse } from '../../schemas/consent.js';
import * as consent from '../../services/consent.js';
import type { Deps } from '../../services/context.js';
import * as erasure from '../../services/erasure.js';
import { auditActor } from '../plugins/access.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const errs = errors(401, 403, 404, 422, 500);

export const consentAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/projects/:site_key/topics',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        tags,
        security,
        summary: "The project's consent topics (SPEC §18)",
        params: SiteKeyParams,
        response: { 200: TopicsResponse, ...errs },
      },
    },
    async (req) => consent.topics(deps, req.params.site_key),
  );

  app.put(
    '/api/admin/projects/:site_key/topics',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        tags,
        security,
        summary: 'Replace the topics; transactional, cart_reminders and newsletters are kept when left out',
        params: SiteKeyParams,
        body: TopicsBody,
        response: { 200: TopicsResponse, ...errs },
      },
    },
    async (req) => consent.replaceProjectTopics(deps, auditActor(req), req.params.site_key, req.body.topics),
  );

  app.get(
    '/api/admin/contacts/:id/export',
    {
      config: { access: { object: { kind: 'contact', id: 'params.id' } } },
      schema: {
        tags,
        security,
        summary:
          'Everything held about the contact as one JSON document (contact, subscriptions, consent, events, e-mails, reports, orders, books), streamed',
        params: IdParams,
        response: { 200: Type.Unknown({ description: 'the JSON document' }), ...errs },
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
        tags,
        security,
        summary:
          'Erase the person: every stored copy of the address, name and fields; in_progress while a long history is erased in the background',
        params: IdParams,
        response: { 200: ErasureView, ...errs },
      },
    },
    async (req) => erasure.eraseContact(deps, auditActor(req), req.params.id),
  );
};
