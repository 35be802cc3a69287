// @ts-check
// The dashboard: events per day by outcome and by type, e-mails by outcome, the outbox right now and
// cart recovery. Refreshes itself every minute while the tab is visible (it is meant to stay open).
import { api, meta, projects, qs } from '../api.js';
import { barChart, proportionTable } from '../charts.js';
import { badge, defined, fmtDuration, fmtNumber, h, named, select, table } from '../dom.js';
import { fmtClock, fmtDay, fmtPercent, intlLocale, nameOf, t } from '../i18n.js';
import { cartStepsPart } from './engagement.js';
import { deliverability, pausedNotices } from './deliverability.js';
import { dashboardChecklist } from './firstRun.js';
import { trackingInactiveNotice } from './trackingSettings.js';

/**
 * @typedef {import('../dom.js').Child} Child
 * @typedef {import('../charts.js').Series} Series
 * @typedef {import('../types.js').Dashboard} Dashboard
 * @typedef {import('../types.js').EventDay} EventDay
 * @typedef {import('../types.js').EventTypeRow} EventTypeRow
 */
const REFRESH_MS = 60_000;
const TOP_TYPES = 7;

/**
 * A sum in its own currency, in the UI's locale; XXX is what was paid without a currency.
 * @param {number} amount
 * @param {string} currency
 */
function money(amount, currency) {
  try {
    return amount.toLocaleString(intlLocale(), { style: 'currency', currency });
  } catch {
    return `${fmtNumber(amount)} ${currency}`;
  }
}

/**
 * A card of figures: a title over [label, value] rows.
 * @param {string} title
 * @param {readonly (readonly Child[])[]} rows
 * @param {string} [tone] a class: alert
 */
function card(title, rows, tone) {
  return h(
    'section',
    { class: `card ${tone ?? ''}` },
    h('h2', {}, title),
    h(
      'dl',
      {},
      rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    ),
  );
}

const pct = fmtPercent;

// An event type by its name (issue 37: the one dictionary, src/domain/names.ts) with the endpoint it came
// to, unless that is the transactional one: course_paid from a purchase is a payment, course_paid from a
// transactional send is an e-mail request. A request without an event type (a catalog read) is named by
// its endpoint alone.
/** @param {Pick<EventTypeRow, 'endpoint' | 'event_type'>} row */
const typeLabel = (row) =>
  row.endpoint === 'transactional'
    ? nameOf('event_type', row.event_type)
    : row.event_type === '(none)'
      ? nameOf('endpoint', row.endpoint)
      : `${nameOf('event_type', row.event_type)} (${nameOf('endpoint', row.endpoint)})`;

/**
 * The events per day of the most frequent types, the others summed.
 * @param {EventDay[]} byDay
 * @param {EventTypeRow[]} byType most frequent first
 * @returns {Series[]}
 */
function eventTypeSeries(byDay, byType) {
  const topRows = byType.slice(0, TOP_TYPES);
  const top = topRows.map((t) => t.key);
  const series = topRows.map((row, k) => ({
    name: typeLabel(row),
    cls: `c-${k}`,
    values: byDay.map((d) => d.by_type[row.key] ?? 0),
  }));
  if (byType.length > TOP_TYPES) {
    series.push({
      name: t('dashboard.otherTypes'),
      cls: 'c-other',
      values: byDay.map((d) =>
        Object.entries(d.by_type)
          .filter(([t]) => !top.includes(t))
          .reduce((sum, [, v]) => sum + v, 0),
      ),
    });
  }
  return series;
}

/**
 * Requests refused because of their key, per project (issue 37): a site whose key stopped working shows
 * here; each project links to its refused events.
 * @param {Dashboard['key_refusals']} rows
 */
