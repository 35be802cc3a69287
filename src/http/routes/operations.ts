// Operations: Prometheus metrics and the rendered API documentation.
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { Metrics } from '../../metrics.js';
import { outboxBacklog } from '../../repos/campaigns.js';
import { describe } from '../../services/accept/accept.js';
import type { Deps } from '../../services/context.js';

// Not encapsulated: the response hook must see every route of the app.
const metricsPlugin: FastifyPluginAsyncTypebox<{ deps: Deps; metrics: Metrics }> = async (app, { deps, metrics }) => {
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const status = String(reply.statusCode);
    metrics.httpRequests.inc({ method: req.method, route, status });
    metrics.httpDuration.observe({ route }, reply.elapsedTime / 1000);
    if (req.gateway && req.gateway.endpoint !== 'catalog') {
      const type = metrics.eventType(describe(req.gateway.endpoint, req.body).event_type);
      metrics.events.inc({ event_type: type, outcome: reply.statusCode < 300 ? 'accepted' : 'rejected' });
    }
  });

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    // Outbox figures are read at scrape time: the database is the truth shared by every process.
    try {
      const b = await outboxBacklog(deps.db.db, deps.clock.now());
      metrics.outboxDue.set(b.due);
      metrics.outboxOldest.set(b.oldest_due_age_seconds);
    } catch {
      // An unreachable database shows in /readyz; the rest of the metrics are still worth serving.
    }
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
};
export const metricsRoutes = fp(metricsPlugin);

export const docsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Served from the package's own files: no CDN, works offline.
  // Swagger UI sets some styles inline, hence 'unsafe-inline' for styles only; scripts stay 'self'.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true, validatorUrl: null },
    staticCSP:
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  });
};
