// Prometheus metrics of this process (GET /metrics). Label values come from bounded sets only (route
// patterns, status codes, catalog event types, outcomes), so a hostile client cannot grow the series.
import client from 'prom-client';
import { isKnownEventType } from './domain/catalog.js';
import { databaseUnavailableCount } from './db/unavailable.js';

/**
 * Why a PostgreSQL accept batch was rolled back and its requests carried out one by one. The first is
 * expected (a repeated idempotency key, which the per-request path replays); the others are faults of
 * the fast path, also logged at error.
 */
const ACCEPT_BATCH_FALLBACK_REASONS = ['idempotency_key_stored', 'database_error', 'other_error'] as const;
export type AcceptBatchFallbackReason = (typeof ACCEPT_BATCH_FALLBACK_REASONS)[number];

/** Issue 34's counter (named as its definition of done names it), counted in db/unavailable.ts. */
function dbUnavailableCounter(registry: client.Registry): client.Counter {
  let counted = databaseUnavailableCount(); // the process-wide count when this registry was last scraped
  return new client.Counter({
    name: 'edu_gateway_db_unavailable_total',
    help: 'Requests answered 503 and worker rounds backed off because the database could not be reached',
    registers: [registry],
    collect() {
      // Catch up with the process-wide count: the database layer counts without a registry.
      const seen = databaseUnavailableCount();
      if (seen > counted) this.inc(seen - counted);
      counted = seen;
    },
  });
}

export class Metrics {
  readonly registry = new client.Registry();
  readonly httpRequests = new client.Counter({
    name: 'egw_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  readonly httpDuration = new client.Histogram({
    name: 'egw_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['route'],
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly events = new client.Counter({
    name: 'egw_gateway_events_total',
    help: 'Gateway events by type and outcome',
    labelNames: ['event_type', 'outcome'],
    registers: [this.registry],
  });
  readonly emails = new client.Counter({
    name: 'egw_emails_total',
    help: 'E-mail delivery outcomes',
    labelNames: ['kind', 'outcome'],
    registers: [this.registry],
  });
  /** Per-project transports (label `site_key/primary|fallback`): 0 closed, 1 open, 0.5 half open. */
  readonly breakerState = new client.Gauge({
    name: 'egw_delivery_breaker_state',
    help: 'Circuit breaker of a project transport: 0 closed, 0.5 half open, 1 open',
    labelNames: ['transport'],
    registers: [this.registry],
  });
  /** E-mails waiting in a worker for one of their relay's RELAY_CONCURRENCY slots (issue 34). */
  readonly relayWaiting = new client.Gauge({
    name: 'egw_delivery_relay_waiting',
    help: 'E-mails waiting for a free connection slot of their relay (RELAY_CONCURRENCY per relay per worker)',
    labelNames: ['relay'],
    registers: [this.registry],
  });
  readonly sendDuration = new client.Histogram({
    name: 'egw_email_send_duration_seconds',
    help: 'Time to render and hand one e-mail to the transport',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly sendLag = new client.Histogram({
    name: 'egw_email_lag_seconds',
    help: 'How long after its due time an e-mail was delivered',
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });
  readonly outboxDue = new client.Gauge({
    name: 'egw_outbox_due',
    help: 'E-mails due and not yet sent',
    registers: [this.registry],
  });
  readonly outboxOldest = new client.Gauge({
    name: 'egw_outbox_oldest_due_age_seconds',
    help: 'How long the oldest due e-mail has waited',
    registers: [this.registry],
  });
  /** Renders stopped at RENDER_BUDGET_MS of CPU (SPEC §20), by what was rendered: email, preview or save. */
  readonly renderBudgetExceeded = new client.Counter({
    name: 'egw_render_budget_exceeded_total',
    help: 'Template renders stopped for using more than RENDER_BUDGET_MS of CPU',
    labelNames: ['task'],
    registers: [this.registry],
  });
  readonly rateLimitStoreErrors = new client.Counter({
    name: 'egw_rate_limit_store_errors_total',
    help: 'Rate-limit store failures (requests were allowed)',
    registers: [this.registry],
  });

  readonly eventLogFailures = new client.Counter({
    name: 'egw_event_log_failures_total',
    help: 'Refused gateway requests that could not be written to the chronology (they were still answered)',
    registers: [this.registry],
  });

  readonly acceptBatchFallbacks = new client.Counter<'reason'>({
    name: 'egw_accept_batch_fallbacks_total',
    help: 'Accept batches rolled back and redone request by request, by reason',
    labelNames: ['reason'],
    registers: [this.registry],
  });

  readonly acceptBatchSize = new client.Histogram({
    name: 'egw_accept_batch_size',
    help: 'Requests per accept batch written together (a lone request is not counted)',
    buckets: [2, 4, 8, 16, 32, 64, 128, 256],
    registers: [this.registry],
  });

  readonly reports = new client.Counter<'source' | 'kind'>({
    name: 'egw_email_reports_total',
    help: 'Inbound bounce, complaint and delivery reports stored, by source (smtp or provider) and kind',
    labelNames: ['source', 'kind'],
    registers: [this.registry],
  });

  readonly dbUnavailable = dbUnavailableCounter(this.registry);

  constructor() {
    client.collectDefaultMetrics({ register: this.registry, prefix: 'egw_' });
    // Every reason from the start, so a rate or an alert has a series before the first fallback.
    for (const reason of ACCEPT_BATCH_FALLBACK_REASONS) this.acceptBatchFallbacks.inc({ reason }, 0);
  }

  eventType(t: string | null): string {
    if (!t) return 'none';
    return isKnownEventType(t) ||
      /^(course|diploma|portal)_(order_created|paid)$/.test(t) ||
      ['order_created', 'purchase', 'list_contact_upsert'].includes(t)
      ? t
      : 'unknown';
  }
}
