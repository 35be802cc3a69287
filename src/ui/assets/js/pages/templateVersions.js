// @ts-check
// The template editor's contract panels (SPEC §16): what the source being typed requires and what each
// routed event would then have to carry (the analysis endpoint, called as the author types), and the
// template's versions with a diff against the published one; publishing an older one is a rollback.
import { api, describeError, enc } from '../api.js';
import { badge, code, errorBox, h, table, time, toast } from '../dom.js';
import { t } from '../i18n.js';
import { impactBox, impactOf, variablesList } from './contract.js';
import { showError } from '../errors.js';

/** @typedef {import('../pageTypes.js').ImpactEntry} ImpactEntry */
/** @typedef {import('../pageTypes.js').Source} Source */
/**
 * @template R
 * @typedef {import('../pageTypes.js').Column<R>} Column
 */
/**
 * POST /api/admin/templates/analyze (schemas/templates.ts AnalyzeResponse).
 * @typedef {object} Analysis
 * @property {import('../pageTypes.js').TemplateVariable[]} variables
 * @property {{ part: string, line: number, message: string } | null} problem
 * @property {Routed[]} routed the events routed to the template, and what they would then have to carry
 * @property {ImpactEntry[]} impact
 */
/** @typedef {{ event_type: string, required_fields: string[], newly_required: string[] }} Routed */
/** A saved version of a template (schemas/templates.ts VersionList). */
/** @typedef {{ version: number, created_at: string, actor: string | null, published: boolean }} Version */
/** A part's diff against the published version, chunk by chunk (schemas/templates.ts VersionDiff). */
/** @typedef {{ op: 'added' | 'removed' | 'same', value: string }[]} Diff */

/**
 * The analysis panel: variables, routed events, impact. `update(body)` refreshes it.
 * @param {string} site
 * @param {string | null} name the saved template's; null for a new one
 */
export function analysisPanel(site, name) {
  const vars = h('div', { class: 'variables-box', 'aria-live': 'polite' });
  const routed = h('div', {});
  const impact = h('div', {});
  let seq = 0;
  /** @param {Source} source */
  async function update(source) {
    const mine = ++seq;
    /** @type {Analysis} */
    let r;
    try {
      r = await api('POST', '/api/admin/templates/analyze', {
        site_key: site,
        ...(name ? { name } : {}),
        ...source,
      });
    } catch (e) {
      if (mine === seq) vars.replaceChildren(errorBox(describeError(e)));
      return;
    }
    if (mine !== seq) return;
    vars.replaceChildren(
      r.problem ? h('p', { class: 'muted' }, t('contract.fixFirst')) : variablesList(r.variables, false),
    );
    routed.replaceChildren(
      r.routed.length
        ? table(
            /** @satisfies {Column<Routed>[]} */ ([
              { label: t('contract.event'), cell: (x) => code(x.event_type) },
              {
                label: t('contract.mustCarry'),
                cell: (x) =>
                  x.required_fields.map((f) => [
                    code(f),
                    x.newly_required.includes(f) ? [' ', badge(t('contract.new'), 'warn')] : null,
                    ' ',
                  ]),
              },
            ]),
            r.routed,
          )
        : h('p', { class: 'muted' }, t('contract.noRoutes')),
    );
    impact.replaceChildren(impactBox(r.impact) ?? '');
  }
  const node = h(
    'section',
    { class: 'contract', 'aria-label': t('contract.title') },
    h('h2', {}, t('contract.variables')),
    vars,
    h('h3', {}, t('contract.routed')),
    routed,
    impact,
  );
  return { node, update };
}

/**
 * Versions of a saved template, each with its diff against the published one and a publish button.
 * @param {string} site
 * @param {string} name
 * @param {() => void} [onPublished]
 */
export async function versionsPanel(site, name, onPublished) {
  const base = `/api/admin/projects/${enc(site)}/templates/${enc(name)}/versions`;
  const box = h('section', { class: 'versions', 'aria-label': t('versions.title') });
  const diffBox = h('div', { class: 'diff-box', 'aria-live': 'polite' });
  const status = h('div', { 'aria-live': 'polite' });

  /**
   * @param {number} n the version
   * @param {boolean} [confirm] publish although recent requests would then be refused
   */
  async function publish(n, confirm = false) {
    status.replaceChildren();
    try {
      await api('POST', `${base}/${n}/publish`, confirm ? { confirm: true } : {});
      toast(t('versions.published', { n }));
      await draw();
      onPublished?.();
    } catch (e) {
      const impact = impactOf(e);
      if (impact) status.append(impactBox(impact, () => void publish(n, true)) ?? '');
      else showError(status, e);
    }
  }

  /** @param {number} n the version */
  async function showDiff(n) {
    /** @type {{ against: number | null, subject: Diff, html: Diff, text: Diff }} */
    const d = await api('GET', `${base}/${n}/diff`);
    /**
     * @param {string} label
     * @param {Diff} chunks
     */
    const part = (label, chunks) =>
      h(
        'div',
        {},
        h('h4', {}, label),
        h(
          'pre',
          { class: 'diff' },
          chunks.map((c) => h('span', { class: `diff-${c.op}` }, c.value)),
        ),
      );
    diffBox.replaceChildren(
      h('h3', {}, t('versions.diffTitle', { n, against: d.against ?? '—' })),
      part(t('templates.subject'), d.subject),
      part(t('templates.htmlShort'), d.html),
      part(t('templates.textShort'), d.text),
    );
  }

  async function draw() {
    /** @type {import('../pageTypes.js').Items<Version>} */
    const list = await api('GET', base);
    box.replaceChildren(
      h('h2', {}, t('versions.title')),
      table(
        /** @satisfies {Column<Version>[]} */ ([
          { label: t('versions.number'), cell: (v) => String(v.version) },
          { label: t('common.created'), cell: (v) => time(v.created_at) },
          { label: t('versions.actor'), cell: (v) => v.actor ?? '—' },
          {
            label: t('common.status'),
            cell: (v) => (v.published ? badge(t('versions.live'), 'ok') : badge(t('versions.notLive'), 'muted')),
          },
          {
            label: t('common.actions'),
            cell: (v) =>
              v.published
                ? ''
                : h(
                    'div',
                    { class: 'actions' },
                    h(
                      'button',
                      { type: 'button', class: 'small', onclick: () => showDiff(v.version) },
                      t('versions.diff'),
                    ),
                    h(
                      'button',
                      { type: 'button', class: 'small', 'data-write': true, onclick: () => publish(v.version) },
                      t('versions.publish'),
                    ),
                  ),
          },
        ]),
        list.items,
      ),
      status,
      diffBox,
    );
  }
  await draw();
  return box;
}
