// Opens, clicks and what the e-mails earned (SPEC §17): an e-mail's engagement, a template's rates, the
// dashboard's cart steps, and the attribution of a purchase to the last clicked cart e-mail.
import { notFound } from '../errors.js';
import { fromMinor, NO_CURRENCY } from '../domain/money.js';
import type { Database } from '../db/schema.js';
import type { Transaction } from 'kysely';
import { cartStepFigures, engagementOf, lastHumanCartClick, templateFigures } from '../repos/engagement.js';
import { findTemplateByName } from '../repos/templates.js';
import { iso, type ProjectFilter } from '../repos/types.js';
import { requireProject } from './admin.js';
import type { Deps } from './context.js';

const DAY_MS = 86_400_000;

/** `engagement` of GET /api/admin/emails/{id}: human counts, and the latest hits with machines marked. */
export async function emailEngagement(deps: Deps, emailId: number) {
  const { row, links, hits } = await engagementOf(deps.db.db, emailId);
  return {
    opens: Number(row?.opens ?? 0),
    clicks: Number(row?.clicks ?? 0),
    machine_opens: Number(row?.machine_opens ?? 0),
    machine_clicks: Number(row?.machine_clicks ?? 0),
    first_open_at: iso(row?.first_open_at),
    first_click_at: iso(row?.first_click_at),
    links: links.map((l) => ({ url: l.url, clicks: Number(l.clicks) })),
    hits: hits.map((h) => ({
      at: iso(h.at)!,
      kind: h.kind,
      url: h.url,
      machine: h.machine,
      machine_reason: h.machine_reason,
      ua_category: h.ua_category,
    })),
  };
}

export async function templateStats(deps: Deps, siteKey: string, name: string, q: { since?: string; until?: string }) {
  const db = deps.db.db;
  const project = await requireProject(db, siteKey);
  if (!(await findTemplateByName(db, project.id, name))) throw notFound(`Template ${name}`);
  const now = deps.clock.now();
  const until = q.until ? Date.parse(q.until) : now + 1;
  const since = q.since ? Date.parse(q.since) : until - 30 * DAY_MS;
  const figures = await templateFigures(db, { projectId: project.id, templateKey: name, since, until });
  return { ok: true as const, site_key: project.site_key, name, since: iso(since)!, until: iso(until)!, ...figures };
}

/** The dashboard's `cart_steps`: sent in the window, what they led to, and the money per currency. */
export async function cartSteps(db: Deps['db']['db'], f: { projectId?: ProjectFilter; since: number; until: number }) {
  const { sent, paid } = await cartStepFigures(db, f);
  const key = (c: string, s: string) => `${c}\u0000${s}`;
  const steps = new Map(
    sent.map((s) => [key(s.cart_type, s.step), { ...s, purchased_after_click: 0, recovered_by_currency: {} }]),
  );
  const minor = new Map<string, Record<string, number>>();
  for (const p of paid) {
    const k = key(p.cart_type, p.step);
    const s = steps.get(k) ??
      // Paid after a click on a step whose sending fell before the window's e-mails were counted: shown anyway.
      {
        cart_type: p.cart_type,
        step: p.step,
        sent: 0,
        delivered: 0,
        opened: 0,
        clicked: 0,
        purchased_after_click: 0,
        recovered_by_currency: {},
      };
    s.purchased_after_click += p.orders;
    const cur = p.currency?.trim().toUpperCase() || NO_CURRENCY;
    const m = minor.get(k) ?? {};
    m[cur] = (m[cur] ?? 0) + p.amount;
    minor.set(k, m);
    steps.set(k, s);
  }
  for (const [k, m] of minor)
    steps.get(k)!.recovered_by_currency = Object.fromEntries(Object.entries(m).map(([c, v]) => [c, fromMinor(v)]));
  const order = (s: string) => ({ '1h': 1, '1d': 2, '3d': 3 })[s] ?? 10 + (Number(s.replace(/^step/, '')) || 0);
  return [...steps.values()].sort((a, b) => a.cart_type.localeCompare(b.cart_type) || order(a.step) - order(b.step));
}

export interface AttributedTo {
  scheduled_email_id: number;
  step: string | null;
  template_key: string;
}

/**
 * Called from the purchase's own transaction: the order's cart e-mail last clicked by a person within
 * ATTRIBUTION_WINDOW_DAYS before the purchase, recorded once per order (a repeated purchase reads the
 * first decision back), or null.
 */
export async function attributePurchase(
  trx: Transaction<Database>,
  deps: Pick<Deps, 'config'>,
  p: { projectId: number; orderId: string; eventId: number; now: number; alreadyPaid: boolean },
): Promise<AttributedTo | null> {
  const existing = await trx
    .selectFrom('purchase_attributions as a')
    .innerJoin('scheduled_emails as e', 'e.id', 'a.email_id')
    .select(['e.id', 'e.chain_step', 'e.template_key'])
    .where('a.project_id', '=', p.projectId)
    .where('a.order_id', '=', p.orderId)
    .executeTakeFirst();
  if (existing)
    return { scheduled_email_id: Number(existing.id), step: existing.chain_step, template_key: existing.template_key };
  // A repeated purchase of an order paid before reads the first decision back, never makes a new one.
  if (p.alreadyPaid) return null;
  const since = p.now - deps.config.tracking.attributionWindowDays * DAY_MS;
  const click = await lastHumanCartClick(trx, { projectId: p.projectId, orderId: p.orderId, since, now: p.now });
  if (!click) return null;
  const email = await trx
    .selectFrom('scheduled_emails')
    .select(['id', 'chain_step', 'template_key'])
    .where('id', '=', click.emailId)
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('purchase_attributions')
    .values({
      project_id: p.projectId,
      order_id: p.orderId,
      email_id: click.emailId,
      event_id: p.eventId,
      clicked_at: click.at,
      created_at: p.now,
    })
    .onConflict((oc) => oc.columns(['project_id', 'order_id']).doNothing())
    .execute();
  return { scheduled_email_id: Number(email.id), step: email.chain_step, template_key: email.template_key };
}
