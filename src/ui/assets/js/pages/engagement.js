// @ts-check
// Opens, clicks and what the e-mails earned (SPEC §17), for three pages: the dashboard's cart steps,
// an e-mail's engagement (people's hits, machines' marked apart) and a template's rates.
import { api, enc } from '../api.js';
import { badge, defined, facts, fmtNumber, h, named, table, time } from '../dom.js';
import { fmtPercent, intlLocale, t } from '../i18n.js';

/**
 * @template R
 * @typedef {import('../pageTypes.js').Column<R>} Column
 */
/**
 * A cart type's step on the dashboard (schemas/adminUi.ts DashboardResponse cart_steps).
 * @typedef {object} CartStep
 * @property {string} cart_type
 * @property {string} step 1h, 1d, 3d, or step<n> of a sequence
 * @property {number} sent
 * @property {number} delivered
 * @property {number} opened
 * @property {number} clicked
 * @property {number} purchased_after_click
 * @property {Record<string, number>} recovered_by_currency
 */
/** @typedef {import('../pageTypes.js').Engagement} Engagement */
/** @typedef {import('../pageTypes.js').Hit} Hit */
/**
 * GET /api/admin/projects/{site_key}/templates/{name}/stats (schemas/chronology.ts TemplateStats).
 * @typedef {{ sent: number, delivered: number, bounced: number, complained: number, opened: number,
 *   clicked: number, unsubscribed: number }} TemplateStats
 */

/**
 * @param {number} amount
 * @param {string} currency ISO 4217 code (XXX: recorded without one)
 */
function money(amount, currency) {
  try {
    return amount.toLocaleString(intlLocale(), { style: 'currency', currency });
  } catch {
    return `${fmtNumber(amount)} ${currency}`;
  }
}

/**
 * @param {number} n
 * @param {number} of
 */
const withRate = (n, of) => h('span', {}, fmtNumber(n), ' ', h('small', { class: 'muted' }, fmtPercent(n, of)));

/**
 * The dashboard's table: per cart type and step, sent → delivered → opened → clicked → paid, and money.
 * @param {CartStep[]} steps
 */
export function cartStepsPart(steps) {
  return h(
    'section',
    { class: 'chart-box cart-steps' },
    h('h2', { class: 'figcaption' }, t('engagement.cartSteps')),
    table(
      /** @satisfies {Column<CartStep>[]} */ ([
        { label: t('dashboard.cartType'), cell: (r) => named('cart_type', r.cart_type) },
        { label: t('engagement.step'), cell: (r) => named('step', r.step) },
        // The same definitions as the dashboard's e-mails card (repos/engagement.ts sentColumns).
        { label: defined(t('engagement.sent'), t('figures.sent')), class: 'num', cell: (r) => fmtNumber(r.sent) },
        {
          label: defined(t('engagement.delivered'), t('figures.delivered')),
          class: 'num',
          cell: (r) => withRate(r.delivered, r.sent),
        },
        {
          label: defined(t('engagement.opened'), t('figures.opened')),
          class: 'num',
          cell: (r) => withRate(r.opened, r.delivered),
        },
        {
          label: defined(t('engagement.clicked'), t('figures.clicked')),
          class: 'num',
          cell: (r) => withRate(r.clicked, r.delivered),
        },
        { label: t('engagement.paidAfterClick'), class: 'num', cell: (r) => fmtNumber(r.purchased_after_click) },
        {
          label: t('engagement.recovered'),
          class: 'num',
          cell: (r) => {
            const m = Object.entries(r.recovered_by_currency);
            return m.length ? m.map(([cur, v]) => money(v, cur)).join(', ') : '—';
          },
        },
      ]),
      steps,
      { empty: t('engagement.noCartSteps'), caption: t('engagement.cartStepsNote') },
    ),
  );
}

/**
 * An e-mail's opens and clicks: people's counts, the links they followed, and the latest hits.
 * @param {Engagement} g
 */
export function engagementPart(g) {
  return h(
    'div',
    { class: 'engagement' },
    facts([
      [t('engagement.opens'), fmtNumber(g.opens)],
      [t('engagement.firstOpen'), time(g.first_open_at)],
      [t('engagement.clicks'), fmtNumber(g.clicks)],
      [t('engagement.firstClick'), time(g.first_click_at)],
      [
        t('engagement.machines'),
        t('engagement.machineCounts', { opens: fmtNumber(g.machine_opens), clicks: fmtNumber(g.machine_clicks) }),
      ],
    ]),
    h('h3', {}, t('engagement.links')),
    table(
      /** @satisfies {Column<Engagement['links'][number]>[]} */ ([
        { label: t('engagement.url'), cell: (l) => h('span', { class: 'mono break' }, l.url) },
        { label: t('engagement.clicks'), class: 'num', cell: (l) => fmtNumber(l.clicks) },
      ]),
      g.links,
      { empty: t('engagement.noClicks') },
    ),
    h('h3', {}, t('engagement.hits')),
    table(
      /** @satisfies {Column<Hit>[]} */ ([
        { label: t('engagement.at'), cell: (x) => time(x.at) },
        { label: t('engagement.kind'), cell: (x) => t(`engagement.kind.${x.kind}`) },
        {
          label: t('engagement.who'),
          cell: (x) =>
            x.machine ? badge(t(`engagement.reason.${x.machine_reason}`), 'warn') : badge(t('engagement.person'), 'ok'),
        },
        { label: t('engagement.client'), cell: (x) => t(`engagement.ua.${x.ua_category}`) },
        { label: t('engagement.url'), cell: (x) => (x.url ? h('span', { class: 'mono break' }, x.url) : '—') },
      ]),
      g.hits,
      { empty: t('engagement.noHits'), rowClass: (/** @type {Hit} */ x) => (x.machine ? 'machine-hit' : null) },
    ),
  );
}

/**
 * A template's rates over the last 30 days, loaded after the page shows.
 * @param {string} site
 * @param {string} name
 */
export function templateRatesPart(site, name) {
  const box = h('section', { class: 'template-rates', 'aria-live': 'polite' }, h('p', { class: 'muted' }, '…'));
  void api('GET', `/api/admin/projects/${enc(site)}/templates/${enc(name)}/stats`)
    .then((/** @type {TemplateStats} */ s) => {
      box.replaceChildren(
        h('h2', {}, t('engagement.templateRates')),
        facts([
          [t('engagement.sent'), fmtNumber(s.sent)],
          [t('engagement.delivered'), withRate(s.delivered, s.sent)],
          [t('engagement.bounced'), withRate(s.bounced, s.sent)],
          [t('engagement.complained'), withRate(s.complained, s.delivered)],
          [t('engagement.opened'), withRate(s.opened, s.delivered)],
          [t('engagement.clicked'), withRate(s.clicked, s.delivered)],
          [t('engagement.unsubscribed'), withRate(s.unsubscribed, s.delivered)],
        ]),
        h('p', { class: 'muted' }, t('engagement.ratesNote')),
      );
    })
    .catch(() => box.replaceChildren());
  return box;
}
