// The event chronology (SPEC §5): list, statistics, one event, replay.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as chronology from '../../../services/chronology.js';
import { auditActor, scopeOf } from '../../plugins/access.js';
import { IdParams, Ok, Page } from '../../../schemas/admin.js';
import { EventView, EventsQuery, StatsQuery, StatsResponse } from '../../../schemas/chronology.js';
import { errors } from '../../../schemas/common.js';
import { ReplayAnswer } from '../../../schemas/siteWebhooks.js';
import type { Deps } from '../../../services/context.js';
import { replayEvent } from '../../../services/replay.js';
import { Type } from 'typebox';
import { ADMIN, adminErrors } from '../schemaParts.js';

export const eventsAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/external-events',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        ...ADMIN,
        summary: 'Chronology of incoming API events, newest first (order=asc for the story of one order)',
        querystring: EventsQuery,
        response: { 200: Page(EventView), ...adminErrors },
      },
    },
    async (req) => chronology.events(deps, req.query, scopeOf(req)),
  );

  app.get(
    '/api/admin/external-events/stats',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        ...ADMIN,
        summary: 'Statistics of incoming API events',
        querystring: StatsQuery,
        response: { 200: StatsResponse, ...adminErrors },
      },
    },
    async (req) => chronology.statistics(deps, req.query, scopeOf(req)),
  );

  app.get(
    '/api/admin/external-events/:id',
    {
      config: { access: { object: { kind: 'event', id: 'params.id' } } },
      schema: {
        ...ADMIN,
        params: IdParams,
        response: { 200: Type.Object({ ok: Ok, event: EventView }), ...adminErrors },
      },
    },
    async (req) => chronology.event(deps, req.params.id),
  );

  app.post(
    '/api/admin/external-events/:id/replay',
    {
      config: { access: { object: { kind: 'event', id: 'params.id' }, write: true } },
      schema: {
        ...ADMIN,
        summary: 'Run a refused or template-less event again as a new event linked to it (replay_of)',
        description:
          "With the original key's rights as they are now and under its idempotency key: what was already sent is not sent again. 409 for an event that cannot be replayed or was already.",
        params: IdParams,
        response: { 200: ReplayAnswer, ...errors(401, 403, 404, 409, 422, 500) },
      },
    },
    async (req) => replayEvent(deps, auditActor(req), req.params.id),
  );
};
