// Process wiring for `serve` and `worker`: open and migrate the database, build the app, start the
// delivery worker, and shut everything down in order on SIGTERM/SIGINT (stop taking requests, let the
// worker finish in-flight sends, close the transport and the database).
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type { Config, Role } from './config.js';
import { openDatabase } from './db/index.js';
import { migrateToLatest } from './db/migrate.js';
import { createTransportFromConfig, type Transport } from './delivery/transports.js';
import { createWorker, waitForEmailOutcome, type Worker } from './delivery/worker.js';
import { createRateCap } from './delivery/rateCap.js';
import { DeliveryRouter } from './delivery/router.js';
import { secretBox } from './services/secrets.js';
import { createWebhookWorker, type WebhookWorker } from './workers/siteWebhooks.js';
import { createErasureWorker } from './workers/erasure.js';
import type { Resolver } from './services/siteWebhooks/send.js';
import { warmRenderPool } from './delivery/renderPool.js';
import { buildApp, buildOpsApp, configureRendering, LOG_REDACT, LOG_SERIALIZERS } from './http/app.js';
import { installationSecret } from './services/secrets.js';
import { purgeExpired } from './delivery/retention.js';
import { createTrackingWorker } from './workers/tracking.js';
import { purgeTrackingHits } from './repos/trackingHits.js';
import { expireAllLeases } from './repos/outbox.js';
import { expireWebhookLeases } from './repos/siteWebhooks.js';
import { systemClock, type Clock, type DeliveryHooks, type Deps } from './services/context.js';
import { createRateLimiter } from './services/rateLimiter.js';
import { Metrics } from './metrics.js';
import { onRedisState } from './redis.js';
import { prettyStdout } from './logFormat.js';
import { needsSetup, SETUP_CODE_TTL_MS, SetupCode } from './services/setup.js';
import { startBounceListener, type BounceListener } from './reports/listener.js';
import { bounceContext, recordReport } from './services/reports.js';

export interface Running {
  app: FastifyInstance | null;
  /** The VERP listener, when this process runs it. */
  bounces: BounceListener | null;
  worker: Worker | null;
  webhookWorker: WebhookWorker | null;
  deps: Deps;
  stop(): Promise<void>;
}

export interface StartOptions {
  role?: Role;
  clock?: Clock;
  transport?: Transport;
  logger?: pino.Logger;
  /** Resolves webhook hosts (tests: there is no outside DNS). */
  resolveHost?: Resolver;
  /** Listen (serve) or only build (tests that inject). */
  listen?: boolean;
}

