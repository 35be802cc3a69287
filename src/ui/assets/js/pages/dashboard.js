/* global document, setInterval, clearInterval */
// The dashboard: events per day by outcome and by type, e-mails by outcome, the outbox right now and
// cart recovery. Refreshes itself every minute while the tab is visible (it is meant to stay open).
import { api, projects, qs } from '../api.js';
import { barChart, proportionTable } from '../charts.js';
import { badge, fmtDuration, fmtNumber, h, select, table } from '../dom.js';

const REFRESH_MS = 60_000;
const TOP_TYPES = 7;

// A sum in its own currency; XXX is what was paid without a currency.
function money(amount, currency) {
  try {
    return amount.toLocaleString('en-US', { style: 'currency', currency });
  } catch {
    return `${fmtNumber(amount)} ${currency}`;
  }
}

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

const pct = (part, whole) => (whole ? `${Math.round((part / whole) * 100)} %` : '—');

// An event type with the endpoint it came to, unless that is the transactional one: course_paid from a
// purchase is a payment, course_paid from a transactional send is an e-mail request.
// A request without an event type (a catalog read) is named by its endpoint alone.
const typeLabel = (t) =>
  t.endpoint === 'transactional'
    ? t.event_type
    : t.event_type === '(none)'
      ? t.endpoint
      : `${t.event_type} (${t.endpoint})`;

