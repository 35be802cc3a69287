// Reading opens and clicks (SPEC §17): one e-mail's engagement, the last human click on an order's
// cart e-mails (attribution), and the figures per cart step and per template.
import { sql } from 'kysely';
import { fromFlag } from '../db/flags.js';
import { defaultTopic } from '../domain/consent.js';
import { EMAIL_KINDS, SENT_STATUSES } from '../domain/statuses.js';
import type { ProjectFilter } from './types.js';
import { byProject, sumMinor, type Executor } from './types.js';

/** Accepted by the relay and not bounced back: `delivered` in the figures (docs/decisions.md). */
export const DELIVERED_STATUSES = ['sent', 'delivered', 'complained'] as const;
export const BOUNCED_STATUSES = ['bounced', 'soft_bounced'] as const;

export async function engagementOf(db: Executor, emailId: number) {
  const [row, links, hits] = await Promise.all([
    db
      .selectFrom('email_engagement')
      .select(['opens', 'clicks', 'machine_opens', 'machine_clicks', 'first_open_at', 'first_click_at'])
      .where('email_id', '=', emailId)
      .executeTakeFirst(),
    db
      .selectFrom('email_link_clicks')
      .select(['position', 'url', 'clicks'])
      .where('email_id', '=', emailId)
      .orderBy('position')
      .execute(),
    db
      .selectFrom('tracking_hits')
      .select(['at', 'kind', 'url', 'machine', 'machine_reason', 'ua_category'])
      .where('email_id', '=', emailId)
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(100)
      .execute(),
  ]);
  return { row, links, hits: hits.map((h) => ({ ...h, machine: fromFlag(h.machine) })) };
}

/**
 * The order's cart e-mail with the latest human click at or before `now` and after `since`: from the
 * folded counters, and from hits not yet folded (a purchase right after a click must not miss it).
 */
export async function lastHumanCartClick(
  db: Executor,
  o: { projectId: number; orderId: string; since: number; now: number },
): Promise<{ emailId: number; at: number } | null> {
  const cartEmails = db
    .selectFrom('scheduled_emails')
    .select('id')
    .where('project_id', '=', o.projectId)
    .where('order_id', '=', o.orderId)
    .where('kind', '=', 'cart')
    .where('is_test', '=', 0);
  const [folded, pending] = await Promise.all([
    db
      .selectFrom('email_engagement')
      .select(['email_id', 'last_click_at'])
      .where('email_id', 'in', cartEmails)
      .where('last_click_at', '>=', o.since)
      .where('last_click_at', '<=', o.now)
      .orderBy('last_click_at', 'desc')
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('tracking_hits')
      .select(['email_id', 'at'])
      .where('email_id', 'in', cartEmails)
      .where('kind', '=', 'click')
      .where('machine', '=', 0)
      .where('at', '>=', o.since)
      .where('at', '<=', o.now)
      .orderBy('at', 'desc')
      .limit(1)
      .executeTakeFirst(),
  ]);
  const a = folded ? { emailId: Number(folded.email_id), at: Number(folded.last_click_at) } : null;
  const b = pending ? { emailId: Number(pending.email_id), at: Number(pending.at) } : null;
  if (!a) return b;
  if (!b) return a;
  return b.at > a.at ? b : a;
}

const n = (v: unknown) => Number(v ?? 0);
const countIf = (cond: ReturnType<typeof sql>) => sql<number>`sum(case when ${cond} then 1 else 0 end)`;

/**
 * The one definition of sent, delivered, opened and clicked (issue 37), for every figure that shows them
 * (the dashboard's e-mails card, the cart steps, a template's rates): over `scheduled_emails as e`
 * left-joined with `email_engagement as g`, restricted to SENT_STATUSES by the caller. Sent: the relay
 * accepted it. Delivered: sent and not bounced back (no report needed: most receivers send none).
 * Opened, clicked: by a person at least once (machines are counted apart).
 */
const sentColumns = () =>
  [
    sql<number>`count(*)`.as('sent'),
    countIf(sql`e.status in (${sql.join(DELIVERED_STATUSES)})`).as('delivered'),
    countIf(sql`g.opens > 0`).as('opened'),
    countIf(sql`g.clicks > 0`).as('clicked'),
  ] as const;

/** Every e-mail sent in [since, until) (by sent_at, test sends left out), by the definition above. */
export async function sentFigures(db: Executor, f: { projectId?: ProjectFilter; since: number; until: number }) {
  let q = db
    .selectFrom('scheduled_emails as e')
    .leftJoin('email_engagement as g', 'g.email_id', 'e.id')
    .select(sentColumns())
    .where('e.is_test', '=', 0)
    .where('e.status', 'in', [...SENT_STATUSES])
    .where('e.sent_at', '>=', f.since)
    .where('e.sent_at', '<', f.until);
  if (f.projectId !== undefined) q = q.where('e.project_id', ...byProject(f.projectId));
  const r = await q.executeTakeFirst();
  return { sent: n(r?.sent), delivered: n(r?.delivered), opened: n(r?.opened), clicked: n(r?.clicked) };
}

