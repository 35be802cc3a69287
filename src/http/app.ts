// Builds the Fastify application: plugins, the error envelope, and the route groups by area. The
// process wiring (database, worker, signals) is in server.ts so tests can build apps freely.
import { configureRenderPool } from '../delivery/renderPool.js';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { compileRequestValidator } from '../schemas/ajv.js';
import { ErrorEnvelope, withFieldLimits } from '../schemas/common.js';
import type { Deps } from '../services/context.js';
import { checkDeclaredAccess, registerAccess } from './plugins/access.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './plugins/errors.js';
import { registerJsonBody } from './jsonBody.js';
import { lazySerializers } from './lazySerializers.js';
import { registerSessions } from './plugins/session.js';
import { adminRoutes } from './routes/admin/index.js';
import { apiDocumentRoutes } from './routes/api/index.js';
import { gatewayRoutes } from './routes/gateway.js';
import { scopedReadRoutes } from './routes/scoped.js';
import { providerWebhookRoutes } from './routes/providerReports.js';
import { healthRoutes } from './routes/health.js';
import { docsRoutes, metricsRoutes } from './routes/operations.js';
import { Metrics } from '../metrics.js';
import { uiRoutes } from './routes/ui.js';
import { unsubscribeRoutes } from './routes/unsubscribe.js';
import { preferenceRoutes } from './routes/preferences.js';
import { trackingRoutes } from './routes/tracking.js';
import { webhooksDocument } from '../schemas/siteWebhooks.js';
import { installationSecret } from '../services/secrets.js';

export const API_VERSION = '1.0.0';

export interface AppOptions {
  logger?: boolean | object;
  /** Every response serializer compiled at start (a test's check that all compile), not on first use. */
  eagerSerializers?: boolean;
}

/** Never log a key, a token or a session cookie. */
export const LOG_REDACT = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
];

/**
 * A request's URL as the log keeps it: the signed token of an unsubscribe, preference, click or open
 * link is a credential (the preference link changes a person's choices and never expires) or carries the
 * destination, and a setup code is one too, so they never reach a log line.
 */