function keyRefusalsCard(rows) {
  const total = rows.reduce((sum, r) => sum + r.total, 0);
  return card(
    t('dashboard.keyRefusals'),
    rows.length
      ? rows.map((r) => [
          h('a', { href: `/ui/events${qs({ site_key: r.site_key, status: 'rejected' })}` }, r.site_key),
          h(
            'span',
            { title: Object.keys(r.by_code).join(', ') },
            fmtNumber(r.total),
            ' ',
            h(
              'small',
              { class: 'muted' },
              Object.keys(r.by_code)
                .map((c) => t(`dashboard.keyRefusal.${c}`))
                .join(', '),
            ),
          ),
        ])
      : [[t('dashboard.keyRefusalsNone'), '0']],
    total ? 'alert' : '',
  );
}

/**
 * @param {Dashboard} d
 * @param {() => Promise<void>} reload
 */
function draw(d, reload) {
  const days = d.events_by_day.map((x) => x.day);
  const accepted = d.events_by_day.reduce((s, x) => s + x.accepted, 0);
  const rejected = d.events_by_day.reduce((s, x) => s + x.rejected, 0);
  // A retry whose body changed under a used idempotency key: its first call did the work (issue 28).
  const repeated = d.events_by_day.reduce((s, x) => s + x.repeated, 0);
  const received = accepted + rejected + repeated;
  const e = d.emails_by_outcome;
  const s = d.emails_sent;
  const o = d.outbox;
  const c = d.carts;
  const lagging = o.oldest_due_age_seconds !== null && o.oldest_due_age_seconds > 60;

  const cards = h(
    'div',
    { class: 'cards' },
    card(t('nav.events'), [
      [t('dashboard.received'), fmtNumber(received)],
      [t('events.accepted'), fmtNumber(accepted)],
      [
        t('events.rejected'),
        h('span', {}, fmtNumber(rejected), ' ', h('small', { class: 'muted' }, pct(rejected, received))),
      ],
      [t('dashboard.repeated'), fmtNumber(repeated)],
    ]),
    keyRefusalsCard(d.key_refusals),
    // Sent, delivered, opened and clicked by the definitions the cart steps use (repos/engagement.ts).
    card(t('nav.emails'), [
      [defined(t('dashboard.sent'), t('figures.sent')), fmtNumber(s.sent)],
      [
        defined(t('dashboard.delivered'), t('figures.delivered')),
        h(
          'span',
          { 'data-figure': 'delivered' },
          fmtNumber(s.delivered),
          ' ',
          h('small', { class: 'muted' }, pct(s.delivered, s.sent)),
        ),
      ],
      [
        defined(t('engagement.opened'), t('figures.opened')),
        h(
          'span',
          { 'data-figure': 'opened' },
          fmtNumber(s.opened),
          ' ',
          h('small', { class: 'muted' }, pct(s.opened, s.delivered)),
        ),
      ],
      [
        defined(t('engagement.clicked'), t('figures.clicked')),
        h(
          'span',
          { 'data-figure': 'clicked' },
          fmtNumber(s.clicked),
          ' ',
          h('small', { class: 'muted' }, pct(s.clicked, s.delivered)),
        ),
      ],
      [t('dashboard.bounced'), fmtNumber(e.bounced)],
      [t('dashboard.softBounced'), fmtNumber(e.soft_bounced)],
      [t('dashboard.complained'), fmtNumber(e.complained)],
      [t('dashboard.failed'), fmtNumber(e.failed)],
      [t('dashboard.suppressed'), fmtNumber(e.suppressed)],
      [t('dashboard.cancelled'), fmtNumber(e.cancelled)],
      [t('dashboard.pending'), fmtNumber(e.pending)],
    ]),
    card(
      t('dashboard.outbox'),
      [
        [t('dashboard.due'), fmtNumber(o.queued)],
        [t('dashboard.later'), fmtNumber(o.scheduled)],
        [t('dashboard.sending'), fmtNumber(o.sending)],
        [
          t('dashboard.overQuota'),
          o.over_quota ? h('span', {}, fmtNumber(o.over_quota), ' ', badge(t('dashboard.quotaReached'), 'warn')) : '0',
        ],
        [
          t('dashboard.oldestDue'),
          o.oldest_due_age_seconds === null
            ? t('dashboard.none')
            : h(
                'span',
                {},
                fmtDuration(o.oldest_due_age_seconds),
                lagging ? [' ', badge(t('dashboard.behind'), 'bad')] : '',
              ),
        ],
      ],
      lagging ? 'alert' : '',
    ),
    card(t('dashboard.carts'), [
      [t('dashboard.ordersCreated'), fmtNumber(c.orders_created)],
      [
        t('dashboard.paid'),
        h(
          'span',
          {},
          fmtNumber(c.orders_paid),
          ' ',
          h('small', { class: 'muted' }, pct(c.orders_paid, c.orders_created)),
        ),
      ],
      [t('dashboard.paidAfterCart'), fmtNumber(c.paid_after_cart_email)],
      ...c.amounts.map((a) => [
        t('dashboard.amount', { currency: a.currency || t('dashboard.noCurrency') }),
        h(
          'span',
          {},
          money(a.paid, a.currency),
          ' ',
          h('small', { class: 'muted' }, t('dashboard.recovered', { amount: money(a.recovered, a.currency) })),
        ),
      ]),
    ]),
    card(
      t('dashboard.paidInPeriod'),
      Object.keys(d.paid_amount_by_currency).length
        ? Object.entries(d.paid_amount_by_currency).map(([cur, amount]) => [cur, money(amount, cur)])
        : [[t('dashboard.payments'), t('dashboard.noPayments')]],
    ),
  );

  return h(
    'div',
    {},
    pausedNotices(d.deliverability ?? [], reload),
    cards,
    h(
      'div',
      { class: 'chart-grid' },
      barChart({
        title: t('dashboard.chart.eventsByOutcome'),
        labels: days,
        series: [
          { name: t('status.accepted'), cls: 'c-ok', values: d.events_by_day.map((x) => x.accepted) },
          { name: t('status.rejected'), cls: 'c-bad', values: d.events_by_day.map((x) => x.rejected) },
          { name: t('status.repeated'), cls: 'c-info', values: d.events_by_day.map((x) => x.repeated) },
        ],
      }),
      barChart({
        title: t('dashboard.chart.eventsByType'),
        labels: days,
        series: eventTypeSeries(d.events_by_day, d.events_by_type),
      }),
      barChart({
        title: t('dashboard.chart.emailsByOutcome'),
        labels: d.emails_by_day.map((x) => x.day),
        series: [
          {
            name: t('status.sent'),
            cls: 'c-ok',
            // Accepted by the relay, whatever a report said later: the card's «Отправлено».
            values: d.emails_by_day.map((x) => x.sent + x.delivered + x.bounced + x.soft_bounced + x.complained),
          },
          { name: t('status.failed'), cls: 'c-bad', values: d.emails_by_day.map((x) => x.failed) },
          { name: t('status.suppressed'), cls: 'c-warn', values: d.emails_by_day.map((x) => x.suppressed) },
          { name: t('status.cancelled'), cls: 'c-muted', values: d.emails_by_day.map((x) => x.cancelled) },
          { name: t('status.pending'), cls: 'c-info', values: d.emails_by_day.map((x) => x.pending) },
        ],
      }),
      barChart({
        title: t('dashboard.chart.orders'),
        stacked: false,
        labels: c.by_day.map((x) => x.day),
        series: [
          { name: t('dashboard.series.created'), cls: 'c-info', values: c.by_day.map((x) => x.created) },
          { name: t('dashboard.series.paid'), cls: 'c-ok', values: c.by_day.map((x) => x.paid) },
          { name: t('dashboard.series.recovered'), cls: 'c-3', values: c.by_day.map((x) => x.recovered) },
        ],
      }),
    ),
    h(
      'div',
      { class: 'chart-grid' },
      proportionTable({
        title: t('dashboard.chart.byType'),
        labelHeader: t('events.eventType'),
        rows: d.events_by_type.map((x) => ({ ...x, label: typeLabel(x) })),
        series: [
          { key: 'accepted', name: t('status.accepted'), cls: 'c-ok' },
          { key: 'rejected', name: t('status.rejected'), cls: 'c-bad' },
          { key: 'repeated', name: t('status.repeated'), cls: 'c-info' },
        ],
      }),
      h(
        'section',
        { class: 'chart-box' },
        h('h2', { class: 'figcaption' }, t('dashboard.cartsByType')),
        table(
          [
            { label: t('dashboard.cartType'), cell: (r) => named('cart_type', r.cart_type) },
            { label: t('common.created'), class: 'num', cell: (r) => fmtNumber(r.created) },
            { label: t('dashboard.paid'), class: 'num', cell: (r) => fmtNumber(r.paid) },
            { label: t('dashboard.afterCart'), class: 'num', cell: (r) => fmtNumber(r.recovered) },
            { label: t('dashboard.conversion'), class: 'num', cell: (r) => pct(r.paid, r.created) },
          ],
          c.by_cart_type,
          { empty: t('dashboard.noOrders') },
        ),
      ),
      deliverability(d.deliverability ?? []),
    ),
    d.cart_steps ? cartStepsPart(d.cart_steps) : null,
  );
}