/** Per cart type and step, the cart e-mails sent in [since, until) and what they led to (SPEC §17). */
export async function cartStepFigures(db: Executor, f: { projectId?: ProjectFilter; since: number; until: number }) {
  let q = db
    .selectFrom('scheduled_emails as e')
    .innerJoin('orders as o', (j) =>
      j.onRef('o.project_id', '=', 'e.project_id').onRef('o.order_id', '=', 'e.order_id'),
    )
    .leftJoin('email_engagement as g', 'g.email_id', 'e.id')
    .select(['o.cart_type', 'e.chain_step', ...sentColumns()])
    .where('e.kind', '=', 'cart')
    .where('e.is_test', '=', 0)
    .where('e.status', 'in', [...SENT_STATUSES])
    .where('e.sent_at', '>=', f.since)
    .where('e.sent_at', '<', f.until)
    .groupBy(['o.cart_type', 'e.chain_step']);
  if (f.projectId !== undefined) q = q.where('e.project_id', ...byProject(f.projectId));
  let p = db
    .selectFrom('purchase_attributions as a')
    .innerJoin('scheduled_emails as e', 'e.id', 'a.email_id')
    .innerJoin('orders as o', (j) =>
      j.onRef('o.project_id', '=', 'a.project_id').onRef('o.order_id', '=', 'a.order_id'),
    )
    .select([
      'o.cart_type',
      'e.chain_step',
      'o.currency',
      sql<number>`count(*)`.as('orders'),
      sumMinor(sql.ref('o.amount_minor')).as('amount'),
    ])
    .where('e.sent_at', '>=', f.since)
    .where('e.sent_at', '<', f.until)
    .groupBy(['o.cart_type', 'e.chain_step', 'o.currency']);
  if (f.projectId !== undefined) p = p.where('a.project_id', ...byProject(f.projectId));
  const [rows, paid] = await Promise.all([q.execute(), p.execute()]);
  return {
    sent: rows.map((r) => ({
      cart_type: r.cart_type,
      step: r.chain_step ?? '',
      sent: n(r.sent),
      delivered: n(r.delivered),
      opened: n(r.opened),
      clicked: n(r.clicked),
    })),
    paid: paid.map((r) => ({
      cart_type: r.cart_type,
      step: r.chain_step ?? '',
      currency: r.currency,
      orders: n(r.orders),
      amount: n(r.amount),
    })),
  };
}

/** A template's e-mails sent in [since, until) and what became of them (SPEC §17, human counts). */
export async function templateFigures(
  db: Executor,
  f: { projectId: number; templateKey: string; since: number; until: number },
) {
  const row = await db
    .selectFrom('scheduled_emails as e')
    .leftJoin('email_engagement as g', 'g.email_id', 'e.id')
    .select([
      sql<number>`count(*)`.as('sent'),
      countIf(sql`e.status in (${sql.join(DELIVERED_STATUSES)})`).as('delivered'),
      countIf(sql`e.status in (${sql.join(BOUNCED_STATUSES)})`).as('bounced'),
      countIf(sql`e.status = 'complained'`).as('complained'),
      countIf(sql`g.opens > 0`).as('opened'),
      countIf(sql`g.clicks > 0`).as('clicked'),
    ])
    .where('e.project_id', '=', f.projectId)
    .where('e.template_key', '=', f.templateKey)
    .where('e.is_test', '=', 0)
    .where('e.status', 'in', [...SENT_STATUSES])
    .where('e.sent_at', '>=', f.since)
    .where('e.sent_at', '<', f.until)
    .executeTakeFirst();
  // Unsubscribed: contacts who left while this template's e-mail was the last one they had been sent in
  // the window (the unsubscribe link names the contact, not the e-mail): a full unsubscribe, or a
  // withdrawal from the topic of that e-mail (a one-click on a cart reminder leaves cart_reminders only).
  const unsub = await sql<{ n: number | string }>`
    select count(distinct x.contact_id) as n
    from (
      select c.id as contact_id, c.status_changed_at as at, cast(null as text) as topic
        from contacts c where c.project_id = ${f.projectId} and c.status = 'unsubscribed'
      union all
      select cr.contact_id, cr.at, cr.topic
        from consent_records cr where cr.project_id = ${f.projectId} and cr.granted = 0
    ) x
    join scheduled_emails e on e.id = (
      select l.id from scheduled_emails l
      where l.contact_id = x.contact_id and l.is_test = 0 and l.sent_at is not null
        and l.sent_at <= x.at and l.sent_at >= ${f.since} and l.sent_at < ${f.until}
      order by l.sent_at desc, l.id desc limit 1)
    where e.template_key = ${f.templateKey} and (x.topic is null or x.topic = ${emailTopicSql('e')})`.execute(db);
  return {
    sent: n(row?.sent),
    delivered: n(row?.delivered),
    bounced: n(row?.bounced),
    complained: n(row?.complained),
    opened: n(row?.opened),
    clicked: n(row?.clicked),
    unsubscribed: n(unsub.rows[0]?.n),
  };
}

/** An e-mail's consent topic in SQL: its own, else the default of its kind (domain/consent.ts topicOf). */
function emailTopicSql(alias: string) {
  const kind = sql.ref(`${alias}.kind`);
  const cases = sql.join(
    EMAIL_KINDS.map((k) => sql`when ${sql.lit(k)} then ${sql.lit(defaultTopic(k))}`),
    sql` `,
  );
  return sql`coalesce(${sql.ref(`${alias}.topic`)}, case ${kind} ${cases} end)`;
}
