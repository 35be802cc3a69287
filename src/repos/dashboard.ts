// The admin UI dashboard's figures: events per day by outcome and type, e-mails by outcome, the outbox
// right now, and cart recovery. Every query groups in the database (a busy installation has millions of
// rows) and returns a few hundred groups at most; days without rows are filled in here.
import { SENT_STATUSES, type EventOutcome } from '../domain/statuses.js';
import { OUTCOME_SQL } from './events.js';
import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from '../db/index.js';
import { fromMinor, NO_CURRENCY } from '../domain/money.js';
import { sumMinor, type Executor, byProject, type ProjectFilter } from './types.js';

export interface DashboardFilter {
  projectId?: ProjectFilter;
  since: number;
  until: number;
  now: number;
}

/** UTC calendar day of an epoch-milliseconds column, as YYYY-MM-DD, in the dialect's SQL. */
function day(dialect: Dialect, column: string): RawBuilder<string> {
  const ref = sql.ref(column);
  return dialect === 'postgres'
    ? sql<string>`to_char(to_timestamp(${ref} / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')`
    : sql<string>`strftime('%Y-%m-%d', ${ref} / 1000, 'unixepoch')`;
}

/** Every UTC day from since to until (exclusive), so charts show quiet days as zero instead of gaps. */
export function daysBetween(since: number, until: number): string[] {
  const out: string[] = [];
  const start = new Date(since);
  let t = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate());
  while (t < until && out.length < 1000) {
    out.push(new Date(t).toISOString().slice(0, 10));
    t += 86_400_000;
  }
  return out;
}

const n = (v: unknown) => Number(v ?? 0);

/** The key of an endpoint's event type in the dashboard's by-type figures: `purchase course_paid`. */
const typeKey = (endpoint: string, eventType: string) => `${endpoint} ${eventType}`;

export async function eventFigures(db: Executor, dialect: Dialect, f: DashboardFilter) {
  let q = db
    .selectFrom('events')
    .select([
      day(dialect, 'events.created_at').as('day'),
      'events.endpoint',
      'events.event_type',
      OUTCOME_SQL.as('outcome'),
      sql<number>`count(*)`.as('total'),
    ])
    .where('events.created_at', '>=', f.since)
    .where('events.created_at', '<', f.until)
    .groupBy([day(dialect, 'events.created_at'), 'events.endpoint', 'events.event_type', OUTCOME_SQL]);
  if (f.projectId !== undefined) q = q.where('events.project_id', ...byProject(f.projectId));
  const rows = await q.execute();

  const days = daysBetween(f.since, f.until);
  type Counts = Record<EventOutcome, number>;
  const byDay = new Map<string, { day: string; by_type: Record<string, number> } & Counts>(
    days.map((d) => [d, { day: d, accepted: 0, rejected: 0, repeated: 0, by_type: {} }]),
  );
  // Keyed by endpoint and type: course_paid from a purchase is not course_paid from a transactional send.
  const byType = new Map<string, { key: string; endpoint: string; event_type: string; total: number } & Counts>();
  for (const r of rows) {
    const type = r.event_type ?? '(none)';
    const key = typeKey(r.endpoint, type);
    const total = n(r.total);
    const d = byDay.get(r.day);
    if (d) {
      d[r.outcome] += total;
      d.by_type[key] = (d.by_type[key] ?? 0) + total;
    }
    const t = byType.get(key) ?? {
      key,
      endpoint: r.endpoint,
      event_type: type,
      accepted: 0,
      rejected: 0,
      repeated: 0,
      total: 0,
    };
    t[r.outcome] += total;
    t.total += total;
    byType.set(key, t);
  }
  return {
    events_by_day: [...byDay.values()],
    events_by_type: [...byType.values()].sort((a, b) => b.total - a.total || a.key.localeCompare(b.key)),
  };
}

// Outcomes reported after `sent` (SPEC §12) are counted apart; `sent` is what had no report (yet).
export const EMAIL_OUTCOMES = [
  'sent',
  'delivered',
  'bounced',
  'soft_bounced',
  'complained',
  'failed',
  'suppressed',
  'cancelled',
  'pending',
] as const;
type Outcome = (typeof EMAIL_OUTCOMES)[number];
const outcomeOf = (status: string): Outcome =>
  (EMAIL_OUTCOMES as readonly string[]).includes(status) ? (status as Outcome) : 'pending';

