// Configuration from the environment (SPEC §9). Parsed once, validated at start: a bad value stops the
// process with a message naming the variable instead of surfacing later as a confusing failure.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import dotenv from 'dotenv';
import { retryPolicyFromEnv, type RetryPolicy } from './delivery/smtpErrors.js';
import type { FieldLimits, RateLimit } from './schemas/common.js';

/** `bounces`: only the inbound VERP listener (SPEC §12), for a host that receives the bounce domain's mail. */
export type Role = 'all' | 'api' | 'worker' | 'bounces';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  adminToken: string | null;
  smtpUrl: string | null;
  publicUrl: string;
  /** PUBLIC_URL was given (not the listening address): only then are links and opens tracked. */
  publicUrlSet: boolean;
  redisUrl: string | null;
  /** Secret for unsubscribe tokens; when unset one is generated once and kept in the database. */
  secretKey: string | null;
  /** SECRET_KEY_PREVIOUS: the key before a rotation; links signed under it (tracking) are still honoured. */
  secretKeyPrevious: string | null;
  /** Opens and clicks (SPEC §17). */
  tracking: TrackingConfig;
  bodyLimitBytes: number;
  /** How long a transactional request waits for the first delivery attempt (SPEC §3). */
  sendWaitMs: number;
  idempotencyRetentionDays: number;
  eventPayloadRetentionDays: number;
  messageBodyRetentionDays: number;
  /** How long audit rows are kept (SPEC §14; default one year). */
  auditRetentionDays: number;
  retry: RetryPolicy;
  smtpPoolSize: number;
  /** Connect/greeting timeout of SMTP connections (SMTP_TIMEOUT_MS); a relay slower than this fails over. */
  smtpTimeoutMs: number;
  /** Circuit breaker per transport: failures in a row that open it, and how long it stays open. */
  breaker: { failures: number; cooldownMs: number };
  /** Issue 34 (i34-relay): RELAY_CONCURRENCY, sends (connections) at once per relay per worker. */
  relayConcurrency: number;
  /** Trust X-Forwarded-For from a reverse proxy (client addresses for login limits and logs). */
  trustProxy: boolean;
  /** Port of the metrics/health listener of a `worker` process (none when unset). */
  metricsPort: number | null;
  role: Role;
  logLevel: string;
  /** Default per-key limit when a key has none of its own (SPEC §7). */
  rateLimit: RateLimit;
  /** Limits of a request's `fields` (SPEC §7), applied to the schemas by the app and the gateway's checks. */
  fieldLimits: FieldLimits;
  bounces: BounceConfig;
  /** Webhooks back to the sites (SPEC §13). */
  webhooks: WebhookConfig;
  /** Templates in a budget (SPEC §20; issue 34, part i34-render). */
  render: RenderConfig;
  /** Tenants apart (issue 35, SPEC §21). */
  tenants: TenantsConfig;
}

// Issue 34, part i34-render: templates render in a pool of threads within a CPU budget, and previews
// and test sends are limited per account.
export interface RenderConfig {
  /** RENDER_BUDGET_MS: CPU one render may use before it is stopped (template_too_heavy, render_budget). */
  budgetMs: number;
  /** RENDER_THREADS: threads of the render pool; 0 (default) = the cores this process may use. */
  threads: number;
  /** PREVIEW_RATE_PER_MINUTE, PREVIEW_RATE_BURST: previews and test sends per account (429 beyond). */
  previewRate: RateLimit;
}

/** Issue 35 (tenants apart). */
export interface TenantsConfig {
  /**
   * RELAYS_ALLOW_PRIVATE: every project's relay URLs may name loopback, private and link-local addresses
   * (tests, development, closed networks); otherwise only projects an owner allowed (allow_private_relays).
   */
  relaysAllowPrivate: boolean;
  /** DNS_SERVERS: the servers the sender-domain TXT lookups ask (host or host:port, comma-separated); empty: the system's. */
  dnsServers: string[];
}

