// @ts-check
// A project's tracking settings (SPEC §17) on its delivery tab: open pixel and click tracking switches,
// and the UTM parameters added to links that have none. Saved with PATCH /api/admin/projects/{site_key}.
import { api, enc } from '../api.js';
import { checkbox, field, h, toast } from '../dom.js';
import { clearErrors, showError } from '../errors.js';
import { t } from '../i18n.js';

/**
 * @param {Pick<import('../pageTypes.js').Project, 'site_key' | 'tracking' | 'utm'>} p
 * @param {boolean} trackingActive PUBLIC_URL is set; without it nothing is tracked, whatever the switches say
 * @param {() => void} onSaved
 */
export function trackingSettingsPart(p, trackingActive, onSaved) {
  const opensBox = checkbox(t('tracking.opens'), p.tracking.opens, { name: 'track_opens' });
  const txBox = checkbox(t('tracking.transactionalOpens'), p.tracking.transactional_opens, {
    name: 'track_transactional_opens',
  });
  const clicksBox = checkbox(t('tracking.clicks'), p.tracking.clicks, { name: 'track_clicks' });
  const opens = /** @type {HTMLInputElement} */ (opensBox.querySelector('input'));
  const txOpens = /** @type {HTMLInputElement} */ (txBox.querySelector('input'));
  const clicks = /** @type {HTMLInputElement} */ (clicksBox.querySelector('input'));
  /**
   * @param {'source' | 'medium' | 'campaign'} name
   * @returns {HTMLInputElement}
   */
  const utmInput = (name) =>
    h('input', {
      name: `utm_${name}`,
      'data-field': `utm.${name}`,
      maxlength: '200',
      spellcheck: 'false',
      value: p.utm?.[name] ?? '',
    });
  const source = utmInput('source');
  const medium = utmInput('medium');
  const campaign = utmInput('campaign');
  const out = h('div', { 'aria-live': 'polite' });
  return h(
    'form',
    {
      class: 'stack tracking-settings',
      'data-write': true,
      onsubmit: async (/** @type {Event} */ ev) => {
        ev.preventDefault();
        out.replaceChildren();
        const utm = Object.fromEntries(
          [
            ['source', source.value.trim()],
            ['medium', medium.value.trim()],
            ['campaign', campaign.value.trim()],
          ].filter(([, v]) => v !== ''),
        );
        try {
          await api('PATCH', `/api/admin/projects/${enc(p.site_key)}`, {
            tracking: { opens: opens.checked, transactional_opens: txOpens.checked, clicks: clicks.checked },
            // No value at all: no UTM parameters (null clears what was stored).
            utm: Object.keys(utm).length ? utm : null,
          });
          clearErrors(out);
          toast(t('tracking.saved'));
          onSaved();
        } catch (e) {
          showError(out, e);
        }
      },
    },
    trackingActive ? null : inactiveNotice(),
    h('p', { class: 'muted' }, t('tracking.help')),
    opensBox,
    txBox,
    clicksBox,
    h('p', { class: 'muted' }, t('tracking.utmHelp')),
    h(
      'div',
      { class: 'row' },
      field(t('tracking.utmSource'), source, t('tracking.utmSourceHint')),
      field(t('tracking.utmMedium'), medium, t('tracking.utmMediumHint')),
      field(t('tracking.utmCampaign'), campaign, t('tracking.utmCampaignHint')),
    ),
    out,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('common.save'))),
  );
}

/** Said where tracking is switched on but cannot work: both boxes ticked and nothing tracked (issue 39). */
function inactiveNotice() {
  return h(
    'div',
    { class: 'notice', role: 'status', 'data-notice': 'tracking-inactive' },
    h('p', {}, t('tracking.noPublicUrl')),
  );
}

/**
 * The dashboard's notice: PUBLIC_URL is not set while a shown project asks for opens or clicks.
 * @param {import('../types.js').Project[]} projects those the dashboard shows
 * @param {boolean} trackingActive
 */
export function trackingInactiveNotice(projects, trackingActive) {
  const wanted = projects.some((p) => p.tracking.opens || p.tracking.clicks || p.tracking.transactional_opens);
  return trackingActive || !wanted ? null : inactiveNotice();
}
