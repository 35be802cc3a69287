// Campaigns: one outbox row per address-book member, written in one INSERT … SELECT so a large book
// costs one statement, and statistics over those rows.
import { sql, type RawBuilder } from 'kysely';
import { fromMinor, NO_CURRENCY } from '../domain/money.js';
import { receivingStatuses } from '../domain/suppression.js';
import { topicStopSentence, TRANSACTIONAL } from '../domain/consent.js';
import type { EmailKind } from '../domain/statuses.js';
import { sumMinor, type Executor, byProject, type ProjectFilter } from './types.js';
import { OUTCOME_SQL } from './events.js';

export async function insertCampaign(
  db: Executor,
  c: { project_id: number; template_id: number; list_id: number; send_at: number },
  now: number,
): Promise<number> {
  const row = await db
    .insertInto('campaigns')
    .values({ ...c, recipients: 0, created_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * `contacts.status` may receive an e-mail of this kind: the rule of domain/suppression.ts as SQL
 * (test/domain-rules.test.ts compares the two for every status and kind on both databases).
 */
export function mayReceiveSql(kind: EmailKind): RawBuilder<boolean> {
  const allowed = receivingStatuses(kind);
  if (allowed.length === 0) return sql<boolean>`1 = 0`;
  return sql<boolean>`contacts.status in (${sql.join(allowed.map((s) => sql.lit(s)))})`;
}

/**
 * Queues the template for every member of the book. Members who may not receive campaigns
 * (SPEC §4, domain/suppression.ts) get a `suppressed` row so the decision is visible; the worker
 * checks again at send time.
 */
export async function fanOutCampaign(
  db: Executor,
  c: {
    campaignId: number;
    projectId: number;
    templateId: number;
    templateKey: string;
    listId: number;
    sendAt: number;
    /** The consent topic (SPEC §18) and whether it requires a grant: domain/consent.ts topicStop as SQL. */
    topic: string;
    requireConsent: boolean;
  },
  now: number,
): Promise<number> {
  const mayReceive = mayReceiveSql('campaign');
  const transactional = c.topic === TRANSACTIONAL;
  const left = transactional
    ? sql<boolean>`1 = 0`
    : sql<boolean>`exists (select 1 from contact_topics ct where ct.contact_id = contacts.id and ct.topic = ${c.topic} and ct.subscribed = 0)`;
  const noConsent =
    transactional || !c.requireConsent
      ? sql<boolean>`1 = 0`
      : sql<boolean>`coalesce((select cr.granted from consent_records cr where cr.contact_id = contacts.id and cr.topic = ${c.topic} order by cr.at desc, cr.id desc limit 1), 0) <> 1`;
  const res = await db
    .insertInto('scheduled_emails')
    .columns([
      'project_id',
      'kind',
      'template_id',
      'template_key',
      'contact_id',
      'to_email',
      'to_name',
      'order_id',
      'event_id',
      'campaign_id',
      'chain_step',
      'context',
      'status',
      'due_at',
      'attempts',
      'last_error',
      'topic',
      'created_at',
      'updated_at',
    ])
    .expression((eb) =>
      eb
        .selectFrom('list_members')
        .innerJoin('contacts', 'contacts.id', 'list_members.contact_id')
        .where('list_members.list_id', '=', c.listId)
        .select([
          sql.lit(c.projectId).as('project_id'),
          sql.lit('campaign').as('kind'),
          sql.lit(c.templateId).as('template_id'),
          sql<string>`${c.templateKey}`.as('template_key'),
          'contacts.id',
          'contacts.email',
          'contacts.name',
          sql.lit(null).as('order_id'),
          sql.lit(null).as('event_id'),
          sql.lit(c.campaignId).as('campaign_id'),
          sql.lit(null).as('chain_step'),
          sql.lit('{}').as('context'),
          sql<string>`case when ${mayReceive} and not (${left}) and not (${noConsent}) then 'scheduled' else 'suppressed' end`.as(
            'status',
          ),
          sql.lit(c.sendAt).as('due_at'),
          sql.lit(0).as('attempts'),
          sql<string | null>`case when not (${mayReceive}) then 'contact is ' || contacts.status
            when ${noConsent} then ${topicStopSentence.no_consent}
            when ${left} then ${topicStopSentence.contact_unsubscribed} else null end`.as('last_error'),
          sql<string>`${c.topic}`.as('topic'),
          sql.lit(now).as('created_at'),
          sql.lit(now).as('updated_at'),
        ]),
    )
    .executeTakeFirst();
  const n = Number(res.numInsertedOrUpdatedRows ?? 0);
  await db.updateTable('campaigns').set({ recipients: n }).where('id', '=', c.campaignId).execute();
  return n;
}

export async function findCampaign(db: Executor, id: number) {
  return db
    .selectFrom('campaigns')
    .innerJoin('projects', 'projects.id', 'campaigns.project_id')
    .selectAll('campaigns')
    .select('projects.site_key')
    .where('campaigns.id', '=', id)
    .executeTakeFirst();
}

export async function campaignCounts(db: Executor, id: number, now: number) {
  const rows = await db
    .selectFrom('scheduled_emails')
    .innerJoin('contacts', 'contacts.id', 'scheduled_emails.contact_id')
    .select([
      sql<number>`count(*)`.as('recipients'),
      sql<number>`sum(case when scheduled_emails.status in ('scheduled', 'queued', 'sending') then 1 else 0 end)`.as(
        'pending',
      ),
      sql<number>`sum(case when scheduled_emails.status in ('scheduled', 'queued') and scheduled_emails.due_at <= ${now} then 1 else 0 end)`.as(
        'due',
      ),
      sql<number>`sum(case when scheduled_emails.status in ('sent', 'delivered', 'bounced', 'soft_bounced', 'complained') then 1 else 0 end)`.as(
        'sent',
      ),
      sql<number>`sum(case when scheduled_emails.status = 'failed' then 1 else 0 end)`.as('failed'),
      sql<number>`sum(case when scheduled_emails.status = 'suppressed' then 1 else 0 end)`.as('suppressed'),
      sql<number>`sum(case when scheduled_emails.status = 'cancelled' then 1 else 0 end)`.as('cancelled'),
      sql<number>`sum(case when contacts.status = 'unsubscribed' then 1 else 0 end)`.as('unsubscribed'),
    ])
    .where('scheduled_emails.campaign_id', '=', id)
    .executeTakeFirstOrThrow();
  const n = (v: unknown) => Number(v ?? 0);
  return {
    recipients: n(rows.recipients),
    scheduled: n(rows.pending),
    due: n(rows.due),
    sent: n(rows.sent),
    failed: n(rows.failed),
    suppressed: n(rows.suppressed),
    cancelled: n(rows.cancelled),
    unsubscribed: n(rows.unsubscribed),
  };
}

/**
 * Paid amounts per currency (SPEC §10): roubles and tenge are never added together. An amount recorded
 * without a currency is counted under XXX (ISO 4217's "no currency"); orders paid without an amount add
 * nothing. `since`/`until` bound the time the order was marked paid.
 */
export async function paidAmountByCurrency(
  db: Executor,
  f: { projectId?: ProjectFilter; since?: number; until?: number },
): Promise<Record<string, number>> {
  let q = db
    .selectFrom('orders')
    .select(['currency', sumMinor(sql.ref('amount_minor')).as('minor')])
    .where('status', '=', 'paid')
    .where('amount_minor', 'is not', null)
    .groupBy('currency');
  if (f.projectId !== undefined) q = q.where('project_id', ...byProject(f.projectId));
  if (f.since !== undefined) q = q.where('updated_at', '>=', f.since);
  if (f.until !== undefined) q = q.where('updated_at', '<', f.until);
  // Added in hundredths (exact), shown in units.
  const minor: Record<string, number> = {};
  for (const r of await q.execute()) {
    // Codes stored before they were upper-cased on the way in ("rub") join their currency here.
    const code = r.currency?.trim().toUpperCase() || NO_CURRENCY;
    minor[code] = (minor[code] ?? 0) + Number(r.minor ?? 0);
  }
  return Object.fromEntries(
    Object.entries(minor)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([code, m]) => [code, fromMinor(m)]),
  );
}

/** Service-wide figures for GET /api/stats/overview and the metrics endpoint. */
export async function overview(db: Executor, now: number) {
  const n = (v: unknown) => Number(v ?? 0);
  const count = async (table: 'projects' | 'campaigns' | 'api_keys') =>
    n(
      (
        await db
          .selectFrom(table)
          .select(sql<number>`count(*)`.as('c'))
          .executeTakeFirstOrThrow()
      ).c,
    );
  const contacts = await db
    .selectFrom('contacts')
    .select(['status', sql<number>`count(*)`.as('c')])
    .groupBy('status')
    .execute();
  // Test sends (POST …/delivery/test) count in no statistic (SPEC §11); they still wait in the outbox.
  const emails = await db
    .selectFrom('scheduled_emails')
    .select(['status', sql<number>`count(*)`.as('c')])
    .where('is_test', '=', 0)
    .groupBy('status')
    .execute();
  const events = await db
    .selectFrom('events')
    .select([
      sql<number>`count(*)`.as('total'),
      sql<number>`sum(case when accepted = 1 then 1 else 0 end)`.as('accepted'),
      sql<number>`sum(case when ${OUTCOME_SQL} = 'repeated' then 1 else 0 end)`.as('repeated'),
      sql<number>`sum(case when created_at >= ${now - 86_400_000} then 1 else 0 end)`.as('last_24h'),
    ])
    .executeTakeFirstOrThrow();
  const orders = await db
    .selectFrom('orders')
    .select([
      sql<number>`count(*)`.as('total'),
      sql<number>`sum(case when status = 'paid' then 1 else 0 end)`.as('paid'),
    ])
    .executeTakeFirstOrThrow();
  const backlog = await outboxBacklog(db, now);
  return {
    projects: await count('projects'),
    api_keys: await count('api_keys'),
    campaigns: await count('campaigns'),
    contacts_by_status: Object.fromEntries(contacts.map((r) => [r.status, n(r.c)])),
    emails_by_status: Object.fromEntries(emails.map((r) => [r.status, n(r.c)])),
    events: {
      total: n(events.total),
      accepted: n(events.accepted),
      rejected: n(events.total) - n(events.accepted) - n(events.repeated),
      repeated: n(events.repeated),
      last_24h: n(events.last_24h),
    },
    orders: {
      total: n(orders.total),
      paid: n(orders.paid),
      paid_amount_by_currency: await paidAmountByCurrency(db, {}),
    },
    outbox: backlog,
  };
}

/** Due-but-unsent e-mails and how long the oldest has waited (uses the partial pending index). */
export async function outboxBacklog(db: Executor, now: number) {
  const r = await db
    .selectFrom('scheduled_emails')
    .select([sql<number>`count(*)`.as('depth'), sql<number | null>`min(due_at)`.as('oldest')])
    .where('status', 'in', ['scheduled', 'queued'])
    .where('due_at', '<=', now)
    .executeTakeFirstOrThrow();
  const oldest = r.oldest === null ? null : Number(r.oldest);
  return {
    due: Number(r.depth ?? 0),
    oldest_due_age_seconds: oldest === null ? 0 : Math.max(0, (now - oldest) / 1000),
  };
}
