// The admin UI dashboard: events, e-mails, outbox and cart recovery over the last days (UTC).
import { paidAmountByCurrency } from '../repos/campaigns.js';
import {
  cartFigures,
  deliverabilityFigures,
  emailFigures,
  eventFigures,
  keyRefusals,
  outboxDepth,
} from '../repos/dashboard.js';
import { sentFigures } from '../repos/engagement.js';
import { KEY_REFUSAL_CODES } from '../domain/refusal.js';
import { rateLevel } from '../domain/bounces.js';
import { iso } from '../repos/types.js';
import { DASHBOARD_DAYS, type DashboardQuery } from '../schemas/adminUi.js';
import { projectFilter } from './admin.js';
import { cartSteps } from './engagement.js';
import type { Deps } from './context.js';

const DAY_MS = 86_400_000;

export async function dashboard(deps: Deps, q: DashboardQuery, scope: readonly number[] | null = null) {
  const { db, dialect } = deps.db;
  const projectId = await projectFilter(db, q.site_key, scope);
  const now = deps.clock.now();
  const until = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS; // the end of today, UTC
  const f = { projectId, since: until - (q.days ?? DASHBOARD_DAYS) * DAY_MS, until, now };
  const [events, emails, outbox, carts, paid, rates, sent, refusals] = await Promise.all([
    eventFigures(db, dialect, f),
    emailFigures(db, dialect, f),
    outboxDepth(db, f),
    cartFigures(db, dialect, f),
    paidAmountByCurrency(db, f),
    deliverabilityFigures(db, f),
    sentFigures(db, f),
    keyRefusals(db, f, KEY_REFUSAL_CODES),
  ]);
  const steps = await cartSteps(db, f);
  const withRates = (w: { sent: number; bounced: number; complained: number }) => ({
    ...w,
    bounce_rate: w.sent ? w.bounced / w.sent : 0,
    complaint_rate: w.sent ? w.complained / w.sent : 0,
    level: rateLevel(w),
  });
  return {
    ok: true as const,
    site_key: q.site_key ?? null,
    since: iso(f.since)!,
    until: iso(f.until)!,
    ...events,
    ...emails,
    emails_sent: sent,
    key_refusals: refusals,
    outbox,
    carts,
    cart_steps: steps,
    paid_amount_by_currency: paid,
    deliverability: rates.map((r) => ({
      site_key: r.site_key,
      marketing_paused_at: iso(r.marketing_paused_at),
      marketing_paused_reason: r.marketing_paused_reason,
      days7: withRates(r.days7),
      days30: withRates(r.days30),
    })),
  };
}
