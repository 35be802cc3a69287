// Webhook endpoints, their outbox of deliveries and the attempts of each (SPEC §13). Deliveries are
// claimed under a lease like e-mails (repos/outbox.ts): FOR UPDATE SKIP LOCKED on PostgreSQL, one
// atomic statement on SQLite; every later write is guarded by `locked_by`.
import { sql, type Kysely, type SqlBool } from 'kysely';
import { fromFlag } from '../db/flags.js';
import type { Dialect } from '../db/index.js';
import type {
  Database,
  WebhookAttemptRow,
  WebhookDeliveryRow,
  WebhookEndpointRow,
  WebhookEndpointsTable,
} from '../db/schema.js';
import type { WebhookKind } from '../domain/statuses.js';
import type { Executor } from './types.js';

// Literal SQL so both dialects match the partial indexes of migration 012.
const IS_PENDING = sql<SqlBool>`webhook_deliveries.status = 'pending'`;
const IS_SENDING = sql<SqlBool>`webhook_deliveries.status = 'sending'`;

export async function insertEndpoint(
  db: Executor,
  e: Pick<WebhookEndpointsTable, 'project_id' | 'url' | 'description' | 'events' | 'secret_sealed'>,
  now: number,
): Promise<number> {
  const row = await db
    .insertInto('webhook_endpoints')
    .values({ ...e, status: 'active', created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function listEndpoints(db: Executor, projectId: number): Promise<WebhookEndpointRow[]> {
  return db.selectFrom('webhook_endpoints').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
}

/** Every endpoint's sealed secret, for `secrets rotate`. */
export async function allEndpointSecrets(db: Executor): Promise<{ id: number; secret_sealed: string }[]> {
  const rows = await db.selectFrom('webhook_endpoints').select(['id', 'secret_sealed']).orderBy('id').execute();
  return rows.map((r) => ({ id: Number(r.id), secret_sealed: r.secret_sealed }));
}

export async function findEndpoint(
  db: Executor,
  projectId: number,
  id: number,
): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function updateEndpoint(
  db: Executor,
  id: number,
  set: Partial<Omit<WebhookEndpointsTable, 'id' | 'project_id' | 'created_at'>>,
): Promise<void> {
  await db.updateTable('webhook_endpoints').set(set).where('id', '=', id).execute();
}

export async function deleteEndpoint(db: Executor, projectId: number, id: number): Promise<boolean> {
  // Deliveries and attempts go with it (foreign keys cascade on PostgreSQL; SQLite's may be off).
  const ids = db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id);
  await db.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
  await db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
  const res = await db
    .deleteFrom('webhook_endpoints')
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** The active endpoints of these projects, with each project's site_key (what payloads carry). */
export async function activeEndpointsOf(
  db: Executor,
  projectIds: number[],
): Promise<{ id: number; project_id: number; events: string; site_key: string }[]> {
  if (projectIds.length === 0) return [];
  return db
    .selectFrom('webhook_endpoints')
    .innerJoin('projects', 'projects.id', 'webhook_endpoints.project_id')
    .select(['webhook_endpoints.id', 'webhook_endpoints.project_id', 'webhook_endpoints.events', 'projects.site_key'])
    .where('webhook_endpoints.project_id', 'in', projectIds)
    .where('webhook_endpoints.status', '=', 'active')
    .execute();
}

export interface NewDelivery {
  project_id: number;
  endpoint_id: number;
  msg_id: string;
  kind: WebhookKind;
  data: string;
}

export async function insertDeliveries(db: Executor, rows: NewDelivery[], now: number): Promise<void> {
  // 10 values a row: well under SQLite's limit of bound parameters per statement.
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('webhook_deliveries')
      .values(
        rows.slice(i, i + 500).map((r) => ({
          ...r,
          status: 'pending' as const,
          attempts: 0,
          due_at: now,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  }
}

export interface ClaimedDelivery extends WebhookDeliveryRow {
  url: string;
  secret_sealed: string;
  failing_since: number | null;
  /** The project lets its webhooks go to loopback and private addresses (projects.allow_private_webhooks). */
  allow_private: boolean;
}

/**
 * Claims due deliveries of active endpoints and ones whose lease expired, oldest first. The claim is one
 * UPDATE; the endpoint's URL and sealed secret are read after it for the claimed rows only.
 */
export async function claimDeliveries(
  db: Kysely<Database>,
  dialect: Dialect,
  o: { workerId: string; now: number; leaseMs: number; limit: number },
): Promise<ClaimedDelivery[]> {
  if (o.limit <= 0) return [];
  const lock = <T extends { forUpdate(of?: any): T; skipLocked(): T }>(q: T): T =>
    dialect === 'postgres' ? q.forUpdate('webhook_deliveries' as any).skipLocked() : q;
  const claimed = await db
    .with('candidates', (qb) =>
      lock(
        qb
          .selectFrom('webhook_deliveries')
          .innerJoin('webhook_endpoints', 'webhook_endpoints.id', 'webhook_deliveries.endpoint_id')
          .select('webhook_deliveries.id')
          .where('webhook_endpoints.status', '=', 'active')
          .where((eb) =>
            eb.or([
              eb.and([IS_PENDING, eb('webhook_deliveries.due_at', '<=', o.now)]),
              eb.and([IS_SENDING, eb('webhook_deliveries.locked_until', '<', o.now)]),
            ]),
          )
          .orderBy('webhook_deliveries.due_at')
          .limit(o.limit),
      ),
    )
    .updateTable('webhook_deliveries')
    .set({ status: 'sending', locked_by: o.workerId, locked_until: o.now + o.leaseMs, updated_at: o.now })
    .where('id', 'in', (eb) => eb.selectFrom('candidates').select('candidates.id'))
    // Re-checked on the row itself: only a row still claimable is taken.
    .where((eb) =>
      eb.or([eb.and([IS_PENDING, eb('due_at', '<=', o.now)]), eb.and([IS_SENDING, eb('locked_until', '<', o.now)])]),
    )
    .returningAll()
    .execute();
  if (claimed.length === 0) return [];
  const endpoints = await db
    .selectFrom('webhook_endpoints')
    .innerJoin('projects', 'projects.id', 'webhook_endpoints.project_id')
    .select([
      'webhook_endpoints.id',
      'webhook_endpoints.url',
      'webhook_endpoints.secret_sealed',
      'webhook_endpoints.failing_since',
      'projects.allow_private_webhooks',
    ])
    .where('webhook_endpoints.id', 'in', [...new Set(claimed.map((c) => Number(c.endpoint_id)))])
    .execute();
  const byId = new Map(endpoints.map((e) => [Number(e.id), e]));
  return claimed.flatMap((c) => {
    const e = byId.get(Number(c.endpoint_id));
    return e
      ? [
          {
            ...c,
            url: e.url,
            secret_sealed: e.secret_sealed,
            failing_since: e.failing_since,
            allow_private: fromFlag(e.allow_private_webhooks),
          },
        ]
      : [];
  });
}

export interface AttemptOutcome {
  deliveryId: number;
  endpointId: number;
  now: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  excerpt: string | null;
  /** delivered, pending again at retryAt, or failed for good. */
  next: { status: 'delivered' } | { status: 'pending'; dueAt: number } | { status: 'failed' };
  /** Set when this failure disables the endpoint. */
  disable?: string;
}

/**
 * Records one attempt and its consequence in one transaction, guarded by the lease: false when another
 * worker took the delivery over meanwhile (then nothing is written).
 */
export async function recordAttempt(db: Kysely<Database>, workerId: string, o: AttemptOutcome): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: o.next.status,
        attempts: sql<number>`attempts + 1`,
        due_at: o.next.status === 'pending' ? o.next.dueAt : sql<number>`due_at`,
        delivered_at: o.next.status === 'delivered' ? o.now : null,
        last_error: o.error,
        locked_by: null,
        locked_until: null,
        updated_at: o.now,
      })
      .where('id', '=', o.deliveryId)
      .where('locked_by', '=', workerId)
      .where('status', '=', 'sending')
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return false;
    await trx
      .insertInto('webhook_attempts')
      .values({
        delivery_id: o.deliveryId,
        at: o.now,
        status_code: o.statusCode,
        latency_ms: Math.max(0, Math.round(o.latencyMs)),
        error: o.error,
        response_excerpt: o.excerpt,
      })
      .execute();
    const endpoint = trx.updateTable('webhook_endpoints').where('id', '=', o.endpointId);
    if (o.next.status === 'delivered') await endpoint.set({ failing_since: null }).execute();
    else if (o.disable)
      await endpoint
        .set({ status: 'disabled', disabled_at: o.now, disabled_reason: o.disable, updated_at: o.now })
        .where('status', '=', 'active')
        .execute();
    else await endpoint.set({ failing_since: sql<number>`coalesce(failing_since, ${o.now})` }).execute();
    return true;
  });
}

export async function listDeliveries(
  db: Executor,
  endpointId: number,
  o: { limit: number; beforeId: number | null },
): Promise<WebhookDeliveryRow[]> {
  let q = db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId);
  if (o.beforeId !== null) q = q.where('id', '<', o.beforeId);
  return q.orderBy('id', 'desc').limit(o.limit).execute();
}

export async function attemptsOf(db: Executor, deliveryIds: number[]): Promise<WebhookAttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('id')
    .execute();
}

export async function findDelivery(
  db: Executor,
  endpointId: number,
  id: number,
): Promise<WebhookDeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Due again now, keeping its webhook-id and its attempts; false while a worker is sending it. */
export async function resendDelivery(db: Executor, id: number, now: number): Promise<boolean> {
  const res = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', due_at: now, locked_by: null, locked_until: null, updated_at: now })
    .where('id', '=', id)
    .where('status', '!=', 'sending')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** SQLite at start: the process that held webhook leases is gone; its deliveries are due again now. */
export async function expireWebhookLeases(db: Executor): Promise<number> {
  const res = await db
    .updateTable('webhook_deliveries')
    .set({ locked_until: 0 })
    .where('status', '=', 'sending')
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Earliest time something may be claimable (pending due time or lease expiry), null when idle. */
export async function nextDeliveryDue(db: Executor): Promise<number | null> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.min('due_at').as('t'))
    .where(IS_PENDING)
    .executeTakeFirst();
  return row?.t === null || row?.t === undefined ? null : Number(row.t);
}