function eventTypeSeries(byDay, byType) {
  const topRows = byType.slice(0, TOP_TYPES);
  const top = topRows.map((t) => t.key);
  const series = topRows.map((t, k) => ({
    name: typeLabel(t),
    cls: `c-${k}`,
    values: byDay.map((d) => d.by_type[t.key] ?? 0),
  }));
  if (byType.length > TOP_TYPES) {
    series.push({
      name: 'other types',
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

function draw(d) {
  const days = d.events_by_day.map((x) => x.day);
  const accepted = d.events_by_day.reduce((s, x) => s + x.accepted, 0);
  const rejected = d.events_by_day.reduce((s, x) => s + x.rejected, 0);
  const e = d.emails_by_outcome;
  const o = d.outbox;
  const c = d.carts;
  const lagging = o.oldest_due_age_seconds !== null && o.oldest_due_age_seconds > 60;

  const cards = h(
    'div',
    { class: 'cards' },
    card('Events', [
      ['Received', fmtNumber(accepted + rejected)],
      ['Accepted', fmtNumber(accepted)],
      [
        'Rejected',
        h('span', {}, fmtNumber(rejected), ' ', h('small', { class: 'muted' }, pct(rejected, accepted + rejected))),
      ],
    ]),
    card('E-mails', [
      ['Sent', fmtNumber(e.sent)],
      ['Failed', fmtNumber(e.failed)],
      ['Suppressed', fmtNumber(e.suppressed)],
      ['Cancelled', fmtNumber(e.cancelled)],
      ['Pending', fmtNumber(e.pending)],
    ]),
    card(
      'Outbox now',
      [
        ['Due, waiting', fmtNumber(o.queued)],
        ['Scheduled later', fmtNumber(o.scheduled)],
        ['Being sent', fmtNumber(o.sending)],
        [
          'Oldest due',
          o.oldest_due_age_seconds === null
            ? 'none'
            : h('span', {}, fmtDuration(o.oldest_due_age_seconds), lagging ? [' ', badge('behind', 'bad')] : ''),
        ],
      ],
      lagging ? 'alert' : '',
    ),
    card('Cart recovery', [
      ['Orders created', fmtNumber(c.orders_created)],
      [
        'Paid',
        h(
          'span',
          {},
          fmtNumber(c.orders_paid),
          ' ',
          h('small', { class: 'muted' }, pct(c.orders_paid, c.orders_created)),
        ),
      ],
      ['Paid after a cart e-mail', fmtNumber(c.paid_after_cart_email)],
      ...c.amounts.map((a) => [
        `Amount ${a.currency}`,
        h(
          'span',
          {},
          money(a.paid, a.currency),
          ' ',
          h('small', { class: 'muted' }, `recovered ${money(a.recovered, a.currency)}`),
        ),
      ]),
    ]),
    card(
      'Paid in this period',
      Object.keys(d.paid_amount_by_currency).length
        ? Object.entries(d.paid_amount_by_currency).map(([cur, amount]) => [cur, money(amount, cur)])
        : [['Payments', 'none']],
    ),
  );

  return h(
    'div',
    {},
    cards,
    h(
      'div',
      { class: 'chart-grid' },
      barChart({
        title: 'Events per day by outcome',
        labels: days,
        series: [
          { name: 'accepted', cls: 'c-ok', values: d.events_by_day.map((x) => x.accepted) },
          { name: 'rejected', cls: 'c-bad', values: d.events_by_day.map((x) => x.rejected) },
        ],
      }),
      barChart({
        title: 'Events per day by type',
        labels: days,
        series: eventTypeSeries(d.events_by_day, d.events_by_type),
      }),
      barChart({
        title: 'E-mails per day by outcome (by the day they were created)',
        labels: d.emails_by_day.map((x) => x.day),
        series: [
          { name: 'sent', cls: 'c-ok', values: d.emails_by_day.map((x) => x.sent) },
          { name: 'failed', cls: 'c-bad', values: d.emails_by_day.map((x) => x.failed) },
          { name: 'suppressed', cls: 'c-warn', values: d.emails_by_day.map((x) => x.suppressed) },
          { name: 'cancelled', cls: 'c-muted', values: d.emails_by_day.map((x) => x.cancelled) },
          { name: 'pending', cls: 'c-info', values: d.emails_by_day.map((x) => x.pending) },
        ],
      }),
      barChart({
        title: 'Orders per day: created, paid, paid after a cart e-mail',
        stacked: false,
        labels: c.by_day.map((x) => x.day),
        series: [
          { name: 'created', cls: 'c-info', values: c.by_day.map((x) => x.created) },
          { name: 'paid', cls: 'c-ok', values: c.by_day.map((x) => x.paid) },
          { name: 'paid after a cart e-mail', cls: 'c-3', values: c.by_day.map((x) => x.recovered) },
        ],
      }),
    ),
    h(
      'div',
      { class: 'chart-grid' },
      proportionTable({
        title: 'Events by type',
        labelHeader: 'Event type',
        rows: d.events_by_type.map((t) => ({ ...t, label: typeLabel(t) })),
        series: [
          { key: 'accepted', name: 'accepted', cls: 'c-ok' },
          { key: 'rejected', name: 'rejected', cls: 'c-bad' },
        ],
      }),
      h(
        'section',
        { class: 'chart-box' },
        h('h2', { class: 'figcaption' }, 'Carts by type'),
        table(
          [
            { label: 'Cart type', cell: (r) => r.cart_type },
            { label: 'Created', class: 'num', cell: (r) => fmtNumber(r.created) },
            { label: 'Paid', class: 'num', cell: (r) => fmtNumber(r.paid) },
            { label: 'After a cart e-mail', class: 'num', cell: (r) => fmtNumber(r.recovered) },
            { label: 'Conversion', class: 'num', cell: (r) => pct(r.paid, r.created) },
          ],
          c.by_cart_type,
          { empty: 'No orders in this period.' },
        ),
      ),
    ),
  );
}

export async function dashboardPage(ctx) {
  const site = ctx.query.get('site_key') ?? '';
  const days = ctx.query.get('days') ?? '14';
  const url = `/api/admin/dashboard${qs({ site_key: site, days })}`;
  const [all, first] = await Promise.all([projects(), api('GET', url)]);
  const content = h('div', { 'aria-live': 'off' }, draw(first));
  const updated = h('small', { class: 'muted' }, `Updated ${new Date().toLocaleTimeString()}`);

  const timer = setInterval(async () => {
    if (document.hidden || !ctx.isCurrent()) return;
    try {
      const d = await api('GET', url);
      if (!ctx.isCurrent()) return;
      content.replaceChildren(draw(d));
      updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    } catch {
      updated.textContent = 'Refresh failed; will try again';
    }
  }, REFRESH_MS);
  ctx.onLeave(() => clearInterval(timer));

  const projectSel = select(
    [['', 'All projects'], ...all.map((p) => [p.site_key, `${p.name} (${p.site_key})`])],
    site,
    { name: 'site_key', 'aria-label': 'Project' },
  );
  const daysSel = select(
    [
      ['1', 'Today'],
      ['7', '7 days'],
      ['14', '14 days'],
      ['30', '30 days'],
      ['90', '90 days'],
    ],
    days,
    { name: 'days', 'aria-label': 'Period' },
  );
  // The controls are drawn anew with the page: focus goes back to the one that was changed.
  const apply = (ev) =>
    ctx.navigate(`/ui/${qs({ site_key: projectSel.value, days: daysSel.value })}`, {
      focus: `select[name="${ev.target.name}"]`,
    });
  projectSel.addEventListener('change', apply);
  daysSel.addEventListener('change', apply);

  return h(
    'section',
    {},
    h(
      'div',
      { class: 'page-head' },
      h('h1', { tabindex: '-1' }, 'Dashboard'),
      h('div', { class: 'inline-controls' }, projectSel, daysSel, updated),
    ),
    h(
      'p',
      { class: 'muted' },
      `${first.since.slice(0, 10)} to ${new Date(Date.parse(first.until) - 86_400_000).toISOString().slice(0, 10)}, UTC days; today is not over yet.`,
    ),
    content,
  );
}