export interface WebhookConfig {
  /** WEBHOOKS_ALLOW_PRIVATE: loopback and private addresses allowed (tests, closed networks). */
  allowPrivate: boolean;
  /** WEBHOOK_BACKOFF_BASE_MS: the first retry delay, doubled each time. */
  backoffBaseMs: number;
  /** WEBHOOK_TIMEOUT_MS: bound on one attempt, connect to last byte. */
  timeoutMs: number;
}

/** Opens, clicks and attribution (SPEC §17). */
export interface TrackingConfig {
  /** TRACKING_MIN_DELAY_MS: a hit sooner than this after sending is a machine's (scanners, prefetch). */
  minDelayMs: number;
  /** ATTRIBUTION_WINDOW_DAYS: a purchase this long after a human click is attributed to that e-mail. */
  attributionWindowDays: number;
  /** TRACKING_FLUSH_MS: how long hits gather in memory before one INSERT writes them (the loss bound). */
  flushMs: number;
}

/** Bounces and complaints (SPEC §12). */
export interface BounceConfig {
  /** BOUNCE_DOMAIN: envelope senders become signed `b-<id>-<sig>@` addresses of it (VERP); null: off. */
  domain: string | null;
  /** BOUNCE_SMTP_PORT: where the worker role listens for the domain's mail; null: no listener. */
  smtpPort: number | null;
  smtpHost: string;
  /** BOUNCE_MAX_BYTES: the largest inbound message taken (bounces quote the original: 1 MiB). */
  maxBytes: number;
  /** SOFT_BOUNCE_LIMIT soft-bounced e-mails within SOFT_BOUNCE_WINDOW_DAYS make the contact invalid. */
  softBounceLimit: number;
  softBounceWindowDays: number;
}

export class ConfigError extends Error {}

/** The process environment, with a .env file of the working directory read into it first (the CLI's default). */
function processEnv(): NodeJS.ProcessEnv {
  if (existsSync('.env')) dotenv.config({ quiet: true });
  return process.env;
}

function int(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string): boolean {
  const v = (env[name] ?? '').trim().toLowerCase();
  if (!['', 'true', 'false', '1', '0'].includes(v))
    throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
  return v === 'true' || v === '1';
}

