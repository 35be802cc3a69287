// Per-project delivery settings, the attempts log and the daily quota counters (migration 008).
import { sql } from 'kysely';
import type { AttemptTransport } from '../domain/delivery.js';
import { fromFlag, toFlag } from '../db/flags.js';
import { iso, type Executor } from './types.js';

export interface DeliveryRow {
  project_id: number;
  settings: string;
  secrets: string;
  updated_at: number;
}

export async function findDeliveryRow(db: Executor, projectId: number): Promise<DeliveryRow | undefined> {
  return db.selectFrom('project_delivery').selectAll().where('project_id', '=', projectId).executeTakeFirst();
}

export async function allDeliveryRows(db: Executor): Promise<DeliveryRow[]> {
  return db.selectFrom('project_delivery').selectAll().orderBy('project_id').execute();
}

export async function saveDeliveryRow(db: Executor, row: DeliveryRow): Promise<void> {
  await db
    .insertInto('project_delivery')
    .values(row)
    .onConflict((oc) =>
      oc.column('project_id').doUpdateSet({ settings: row.settings, secrets: row.secrets, updated_at: row.updated_at }),
    )
    .execute();
}

export async function deleteDeliveryRow(db: Executor, projectId: number): Promise<boolean> {
  const res = await db.deleteFrom('project_delivery').where('project_id', '=', projectId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export interface AttemptRecord {
  transport: AttemptTransport;
  ok: boolean;
  reply: string;
  queueId: string | null;
  providerId: string | null;
  at: number;
}

export interface AttemptsOf {
  emailId: number;
  /** The e-mail's attempt number (a failover is two rows with the same number). */
  attempt: number;
  messageId: string | null;
  attempts: AttemptRecord[];
}

/** The attempts of many deliveries in one statement (the worker batches them like its outcomes). */
export async function recordAttempts(db: Executor, items: AttemptsOf[]): Promise<void> {
  const values = items.flatMap((i) =>
    i.attempts.map((a) => ({
      scheduled_email_id: i.emailId,
      attempt: i.attempt,
      transport: a.transport,
      ok: toFlag(a.ok),
      reply: a.reply.slice(0, 2000),
      queue_id: a.queueId,
      provider_message_id: a.providerId,
      message_id: i.messageId,
      at: a.at,
    })),
  );
  if (values.length) await db.insertInto('email_attempts').values(values).execute();
}

export async function attemptsLog(db: Executor, emailId: number) {
  const rows = await db
    .selectFrom('email_attempts')
    .selectAll()
    .where('scheduled_email_id', '=', emailId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    attempt: r.attempt,
    at: iso(r.at)!,
    transport: r.transport as AttemptTransport,
    ok: fromFlag(r.ok),
    reply: r.reply,
    queue_id: r.queue_id,
    provider_message_id: r.provider_message_id,
    message_id: r.message_id,
  }));
}

/** The e-mail an attempt with this relay queue id or provider id belongs to (bounce matching, issue 14). */
export async function emailIdByRelayId(db: Executor, id: string): Promise<number | null> {
  const row = await db
    .selectFrom('email_attempts')
    .select('scheduled_email_id')
    .where((eb) => eb.or([eb('queue_id', '=', id), eb('provider_message_id', '=', id)]))
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return row ? Number(row.scheduled_email_id) : null;
}

/**
 * Takes one unit of the project's quota for `day`, atomically: false when `quota` is already used up.
 * Two statements, each atomic on its own: concurrent workers never both take the last unit.
 */
export async function takeQuota(db: Executor, projectId: number, day: string, quota: number): Promise<boolean> {
  await db
    .insertInto('delivery_quota_usage')
    .values({ project_id: projectId, day, used: 0 })
    .onConflict((oc) => oc.columns(['project_id', 'day']).doNothing())
    .execute();
  const res = await db
    .updateTable('delivery_quota_usage')
    .set({ used: sql<number>`used + 1` })
    .where('project_id', '=', projectId)
    .where('day', '=', day)
    .where('used', '<', quota)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Gives a unit back when the send it was taken for did not go out. */
export async function returnQuota(db: Executor, projectId: number, day: string): Promise<void> {
  await db
    .updateTable('delivery_quota_usage')
    .set({ used: sql<number>`used - 1` })
    .where('project_id', '=', projectId)
    .where('day', '=', day)
    .where('used', '>', 0)
    .execute();
}

export async function quotaUsed(db: Executor, projectId: number, day: string): Promise<number> {
  const row = await db
    .selectFrom('delivery_quota_usage')
    .select('used')
    .where('project_id', '=', projectId)
    .where('day', '=', day)
    .executeTakeFirst();
  return Number(row?.used ?? 0);
}

/**
 * Whether a project sends cart or campaign e-mail: it has a campaign, a cart chain of its own, or such
 * an e-mail among its last 1000 (the default 1h/1d/3d chain needs no row; bounded to stay cheap).
 */
export async function sendsMarketing(db: Executor, projectId: number): Promise<boolean> {
  const campaign = await db
    .selectFrom('campaigns')
    .select('id')
    .where('project_id', '=', projectId)
    .limit(1)
    .executeTakeFirst();
  if (campaign) return true;
  const chain = await db
    .selectFrom('cart_chains')
    .select('cart_type')
    .where('project_id', '=', projectId)
    .limit(1)
    .executeTakeFirst();
  if (chain) return true;
  const recent = db
    .selectFrom('scheduled_emails')
    .select('kind')
    .where('project_id', '=', projectId)
    .orderBy('id', 'desc')
    .limit(1000)
    .as('recent');
  const hit = await db
    .selectFrom(recent)
    .select('kind')
    .where('kind', 'in', ['cart', 'campaign'])
    .limit(1)
    .executeTakeFirst();
  return hit !== undefined;
}
