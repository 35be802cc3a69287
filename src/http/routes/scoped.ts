// Scoped reads (SPEC §13): a site reads back its own e-mails and chronology with any active key. Every
// query is filtered by the key's project, so another project's id answers 404 like an absent one.
// Reads are not chronology events: logging them would flood the chronology and make it read itself.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { notFound } from '../../errors.js';
import { errors, PAGE_SIZE } from '../../schemas/common.js';
import {
  ScopedEmailParams,
  ScopedEmailResponse,
  ScopedEmailsQuery,
  ScopedEmailsResponse,
  ScopedEventsQuery,
  ScopedEventsResponse,
} from '../../schemas/scoped.js';
import { findScopedEmail, listScopedEmails } from '../../repos/emails.js';
import { listEvents } from '../../repos/events.js';
import { decodeCursor, encodeCursor } from '../../repos/types.js';
import type { Deps } from '../../services/context.js';
import { gatewayAuth, refuseHeldRequest } from '../plugins/auth.js';

const security = [{ apiKey: [] }];
const tags = ['gateway'];
const errs = errors(400, 401, 403, 404, 429, 500);

// This plugin has no chronology hook (the gateway plugin's onError), so reads and their refusals are not logged.
export const scopedReadRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const db = deps.db.db;
  const auth = (endpoint: string) => gatewayAuth(deps, endpoint);
  app.addHook('preValidation', refuseHeldRequest);
  const project = (req: FastifyRequest) => req.gateway!.project.id;
  const cursor = (id: number | null) => (id === null ? null : encodeCursor(id));

  app.get(
    '/api/scoped/emails/:scheduled_email_id',
    {
      onRequest: auth('read-email'),
      schema: {
        tags,
        security,
        summary: "One of the project's e-mails: status, attempts and why it will not go (never its body)",
        params: ScopedEmailParams,
        response: { 200: ScopedEmailResponse, ...errs },
      },
    },
    async (req) => {
      const { scheduled_email_id } = req.params;
      const email = await findScopedEmail(db, project(req), scheduled_email_id, deps.clock.now());
      if (!email) throw notFound('E-mail');
      return { ok: true as const, email };
    },
  );

  app.get(
    '/api/scoped/emails',
    {
      onRequest: auth('read-emails'),
      schema: {
        tags,
        security,
        summary: "The project's e-mails of one order or one idempotency key, newest first",
        querystring: ScopedEmailsQuery,
        response: { 200: ScopedEmailsResponse, ...errs },
      },
    },
    async (req) => {
      const q = req.query;
      const { items, nextId } = await listScopedEmails(
        db,
        {
          projectId: project(req),
          orderId: q.order_id,
          idempotencyKey: q.idempotency_key,
          limit: q.limit ?? PAGE_SIZE,
          cursor: decodeCursor(q.cursor),
        },
        deps.clock.now(),
      );
      return { ok: true as const, items, next_cursor: cursor(nextId) };
    },
  );

  app.get(
    '/api/scoped/events',
    {
      onRequest: auth('read-events'),
      schema: {
        tags,
        security,
        summary: "The project's chronology (accepted and rejected requests), newest first unless order=asc",
        querystring: ScopedEventsQuery,
        response: { 200: ScopedEventsResponse, ...errs },
      },
    },
    async (req) => {
      const q = req.query;
      const { items, nextId } = await listEvents(db, {
        projectId: project(req),
        orderId: q.order_id,
        since: q.since ? Date.parse(q.since) : undefined,
        order: q.order ?? 'desc',
        limit: q.limit ?? PAGE_SIZE,
        cursor: decodeCursor(q.cursor),
      });
      // The admin view less what only an administrator sees (site_key is the caller's, key ids are internal).
      const scoped = items.map(({ site_key: _s, key_id: _k, ...rest }) => rest);
      return { ok: true as const, items: scoped, next_cursor: cursor(nextId) };
    },
  );
};
