import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import type { Project } from '../db/schema.js';
import type { ApiKey } from '../repos/keys.js';
import type { Executor } from '../repos/types.js';
import type { RateLimiter } from './rateLimiter.js';
import type { Metrics } from '../metrics.js';
import type { ConfigSnapshot } from './configCache.js';
import type { WebhookCredentialsLookup } from './providerReports.js';
import type { HttpGet } from '../reports/providers/types.js';
import type { ProviderIdLookup } from '../repos/reports.js';
import type { DeliveryRouter } from '../delivery/router.js';
import type { TxtLookup } from '../delivery/verify.js';
import type { SetupCode } from './setup.js';
import type { Resolver } from './siteWebhooks/send.js';

import type { Clock } from '../delivery/clock.js';
export { systemClock, type Clock } from '../delivery/clock.js';

/** What delivery offers the request path: wake the worker, and wait for an e-mail's first attempt. */
export interface DeliveryHooks {
  wake(): void;
  waitForOutcome(emailId: number, timeoutMs: number): Promise<string | undefined>;
}

/** Where services report what an operator must see (a pino logger fits). */
export interface Logger {
  error(obj: object, msg?: string): void;
}

export interface Deps {
  db: Db;
  config: Config;
  clock: Clock;
  delivery?: DeliveryHooks;
  /** Per-key request limits; absent means unlimited (some tests). `serve` always sets one. */
  rateLimiter?: RateLimiter;
  /** Signs unsubscribe links; the same in every process of an installation. */
  secret?: string;
  metrics?: Metrics;
  /** This process's per-project transports (breaker states for the UI); absent without a local worker. */
  deliveryRouter?: DeliveryRouter;
  /** DNS TXT lookups of the DKIM check (tests inject one; DNS may be unreachable). */
  dnsTxt?: TxtLookup;
  /** The first-run setup code of this process (services/setup.ts), when one was printed. */
  setup?: SetupCode;
  /** Resolves webhook hosts (tests inject one: there is no outside DNS); the system's when absent. */
  resolveHost?: Resolver;
  /** buildApp fills it with the app's logger when absent. */
  log?: Logger;
  /** Provider webhook credentials of a project (SPEC §12); none configured when absent. */
  webhookCredentials?: WebhookCredentialsLookup;
  /** Finds the e-mail a provider knows by its own message id (issue 13's delivery attempts). */
  providerIdLookup?: ProviderIdLookup;
  /** GET for SNS certificates and subscription confirmations; https by default, injected in tests. */
  httpGet?: HttpGet;
}

/** A gateway request after its key was checked; key is null for the admin-token legacy endpoints. */
export interface GatewayCall {
  deps: Deps;
  project: Project;
  key: ApiKey | null;
  endpoint: string;
  /** `?dry_run=true` or `Prefer: dry-run`: carried out, rolled back, only a marked chronology row kept. */
  dryRun?: boolean;
  /** An administrator's replay of this chronology event (its effects record `replay_of`). */
  replayOf?: number;
  /** The configuration snapshot the key was checked against (read anew when absent). */
  config?: ConfigSnapshot;
  /**
   * More work for the request's own transaction, run after its chronology row and effects are written
   * and before it commits: an administrator's replay or legacy intake writes its audit row here, so the
   * row and what it records commit together or not at all (SPEC §14). It also runs with the chronology
   * row of a stored answer replayed (idempotency) and of a refusal logged by logRequest; never in a dry
   * run, which keeps nothing. A call that carries it is written in a batch of its own
   * (services/accept/execute.ts), so its refusal rolls back no other request.
   */
  alsoInTransaction?: (trx: Executor, outcome: AcceptOutcome) => Promise<void>;
}

/** What the request's transaction wrote, as alsoInTransaction hears it. */
export interface AcceptOutcome {
  /** The chronology row written for this request. */
  eventId: number;
  status: number;
  /** False for a refusal (then `body` is null). */
  accepted: boolean;
  /** The stored answer of an earlier request with the same idempotency key was replayed. */
  replayed: boolean;
  body: unknown;
}