/** E-mails created in the window, by the day they were created and what became of them. */
export async function emailFigures(db: Executor, dialect: Dialect, f: DashboardFilter) {
  let q = db
    .selectFrom('scheduled_emails')
    .select([
      day(dialect, 'scheduled_emails.created_at').as('day'),
      'scheduled_emails.status',
      sql<number>`count(*)`.as('total'),
    ])
    .where('scheduled_emails.created_at', '>=', f.since)
    .where('scheduled_emails.created_at', '<', f.until)
    // Test sends from the delivery settings count in no statistic (SPEC §11).
    .where('scheduled_emails.is_test', '=', 0)
    .groupBy([day(dialect, 'scheduled_emails.created_at'), 'scheduled_emails.status']);
  if (f.projectId !== undefined) q = q.where('scheduled_emails.project_id', ...byProject(f.projectId));
  const rows = await q.execute();
  const empty = (): Record<Outcome, number> => ({
    sent: 0,
    delivered: 0,
    bounced: 0,
    soft_bounced: 0,
    complained: 0,
    failed: 0,
    suppressed: 0,
    cancelled: 0,
    pending: 0,
  });
  const byDay = new Map(daysBetween(f.since, f.until).map((d) => [d, { day: d, ...empty() }]));
  const totals: Record<Outcome, number> = empty();
  for (const r of rows) {
    const o = outcomeOf(r.status);
    totals[o] += n(r.total);
    const d = byDay.get(r.day);
    if (d) d[o] += n(r.total);
  }
  return { emails_by_day: [...byDay.values()], emails_by_outcome: totals };
}

/** The outbox now: waiting for their time, due and waiting for a worker, being sent; the oldest due. */
export async function outboxDepth(db: Executor, f: { projectId?: ProjectFilter; now: number }) {
  let q = db
    .selectFrom('scheduled_emails')
    .select([
      sql<number>`sum(case when status in ('scheduled', 'queued') and due_at > ${f.now} then 1 else 0 end)`.as(
        'scheduled',
      ),
      sql<number>`sum(case when status in ('scheduled', 'queued') and due_at <= ${f.now} then 1 else 0 end)`.as(
        'queued',
      ),
      sql<number>`sum(case when status = 'sending' then 1 else 0 end)`.as('sending'),
      // Held by the project's daily quota (issue 13): the worker wrote them back with this reason.
      sql<number>`sum(case when status = 'queued' and last_error like 'quota:%' then 1 else 0 end)`.as('over_quota'),
      sql<
        number | null
      >`min(case when status in ('scheduled', 'queued') and due_at <= ${f.now} then due_at else null end)`.as(
        'oldest_due',
      ),
    ])
    .where('status', 'in', ['scheduled', 'queued', 'sending']);
  if (f.projectId !== undefined) q = q.where('project_id', ...byProject(f.projectId));
  const r = await q.executeTakeFirst();
  const oldest = r?.oldest_due === null || r?.oldest_due === undefined ? null : Number(r.oldest_due);
  return {
    scheduled: n(r?.scheduled),
    queued: n(r?.queued),
    sending: n(r?.sending),
    over_quota: n(r?.over_quota),
    oldest_due_at: oldest === null ? null : new Date(oldest).toISOString(),
    oldest_due_age_seconds: oldest === null ? null : Math.max(0, Math.round((f.now - oldest) / 1000)),
  };
}

/**
 * Cart recovery for orders created (order-created events) in the window: how many were paid, how many
 * of those were paid after at least one cart e-mail had gone out to that order (the chain "recovered"
 * them), and the amounts per currency. The payment time is the purchase event's time.
 */
export async function cartFigures(db: Executor, dialect: Dialect, f: DashboardFilter) {
  const recovered = sql<number>`case when o.status = 'paid' and exists (
      select 1 from scheduled_emails e
      where e.project_id = o.project_id and e.order_id = o.order_id and e.kind = 'cart' and e.status in ('sent', 'delivered', 'bounced', 'soft_bounced', 'complained') and e.is_test = 0
        and e.sent_at <= coalesce(pe.created_at, o.updated_at)
    ) then 1 else 0 end`;
  let inner = db
    .selectFrom('orders as o')
    .leftJoin('events as pe', 'pe.id', 'o.paid_event_id')
    .select([
      day(dialect, 'o.created_at').as('day'),
      'o.cart_type',
      'o.currency',
      'o.status',
      'o.amount_minor',
      recovered.as('recovered'),
    ])
    .where('o.created_event_id', 'is not', null)
    .where('o.created_at', '>=', f.since)
    .where('o.created_at', '<', f.until);
  if (f.projectId !== undefined) inner = inner.where('o.project_id', ...byProject(f.projectId));
  const rows = await db
    .selectFrom(inner.as('x'))
    .select([
      'x.day',
      'x.cart_type',
      'x.currency',
      'x.status',
      'x.recovered',
      sql<number>`count(*)`.as('orders'),
      sumMinor(sql.ref('x.amount_minor')).as('amount'),
    ])
    .groupBy(['x.day', 'x.cart_type', 'x.currency', 'x.status', 'x.recovered'])
    .execute();

  const byDay = new Map(daysBetween(f.since, f.until).map((d) => [d, { day: d, created: 0, paid: 0, recovered: 0 }]));
  const byCart = new Map<string, { cart_type: string; created: number; paid: number; recovered: number }>();
  const money = new Map<string, { currency: string; paid: number; recovered: number }>();
  const totals = { orders_created: 0, orders_paid: 0, paid_after_cart_email: 0 };
  for (const r of rows) {
    const count = n(r.orders);
    const paid = r.status === 'paid';
    const rec = n(r.recovered) === 1;
    totals.orders_created += count;
    const d = byDay.get(r.day);
    const c = byCart.get(r.cart_type) ?? { cart_type: r.cart_type, created: 0, paid: 0, recovered: 0 };
    c.created += count;
    if (d) d.created += count;
    if (paid) {
      totals.orders_paid += count;
      c.paid += count;
      if (d) d.paid += count;
      const cur = r.currency?.trim().toUpperCase() || NO_CURRENCY;
      const m = money.get(cur) ?? { currency: cur, paid: 0, recovered: 0 };
      m.paid += n(r.amount);
      if (rec) m.recovered += n(r.amount);
      money.set(cur, m);
    }
    if (rec) {
      totals.paid_after_cart_email += count;
      c.recovered += count;
      if (d) d.recovered += count;
    }
    byCart.set(r.cart_type, c);
  }
  return {
    ...totals,
    by_day: [...byDay.values()],
    by_cart_type: [...byCart.values()].sort((a, b) => a.cart_type.localeCompare(b.cart_type)),
    amounts: [...money.values()]
      .map((m) => ({ currency: m.currency, paid: fromMinor(m.paid), recovered: fromMinor(m.recovered) }))
      .sort((a, b) => a.currency.localeCompare(b.currency)),
  };
}