export function loggedUrl(url: string): string {
  return url.replace(/^\/([upco])\/[^?#]*/, '/$1/[token]').replace(/([?&]code=)[^&#]*/g, '$1[hidden]');
}

/** Fastify's request serializer with the URL masked (pino `serializers`, beside LOG_REDACT). */
export const LOG_SERIALIZERS = {
  req: (req: { method?: string; url?: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
    method: req.method,
    url: loggedUrl(req.url ?? ''),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  }),
};

/**
 * The process's render pool gets this installation's budget (SPEC §20), and each render stopped at it
 * is counted and logged. One pool per process: a second app (or the worker of an `all` process) is the
 * same one.
 */
export function configureRendering(deps: Deps, log: { warn(obj: object, msg: string): void }): void {
  configureRenderPool({
    budgetMs: deps.config.render.budgetMs,
    threads: deps.config.render.threads,
    onBudgetExceeded: (use, projectId) => {
      deps.metrics?.renderBudgetExceeded.inc({ task: use });
      log.warn(
        { task: use, project_id: projectId, budget_ms: deps.config.render.budgetMs },
        'render stopped: the template used more than RENDER_BUDGET_MS of CPU',
      );
    },
  });
}

export async function buildApp(deps: Deps, opts: AppOptions = {}): Promise<FastifyInstance> {
  const logger = opts.logger;
  const app: FastifyInstance = Fastify({
    ...(logger && typeof logger === 'object' && 'child' in logger
      ? { loggerInstance: logger as FastifyBaseLogger }
      : { logger: logger ?? false }),
    bodyLimit: deps.config.bodyLimitBytes,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    // Only behind a proxy that sets X-Forwarded-For; otherwise clients could forge their address.
    trustProxy: deps.config.trustProxy,
    return503OnClosing: true,
    // Malformed HTTP and unreadable URLs get the envelope too (SPEC §1), not Fastify's own body.
    clientErrorHandler,
    frameworkErrors,
    ...(opts.eagerSerializers
      ? {}
      : { schemaController: { compilersFactory: { buildSerializer: lazySerializers() } } }),
  });
  configureRendering(deps, app.log);
  app.setValidatorCompiler(({ schema, httpPart }) => compileRequestValidator(schema, httpPart));
  // Schemas are written with the default limits of `fields`; validation and the OpenAPI document of
  // every route get the configured ones (this hook runs before swagger's, which is registered below).
  app.addHook('onRoute', (route) => {
    if (route.schema) route.schema = withFieldLimits(route.schema, deps.config.fieldLimits);
  });
  app.addHook('onSend', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  // Only JSON bodies are accepted (SPEC §1: anything else is 415).
  app.removeContentTypeParser('text/plain');
  // JSON from bytes: UTF-8, or windows-1251/KOI8-R when declared, at most 32 levels deep (SPEC §10).
  registerJsonBody(app);
  app.addSchema(ErrorEnvelope);
  // Services count and log through deps (e.g. the accept batch's fallbacks): the same registry /metrics
  // serves and the app's logger, unless the process gave its own. The error handler counts too.
  const metrics = (deps.metrics ??= new Metrics());
  registerErrorHandling(app);

  await app.register(swagger, {
    openapi: {
      // 3.1 for the `webhooks` section: what a site's endpoint receives (SPEC §13).
      openapi: '3.1.0',
      info: {
        title: 'Educational messaging gateway',
        version: API_VERSION,
        description:
          'External gateway (/api/scoped/*, version 1: additive changes only), administration and legacy endpoints. Every error has the envelope {"detail": {"ok": false, "error": {"code", "message", ...}}}.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          adminToken: { type: 'http', scheme: 'bearer' },
        },
      },
      webhooks: webhooksDocument(),
      tags: [
        { name: 'gateway', description: 'What a site calls, with its project API key' },
        { name: 'admin', description: 'Administration (admin token)' },
        { name: 'legacy', description: 'Service and legacy endpoints (admin token)' },
        { name: 'operations', description: 'Health and readiness' },
        { name: 'webhooks', description: 'Bounce, complaint and delivery reports from e-mail providers' },
      ],
    },
    refResolver: {
      buildLocalReference: (json, _base, _frag, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });

  // Every admin route must declare who may call it (plugins/access.ts): checked as routes are added.
  checkDeclaredAccess(app);
  // Before any admin route: turns a valid UI session cookie into req.adminSessionRow; then the access
  // hooks turn the session or a bearer token into req.principal and apply each route's declared rule.
  await registerSessions(app, deps);
  registerAccess(app, deps);
  deps.log ??= app.log;
  await app.register(metricsRoutes, { deps, metrics });
  await app.register(healthRoutes, { deps });
  const secret = deps.secret ?? (await installationSecret(deps));
  await app.register(unsubscribeRoutes, { db: deps.db, clock: deps.clock, secret });
  await app.register(preferenceRoutes, { db: deps.db, clock: deps.clock, secret, publicUrl: deps.config.publicUrl });
  await app.register(trackingRoutes, { deps, secret });
  await app.register(gatewayRoutes, { deps });
  await app.register(scopedReadRoutes, { deps });
  await app.register(providerWebhookRoutes, { deps });
  await app.register(adminRoutes, { deps });
  await app.register(apiDocumentRoutes, { deps });

  await app.register(uiRoutes);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(docsRoutes);
  return app;
}

/** Health and metrics only: what a worker-only process serves on METRICS_PORT. */
export async function buildOpsApp(deps: Deps, metrics: Metrics): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, clientErrorHandler, frameworkErrors });
  // The health routes' error responses refer to the envelope schema.
  app.addSchema(ErrorEnvelope);
  registerErrorHandling(app);
  await app.register(metricsRoutes, { deps, metrics });
  await app.register(healthRoutes, { deps });
  return app;
}
