// The webhook worker: claims due deliveries under a lease, signs them the Standard Webhooks way and
// POSTs them (services/siteWebhooks/send.ts), then records the attempt, the retry or the end, and disables
// an endpoint that has failed for three days (SPEC §13). Runs beside the e-mail worker in every process
// that delivers; several workers share a PostgreSQL outbox without sending one delivery twice.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Webhook } from 'standardwebhooks';
import type { WebhookConfig } from '../config.js';
import type { Db } from '../db/index.js';
import { afterAttempt, shouldDisable, webhookBody } from '../domain/siteWebhooks.js';
import { claimDeliveries, nextDeliveryDue, recordAttempt, type ClaimedDelivery } from '../repos/siteWebhooks.js';
import { parseJson } from '../repos/types.js';
import { secretBox } from '../services/secrets.js';
import { postWebhook, systemResolver, type Resolver } from '../services/siteWebhooks/send.js';
import { systemClock, type Clock } from '../delivery/clock.js';
import { leaseLoop, noopLogger, type WorkerLogger } from './loop.js';

export interface WebhookWorkerOptions {
  db: Db;
  config: WebhookConfig;
  /** The installation secret webhook secrets are sealed under. */
  secret: string;
  clock?: Clock;
  resolve?: Resolver;
  workerId?: string;
  batchSize?: number;
  concurrency?: number;
  pollMs?: number;
  random?: () => number;
  logger?: WorkerLogger;
  /** The time put in `webhook-timestamp`: the real time of the attempt (receivers check it against theirs). */
  wallClock?: () => number;
}

export interface WebhookWorker {
  readonly id: string;
  start(): void;
  stop(): Promise<void>;
  wake(): void;
  /** Claims and sends one batch due at clock.now(); returns its size. */
  runOnce(): Promise<number>;
}

export function createWebhookWorker(o: WebhookWorkerOptions): WebhookWorker {
  const db = o.db.db;
  const clock = o.clock ?? systemClock;
  const id = o.workerId ?? `wh:${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const batchSize = Math.max(1, o.batchSize ?? 50);
  const concurrency = Math.max(1, o.concurrency ?? 10);
  const pollMs = Math.max(10, o.pollMs ?? 1000);
  // Longer than any attempt can take, so a live worker never loses a delivery it is sending.
  const leaseMs = Math.max(60_000, o.config.timeoutMs * 3);
  const log = o.logger ?? noopLogger;
  const wall = o.wallClock ?? Date.now;
  const box = secretBox(o.secret);

  async function deliver(d: ClaimedDelivery): Promise<void> {
    const body = webhookBody({
      kind: d.kind,
      createdAt: Number(d.created_at),
      sequence: Number(d.id),
      data: parseJson<Record<string, unknown>>(d.data, {}),
    });
    let result;
    try {
      const signer = new Webhook(box.open(d.secret_sealed));
      const at = new Date(wall());
      result = await postWebhook({
        url: d.url,
        body,
        headers: {
          'webhook-id': d.msg_id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signer.sign(d.msg_id, at, body),
        },
        timeoutMs: o.config.timeoutMs,
        allowPrivate: o.config.allowPrivate || d.allow_private,
        resolve: o.resolve ?? systemResolver,
      });
    } catch (err) {
      // The secret could not be opened (SECRET_KEY changed): an attempt that failed, shown as such.
      result = { statusCode: null, error: `could not sign: ${(err as Error).message}`, excerpt: null, latencyMs: 0 };
    }
    const now = clock.now();
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const next = afterAttempt({
      ok,
      now,
      createdAt: Number(d.created_at),
      attempts: Number(d.attempts) + 1,
      baseMs: o.config.backoffBaseMs,
      random: o.random,
    });
    const disable =
      !ok && shouldDisable(d.failing_since, now)
        ? `every attempt failed since ${new Date(Number(d.failing_since)).toISOString()}; last: ${result.error}`
        : undefined;
    const written = await recordAttempt(db, id, {
      deliveryId: Number(d.id),
      endpointId: Number(d.endpoint_id),
      now,
      statusCode: result.statusCode,
      latencyMs: result.latencyMs,
      error: result.error,
      excerpt: result.excerpt,
      next,
      disable,
    });
    if (!written) log.warn({ delivery_id: d.id, worker: id }, 'webhook lease lost before the attempt was recorded');
    else if (disable) log.warn({ endpoint_id: d.endpoint_id, reason: disable }, 'webhook endpoint disabled');
    else if (!ok) log.info({ delivery_id: d.id, error: result.error, next: next.status }, 'webhook attempt failed');
  }

  const loop = leaseLoop<ClaimedDelivery>({
    claim: (limit) => claimDeliveries(db, o.db.dialect, { workerId: id, now: clock.now(), leaseMs, limit }),
    work: { each: (d) => deliver(d) },
    batchSize,
    concurrency,
    pollMs,
    async idleMs() {
      const due = await nextDeliveryDue(db);
      return due === null ? pollMs : Math.min(pollMs, Math.max(20, due - clock.now()));
    },
    onError(err, what) {
      // A crashed delivery (typically the database went away) is tried again when its lease expires.
      if (what === 'task') log.error({ err }, 'webhook delivery crashed; retried when its lease expires');
      else log.error({ err }, 'webhook outbox poll failed; retrying');
    },
  });

  return {
    id,
    start: loop.start,
    async stop() {
      // Deliveries under way are finished before the loop ends: nothing started is left unsent.
      await loop.stop();
    },
    wake: loop.wake,
    runOnce: () => loop.runOnce(),
  };
}
