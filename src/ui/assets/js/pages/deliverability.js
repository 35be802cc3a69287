// @ts-check
// The dashboard's deliverability part: per project, hard-bounce and complaint rates over 7 and 30 days
// against the providers' limits, and a notice with a Resume button for each project whose campaigns and
// cart chains the complaint rate paused.
import { api, describeError } from '../api.js';
import { badge, confirmDialog, fmtNumber, h, table, time, toast } from '../dom.js';
import { fmtPercent, t } from '../i18n.js';

/**
 * @typedef {import('../types.js').Tone} Tone
 * @typedef {import('../types.js').RateWindow} RateWindow
 * @typedef {import('../types.js').ProjectRates} ProjectRates
 */
const pct = fmtPercent;

/**
 * Projects whose campaigns and cart chains a complaint rate paused, each with its Resume button.
 * @param {ProjectRates[]} rows
 * @param {() => Promise<void>} reload
 */
export function pausedNotices(rows, reload) {
  /** @param {string} siteKey */
  async function resume(siteKey) {
    if (!(await confirmDialog(t('dashboard.resumeQuestion', { site: siteKey }), t('dashboard.resume'), 'primary')))
      return;
    try {
      await api('POST', `/api/admin/projects/${encodeURIComponent(siteKey)}/marketing/resume`);
      toast(t('dashboard.resumed', { site: siteKey }));
      await reload();
    } catch (e) {
      toast(describeError(e), 'bad');
    }
  }
  return rows
    .filter((r) => r.marketing_paused_at)
    .map((r) =>
      h(
        'div',
        { class: 'notice bad', role: 'alert', 'data-paused': r.site_key },
        h(
          'p',
          {},
          t('dashboard.paused', { site: r.site_key, rate: pct(r.days7.complained, r.days7.sent) }),
          ' ',
          time(r.marketing_paused_at),
        ),
        h(
          'button',
          { type: 'button', class: 'small', 'data-write': true, onclick: () => resume(r.site_key) },
          t('dashboard.resume'),
        ),
      ),
    );
}

/** @type {Record<RateWindow['level'], Tone>} */
const LEVEL_TONE = { ok: 'ok', warning: 'warn', stop: 'bad' };

/**
 * Per project, hard-bounce and complaint rates over 7 and 30 days, against the providers' limits.
 * @param {ProjectRates[]} rows
 */
export function deliverability(rows) {
  /**
   * @param {RateWindow} w
   * @param {'bounced' | 'complained'} k
   */
  const rate = (w, k) =>
    h('span', { title: t('dashboard.rateOf', { part: fmtNumber(w[k]), sent: fmtNumber(w.sent) }) }, pct(w[k], w.sent));
  // The whole width of the grid: six columns of figures do not fit half of it (issue 28).
  return h(
    'section',
    { class: 'chart-box wide' },
    h('h2', { class: 'figcaption' }, t('dashboard.deliverability')),
    h('p', { class: 'muted' }, t('dashboard.deliverabilityHelp')),
    table(
      [
        { label: t('common.project'), cell: (r) => r.site_key },
        { label: t('dashboard.bounces7'), class: 'num', cell: (r) => rate(r.days7, 'bounced') },
        { label: t('dashboard.complaints7'), class: 'num', cell: (r) => rate(r.days7, 'complained') },
        { label: t('dashboard.bounces30'), class: 'num', cell: (r) => rate(r.days30, 'bounced') },
        { label: t('dashboard.complaints30'), class: 'num', cell: (r) => rate(r.days30, 'complained') },
        {
          label: t('dashboard.rateLevel'),
          cell: (r) => {
            const level = r.days7.level === 'ok' ? r.days30.level : r.days7.level;
            return badge(t(`dashboard.level.${level}`), LEVEL_TONE[level]);
          },
        },
      ],
      rows,
      { empty: t('dashboard.noSent') },
    ),
  );
}