/** @param {import('../types.js').PageContext} ctx */
export async function dashboardPage(ctx) {
  const site = ctx.query.get('site_key') ?? '';
  const days = ctx.query.get('days') ?? '14';
  const url = `/api/admin/dashboard${qs({ site_key: site, days })}`;
  /** @type {[import('../types.js').Project[], Dashboard, import('../types.js').UiMeta]} */
  const [all, first, m] = await Promise.all([projects(), api('GET', url), meta()]);
  // After setup and while a project is on its way to its first e-mail: the steps, above the figures.
  const checklist = await dashboardChecklist(all, site);
  const content = h('div', { 'aria-live': 'off' });
  /** @type {() => Promise<void>} */
  const reload = async () => content.replaceChildren(draw(await api('GET', url), reload));
  content.replaceChildren(draw(first, reload));
  const updated = h('small', { class: 'muted' }, t('dashboard.updated', { time: fmtClock(new Date()) }));

  const timer = setInterval(async () => {
    if (document.hidden || !ctx.isCurrent()) return;
    try {
      /** @type {Dashboard} */
      const d = await api('GET', url);
      if (!ctx.isCurrent()) return;
      content.replaceChildren(draw(d, reload));
      updated.textContent = t('dashboard.updated', { time: fmtClock(new Date()) });
    } catch {
      updated.textContent = t('dashboard.refreshFailed');
    }
  }, REFRESH_MS);
  ctx.onLeave(() => clearInterval(timer));

  /** @type {HTMLSelectElement} */
  const projectSel = select(
    [['', t('common.allProjects')], ...all.map((p) => [p.site_key, `${p.name} (${p.site_key})`])],
    site,
    { name: 'site_key', 'aria-label': t('common.project') },
  );
  /** @type {HTMLSelectElement} */
  const daysSel = select(
    [['1', t('dashboard.today')], ...[7, 14, 30, 90].map((n) => [String(n), t('dashboard.days', { count: n, n })])],
    days,
    { name: 'days', 'aria-label': t('dashboard.period') },
  );
  // The controls are drawn anew with the page: focus goes back to the one that was changed.
  /** @param {Event} ev a change of one of the two selects */
  const apply = (ev) =>
    ctx.navigate(`/ui/${qs({ site_key: projectSel.value, days: daysSel.value })}`, {
      focus: `select[name="${/** @type {HTMLSelectElement} */ (ev.target).name}"]`,
    });
  projectSel.addEventListener('change', apply);
  daysSel.addEventListener('change', apply);

  return h(
    'section',
    {},
    h(
      'div',
      { class: 'page-head' },
      h('h1', { tabindex: '-1' }, t('nav.dashboard')),
      h('div', { class: 'inline-controls' }, projectSel, daysSel, updated),
    ),
    h(
      'p',
      { class: 'muted' },
      t('dashboard.range', {
        from: fmtDay(first.since.slice(0, 10)),
        to: fmtDay(new Date(Date.parse(first.until) - 86_400_000).toISOString().slice(0, 10)),
      }),
    ),
    trackingInactiveNotice(site ? all.filter((p) => p.site_key === site) : all, m.tracking_active),
    checklist,
    content,
  );
}