function url(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL: "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

export function defaultSqliteUrl(): string {
  return `sqlite:${resolve('data', 'gateway.db')}`;
}

/** Reads and checks the whole configuration once; nothing else reads the environment. */
export function loadConfig(env: NodeJS.ProcessEnv = processEnv()): Config {
  const fieldLimits = {
    maxMembers: int(env, 'FIELDS_MAX_MEMBERS', 100, 1, 10_000),
    maxString: int(env, 'FIELDS_MAX_STRING', 10_000, 1, 10_000_000),
  };
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST?.trim() || '127.0.0.1';

  let databaseUrl = env.DATABASE_URL?.trim() || defaultSqliteUrl();
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must start with sqlite: or postgres://, got "${databaseUrl}"`);
  }
  if (databaseUrl === 'sqlite:') databaseUrl = defaultSqliteUrl();

  const adminToken = env.ADMIN_TOKEN?.trim() || null;
  if (adminToken !== null && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN must be at least 16 characters long');
  }
  const publicUrl = url(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://${host}:${port}`;
  const role = (env.ROLE?.trim() || 'all') as Role;
  if (!['all', 'api', 'worker', 'bounces'].includes(role))
    throw new ConfigError(`ROLE must be all, api, worker or bounces, got "${role}"`);
  const bounceDomain = env.BOUNCE_DOMAIN?.trim().toLowerCase() || null;
  if (
    bounceDomain !== null &&
    !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/.test(bounceDomain)
  )
    throw new ConfigError(
      `BOUNCE_DOMAIN must be a domain name such as bounces.example.org, got "${env.BOUNCE_DOMAIN}"`,
    );

  return {
    port,
    host,
    databaseUrl,
    adminToken,
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    publicUrl: publicUrl.replace(/\/+$/, ''),
    publicUrlSet: !!env.PUBLIC_URL?.trim(),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    secretKey: env.SECRET_KEY?.trim() || null,
    secretKeyPrevious: env.SECRET_KEY_PREVIOUS?.trim() || null,
    tracking: {
      minDelayMs: int(env, 'TRACKING_MIN_DELAY_MS', 10_000, 0, 86_400_000),
      attributionWindowDays: int(env, 'ATTRIBUTION_WINDOW_DAYS', 7, 1, 365),
      flushMs: int(env, 'TRACKING_FLUSH_MS', 200, 1, 10_000),
    },
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 64 * 1024, 1024, 16 * 1024 * 1024),
    sendWaitMs: int(env, 'SEND_WAIT_MS', 2000, 0, 30000),
    idempotencyRetentionDays: int(env, 'IDEMPOTENCY_RETENTION_DAYS', 7, 1, 3650),
    eventPayloadRetentionDays: int(env, 'EVENT_PAYLOAD_RETENTION_DAYS', 90, 1, 36500),
    messageBodyRetentionDays: int(env, 'MESSAGE_BODY_RETENTION_DAYS', 30, 1, 36500),
    auditRetentionDays: int(env, 'AUDIT_RETENTION_DAYS', 365, 1, 36500),
    retry: (() => {
      try {
        return retryPolicyFromEnv(env);
      } catch (e) {
        throw new ConfigError((e as Error).message);
      }
    })(),
    smtpPoolSize: int(env, 'SMTP_POOL_SIZE', 5, 1, 100),
    smtpTimeoutMs: int(env, 'SMTP_TIMEOUT_MS', 30_000, 100, 600_000),
    breaker: {
      failures: int(env, 'BREAKER_FAILURES', 5, 1, 1000),
      cooldownMs: int(env, 'BREAKER_COOLDOWN_MS', 60_000, 100, 86_400_000),
    },
    // Issue 34 (i34-relay): a slow relay holds only its own slots.
    relayConcurrency: int(env, 'RELAY_CONCURRENCY', 5, 1, 100),
    trustProxy: bool(env, 'TRUST_PROXY'),
    metricsPort: env.METRICS_PORT ? int(env, 'METRICS_PORT', 0, 1, 65535) : null,
    role,
    logLevel: env.LOG_LEVEL?.trim() || 'info',
    rateLimit: {
      per_second: int(env, 'RATE_LIMIT_PER_SECOND', 50, 1, 1_000_000),
      burst: int(env, 'RATE_LIMIT_BURST', 100, 1, 10_000_000),
    },
    fieldLimits,
    bounces: {
      domain: bounceDomain,
      smtpPort: env.BOUNCE_SMTP_PORT?.trim() ? int(env, 'BOUNCE_SMTP_PORT', 0, 0, 65535) : null,
      smtpHost: env.BOUNCE_SMTP_HOST?.trim() || '127.0.0.1',
      maxBytes: int(env, 'BOUNCE_MAX_BYTES', 1024 * 1024, 10 * 1024, 50 * 1024 * 1024),
      softBounceLimit: int(env, 'SOFT_BOUNCE_LIMIT', 3, 1, 1000),
      softBounceWindowDays: int(env, 'SOFT_BOUNCE_WINDOW_DAYS', 7, 1, 365),
    },
    webhooks: {
      allowPrivate: bool(env, 'WEBHOOKS_ALLOW_PRIVATE'),
      backoffBaseMs: int(env, 'WEBHOOK_BACKOFF_BASE_MS', 30_000, 1, 3_600_000),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    },
    // Issue 34, part i34-render.
    render: {
      budgetMs: int(env, 'RENDER_BUDGET_MS', 500, 10, 600_000),
      threads: int(env, 'RENDER_THREADS', 0, 0, 256),
      previewRate: {
        per_second: int(env, 'PREVIEW_RATE_PER_MINUTE', 60, 1, 600_000) / 60,
        burst: int(env, 'PREVIEW_RATE_BURST', 20, 1, 100_000),
      },
    },
    // Issue 35 (tenants apart)
    tenants: {
      relaysAllowPrivate: bool(env, 'RELAYS_ALLOW_PRIVATE'),
      dnsServers: (env.DNS_SERVERS ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    },
  };
}