/**
 * Per project, the e-mails sent in the last 7 and 30 days (by sent_at) and how many of them bounced
 * (hard) or drew a complaint: the deliverability rates of the dashboard (SPEC §12).
 */
export async function deliverabilityFigures(db: Executor, f: { projectId?: ProjectFilter; now: number }) {
  const d7 = f.now - 7 * 86_400_000;
  const d30 = f.now - 30 * 86_400_000;
  const when = (since: number, status: string | null) =>
    status === null
      ? sql<number>`sum(case when e.sent_at >= ${since} then 1 else 0 end)`
      : sql<number>`sum(case when e.sent_at >= ${since} and e.status = ${status} then 1 else 0 end)`;
  let q = db
    .selectFrom('scheduled_emails as e')
    .innerJoin('projects as p', 'p.id', 'e.project_id')
    .select([
      'p.site_key',
      'p.marketing_paused_at',
      'p.marketing_paused_reason',
      when(d7, null).as('sent7'),
      when(d7, 'bounced').as('bounced7'),
      when(d7, 'complained').as('complained7'),
      when(d30, null).as('sent30'),
      when(d30, 'bounced').as('bounced30'),
      when(d30, 'complained').as('complained30'),
    ])
    .where('e.sent_at', '>=', d30)
    .where('e.status', 'in', [...SENT_STATUSES])
    // Test sends are the administrator's, left out of every statistic (and of the pause, issue 14).
    .where('e.is_test', '=', 0)
    .groupBy(['p.site_key', 'p.marketing_paused_at', 'p.marketing_paused_reason'])
    .orderBy('p.site_key');
  // A viewer's dashboard covers the projects they may see (a list), an administrator's one or all.
  if (f.projectId !== undefined) q = q.where('e.project_id', ...byProject(f.projectId));
  const rows = await q.execute();
  return rows.map((r) => ({
    site_key: r.site_key,
    marketing_paused_at: r.marketing_paused_at === null ? null : n(r.marketing_paused_at),
    marketing_paused_reason: r.marketing_paused_reason,
    days7: { sent: n(r.sent7), bounced: n(r.bounced7), complained: n(r.complained7) },
    days30: { sent: n(r.sent30), bounced: n(r.bounced30), complained: n(r.complained30) },
  }));
}

/**
 * Per project, the requests refused because of the key they came with (disabled, or without the right
 * asked for) in the window (issue 37): a site whose key stopped working shows here before anyone reads
 * the chronology.
 */
export async function keyRefusals(db: Executor, f: DashboardFilter, codes: readonly string[]) {
  let q = db
    .selectFrom('events as ev')
    .innerJoin('projects as p', 'p.id', 'ev.project_id')
    .select(['p.site_key', 'ev.error_code', sql<number>`count(*)`.as('total')])
    .where('ev.accepted', '=', 0)
    .where('ev.error_code', 'in', [...codes])
    .where('ev.created_at', '>=', f.since)
    .where('ev.created_at', '<', f.until)
    .groupBy(['p.site_key', 'ev.error_code']);
  if (f.projectId !== undefined) q = q.where('ev.project_id', ...byProject(f.projectId));
  const byProjectKey = new Map<string, { site_key: string; total: number; by_code: Record<string, number> }>();
  for (const r of await q.execute()) {
    const p = byProjectKey.get(r.site_key) ?? { site_key: r.site_key, total: 0, by_code: {} };
    p.total += n(r.total);
    p.by_code[r.error_code ?? ''] = n(r.total);
    byProjectKey.set(r.site_key, p);
  }
  return [...byProjectKey.values()].sort((a, b) => b.total - a.total || a.site_key.localeCompare(b.site_key));
}