export async function start(config: Config, opts: StartOptions = {}): Promise<Running> {
  const role = opts.role ?? config.role;
  const log =
    opts.logger ??
    pino(
      { level: config.logLevel, redact: LOG_REDACT, serializers: LOG_SERIALIZERS },
      process.stdout.isTTY ? prettyStdout : undefined,
    );
  const db = await openDatabase(config.databaseUrl);
  await migrateToLatest(db);
  const clock = opts.clock ?? systemClock;
  const base: Deps = { db, config, clock };
  const secret = await installationSecret(base);

  const metrics = new Metrics();
  configureRendering({ ...base, metrics }, log);
  // A worker renders every e-mail: its render threads start now, beside the rest of the start-up. An
  // `api` process renders only an administrator's previews and template saves, which may never come:
  // its threads start with the first of them (issue 34: two idle threads were 60 MiB of resident memory).
  if (role === 'all' || role === 'worker') void warmRenderPool();
  let worker: Worker | null = null;
  let transport: Transport | null = null;
  let router: DeliveryRouter | null = null;
  if ((role === 'all' || role === 'worker') && db.dialect === 'sqlite') {
    // An embedded database has one process at a time: leases still held belong to a process that died
    // (kill -9, power cut). Resume its e-mails now instead of after the lease time.
    const released = (await expireAllLeases(db.db)) + (await expireWebhookLeases(db.db));
    if (released) log.warn({ released }, 'released the leases of a process that stopped without finishing');
  }
  if (role === 'all' || role === 'worker') {
    transport =
      opts.transport ??
      createTransportFromConfig(config, { maxConnections: config.smtpPoolSize, timeoutMs: config.smtpTimeoutMs });
    router = new DeliveryRouter({
      installation: transport,
      box: secretBox(secret),
      clock,
      breaker: config.breaker,
      smtpTimeoutMs: config.smtpTimeoutMs,
      relayConcurrency: config.relayConcurrency,
      rateCap: createRateCap(config.redisUrl),
      onBreaker: (label, state) => {
        metrics.breakerState.set({ transport: label }, state === 'open' ? 1 : state === 'half_open' ? 0.5 : 0);
        log.warn({ transport: label, state }, 'transport circuit breaker changed state');
      },
    });
    worker = createWorker({
      db,
      transport,
      router,
      clock,
      publicUrl: config.publicUrl,
      secret,
      tracking: config.publicUrlSet,
      retry: config.retry,
      bounceDomain: config.bounces.domain,
      relayConcurrency: config.relayConcurrency,
      onRelayWaiting: (relay, waiting) => metrics.relayWaiting.set({ relay }, waiting),
      logger: log.child({ component: 'worker' }),
      onOutcome: (o) => {
        metrics.emails.inc({ kind: o.kind, outcome: o.outcome });
        metrics.sendDuration.observe(o.durationMs / 1000);
        if (o.outcome === 'sent') metrics.sendLag.observe(o.lagMs / 1000);
      },
    });
  }
  const webhookWorker =
    role === 'all' || role === 'worker'
      ? createWebhookWorker({
          db,
          config: config.webhooks,
          secret,
          clock,
          resolve: opts.resolveHost,
          logger: log.child({ component: 'webhooks' }),
        })
      : null;
  // Long erasures (SPEC §18) go on in batches wherever e-mails and webhooks are worked on.
  const erasureWorker =
    role === 'all' || role === 'worker'
      ? createErasureWorker({ db, secret, clock, logger: log.child({ component: 'erasure' }) })
      : null;
  const trackingWorker =
    role === 'all' || role === 'worker'
      ? createTrackingWorker({ db, clock, logger: log.child({ component: 'tracking' }) })
      : null;
  // Without a local worker a request still learns the outcome: another process's worker writes it.
  const delivery: DeliveryHooks = worker
    ? { wake: () => worker.wake(), waitForOutcome: (id, ms) => worker.waitForOutcome(id, ms) }
    : { wake: () => {}, waitForOutcome: (id, ms) => waitForEmailOutcome(db, id, ms) };
  // Counted per request; said once per outage (onRedisState below).
  const rateLimiter = createRateLimiter(config.redisUrl, clock, () => metrics.rateLimitStoreErrors.inc());
  onRedisState((down, err) => {
    if (down)
      log.warn({ err }, "Redis unavailable: rate limits and caps fall back to this process's own until it is back");
    else log.info('Redis is back: rate limits and caps are shared again');
  });
  const deps: Deps = {
    ...base,
    delivery,
    rateLimiter,
    secret,
    metrics,
    log,
    resolveHost: opts.resolveHost,
    ...(router ? { deliveryRouter: router } : {}),
  };

  // The VERP listener (SPEC §12) runs with the worker, or alone in a `bounces` process.
  let bounces: BounceListener | null = null;
  const b = config.bounces;
  if (role !== 'api' && b.domain && b.smtpPort !== null && opts.listen !== false) {
    const ctx = bounceContext(deps);
    bounces = await startBounceListener({
      host: b.smtpHost,
      port: b.smtpPort,
      domain: b.domain,
      secret,
      maxBytes: b.maxBytes,
      record: (r) => recordReport(ctx, r),
      logger: log.child({ component: 'bounces' }),
    });
    log.info({ host: b.smtpHost, port: bounces.port, domain: b.domain }, 'bounce listener started');
  } else if (role === 'bounces') {
    log.warn('ROLE=bounces needs BOUNCE_DOMAIN and BOUNCE_SMTP_PORT: nothing to do');
  }

  let app: FastifyInstance | null = null;
  let setupCode: string | null = null;
  if (role === 'all' || role === 'api') {
    // First run: no account and no root token. Only this process knows the code it prints.
    if (await needsSetup(deps)) {
      deps.setup = new SetupCode();
      setupCode = deps.setup.issue(clock.now());
    }
    app = await buildApp(deps, { logger: log });
    if (opts.listen !== false) await app.listen({ port: config.port, host: config.host });
  }
  worker?.start();
  webhookWorker?.start();
  erasureWorker?.start();
  trackingWorker?.start();
  let retentionTimer: NodeJS.Timeout | null = null;
  if (worker) {
    const purge = () =>
      purgeExpired(
        db.db,
        {
          eventPayloadDays: config.eventPayloadRetentionDays,
          messageBodyDays: config.messageBodyRetentionDays,
          idempotencyDays: config.idempotencyRetentionDays,
          auditDays: config.auditRetentionDays,
        },
        clock.now(),
      )
        // Hits (truncated IP, User-Agent category) follow the e-mail bodies; the counters stay (SPEC §17).
        .then(async (p) => ({
          ...p,
          trackingHits: await purgeTrackingHits(db.db, clock.now() - config.messageBodyRetentionDays * 86_400_000),
        }))
        .then(
          (p) => log.info(p, 'retention: purged expired data'),
          (err) => log.error({ err }, 'retention purge failed; retried next hour'),
        );
    void purge();
    retentionTimer = setInterval(() => void purge(), 3_600_000);
    retentionTimer.unref();
  }
  // A worker-only process has no API, but its metrics and health should still be scrapeable.
  let opsApp: FastifyInstance | null = null;
  if ((role === 'worker' || role === 'bounces') && config.metricsPort && opts.listen !== false) {
    opsApp = await buildOpsApp(deps, metrics);
    await opsApp.listen({ port: config.metricsPort, host: config.host });
  }
  log.info({ role, database: db.dialect, transport: transport?.kind ?? null, rateLimits: rateLimiter.kind }, 'started');
  if (worker && !config.publicUrlSet)
    log.warn('PUBLIC_URL is not set: opens and clicks are not tracked (links would lead to the listening address)');
  if (app && opts.listen !== false) process.stderr.write(welcome(config, app, setupCode));

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      if (retentionTimer) clearInterval(retentionTimer);
      if (app) await app.close();
      if (opsApp) await opsApp.close();
      if (bounces) await bounces.close();
      if (worker) await worker.stop();
      if (webhookWorker) await webhookWorker.stop();
      if (erasureWorker) await erasureWorker.stop();
      if (trackingWorker) await trackingWorker.stop();
      if (router) await router.close();
      if (transport) await transport.close();
      await rateLimiter.close();
      await db.close();
    })());
  return { app, worker, webhookWorker, bounces, deps, stop };
}

/** The few lines a person starting the service needs: where things are, and the first-run link. */
function welcome(config: Config, app: FastifyInstance, setupCode: string | null): string {
  const address = app.server.address();
  const port = address && typeof address === 'object' ? address.port : config.port;
  // An explicit PUBLIC_URL is where people reach the service; otherwise where it listens.
  const base = config.port === 0 ? `http://${config.host}:${port}` : config.publicUrl;
  const lines = ['', 'edu-gateway is running', `  API   ${base}/api/`, `  UI    ${base}/ui/`, `  Docs  ${base}/docs`];
  if (setupCode) {
    lines.push(
      '',
      `First run: no administrator exists yet. Create the first owner within ${SETUP_CODE_TTL_MS / 60_000} minutes at`,
      `  ${base}/ui/setup?code=${setupCode}`,
      '(the link works once, and only while this process runs; or use: edu-gateway admin create-owner --email E)',
    );
  } else if (!config.adminToken) {
    lines.push('', 'Log in with an administrator account (ADMIN_TOKEN, the root token, is not set).');
  }
  return `${lines.join('\n')}\n\n`;
}
