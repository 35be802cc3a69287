// @ts-check
// Consent and a person's data (SPEC §18): the project's topics (a tab of the project page), and on a
// contact's page its subscriptions, its consent records (source, time, text version, IP), the export
// and the erasure, asked for with a confirmation that names the address.
import { exportViewer } from './contactExport.js';
import { api, enc, meta } from '../api.js';
import { badge, checkbox, code, confirmDialog, field, h, table, time, toast } from '../dom.js';
import { fmtTime, t } from '../i18n.js';
import { showError } from '../errors.js';

/**
 * @template R
 * @typedef {import('../pageTypes.js').Column<R>} Column
 */
/** A consent topic of the project (schemas/consent.ts TopicSchema). */
/** @typedef {{ key: string, title: string, advertising: boolean, require_consent: boolean }} Topic */

/** @param {boolean | null | undefined} v */
const yesNo = (v) => (v === null || v === undefined ? '—' : v ? t('consent.yes') : t('consent.no'));

/** @type {import('../pageTypes.js').ProjectTab} */
export async function topicsTab(ctx, p) {
  /** @type {[{ topics: Topic[] }, import('../types.js').UiMeta]} */
  const [d, m] = await Promise.all([api('GET', `/api/admin/projects/${enc(p.site_key)}/topics`), meta()]);
  const status = h('div', { 'aria-live': 'polite' });
  // Each topic with its controls: the title's input and the two switches (labels holding a checkbox).
  const rows = d.topics.map((x) => ({
    ...x,
    title: h('input', {
      value: x.title,
      maxlength: '200',
      required: true,
      'aria-label': t('topics.titleOf', { key: x.key }),
    }),
    advertising: checkbox(t('topics.advertising'), x.advertising, { disabled: x.key === 'transactional' || null }),
    require: checkbox(t('topics.requireConsent'), x.require_consent, { disabled: x.key === 'transactional' || null }),
  }));
  /** @typedef {typeof rows[number]} Row */
  /** @param {HTMLElement} box a switch: a label holding its checkbox */
  const isOn = (box) => /** @type {HTMLInputElement} */ (box.querySelector('input')).checked;
  /** @type {HTMLInputElement} */
  const key = h('input', { name: 'key', pattern: '[a-z][a-z0-9_]{0,39}', maxlength: '40' });
  /** @type {HTMLInputElement} */
  const title = h('input', { name: 'title', maxlength: '200' });
  /** @param {Topic[]} [extra] a topic to add */
  const save = async (extra = []) => {
    status.replaceChildren();
    const topics = [
      ...rows.map((r) => ({
        key: r.key,
        title: r.title.value,
        advertising: isOn(r.advertising),
        require_consent: isOn(r.require),
      })),
      ...extra,
    ];
    try {
      await api('PUT', `/api/admin/projects/${enc(p.site_key)}/topics`, { topics });
      toast(t('topics.saved'));
      ctx.navigate(`/ui/projects/${enc(p.site_key)}?tab=topics`, { replace: true, keepFocus: true });
    } catch (e) {
      showError(status, e);
    }
  };
  // SPEC §22: a topic that new projects send only with consent (newsletters), here without it, is offered
  // the switch, with what it changes said before it is turned on (existing projects keep what they had
  // until they agree). Cart reminders are not: a new project sends them without recorded consent too.
  /** @param {Row} r */
  const offer = (r) =>
    h(
      'div',
      { class: 'notice consent-offer', 'data-topic': r.key },
      h('p', {}, t('topics.offer', { title: r.title.value })),
      h('p', { class: 'offer-changes' }, t('topics.offerChanges', { title: r.title.value })),
      h(
        'button',
        {
          type: 'button',
          'data-write': true,
          onclick: async () => {
            if (!(await confirmDialog(t('topics.offerQuestion', { title: r.title.value }), t('topics.offerYes'))))
              return;
            /** @type {HTMLInputElement} */ (r.require.querySelector('input')).checked = true;
            await save();
          },
        },
        t('topics.offerYes'),
      ),
    );
  return h(
    'div',
    {},
    h('p', { class: 'muted' }, t('topics.help')),
    h('p', { class: 'topics-law' }, t('topics.law')),
    rows.filter((r) => m.consent_by_default.includes(r.key) && !r.require_consent).map(offer),
    table(
      /** @satisfies {Column<Row>[]} */ ([
        { label: t('topics.key'), cell: (r) => code(r.key) },
        { label: t('topics.title'), cell: (r) => r.title },
        { label: t('topics.advertising'), cell: (r) => r.advertising },
        { label: t('topics.requireConsent'), cell: (r) => r.require },
      ]),
      rows,
    ),
    h(
      'form',
      {
        class: 'row',
        'data-write': true,
        onsubmit: (/** @type {Event} */ ev) => {
          ev.preventDefault();
          void save();
        },
      },
      h('button', { type: 'submit', class: 'primary' }, t('topics.save')),
    ),
    h(
      'form',
      {
        class: 'row',
        'data-write': true,
        onsubmit: (/** @type {Event} */ ev) => {
          ev.preventDefault();
          void save([{ key: key.value, title: title.value, advertising: true, require_consent: false }]);
        },
      },
      field(t('topics.key'), key),
      field(t('topics.title'), title),
      h('button', { type: 'submit' }, t('topics.add')),
    ),
    status,
  );
}

/**
 * The contact page's part: subscriptions, consent history, export and erasure.
 * @param {import('../pageTypes.js').PageContext} ctx
 * @param {import('../pageTypes.js').ContactDetail} d
 */
export function consentSection(ctx, d) {
  const c = d.contact;
  const status = h('div', { 'aria-live': 'polite' });
  const erase = async () => {
    if (!(await confirmDialog(t('contacts.eraseQuestion', { email: c.email }), t('contacts.erase')))) return;
    status.replaceChildren();
    try {
      /** @type {import('../pageTypes.js').Erasure} */
      const r = await api('POST', `/api/admin/contacts/${c.id}/erase`);
      toast(r.status === 'done' ? t('contacts.erased') : t('contacts.erasing'));
      ctx.navigate(`/ui/contacts/${c.id}`, { replace: true });
    } catch (e) {
      showError(status, e);
    }
  };
  const erasure = d.erasure
    ? h(
        'p',
        { role: 'status' },
        d.erasure.status === 'done'
          ? badge(t('consent.badge.erased'), 'muted')
          : badge(t('consent.badge.erasing'), 'warn'),
        ' ',
        d.erasure.status === 'done'
          ? t('contacts.erasureDone', { at: d.erasure.finished_at ? fmtTime(d.erasure.finished_at) : '' })
          : t('contacts.erasureRunning'),
      )
    : null;
  const viewer = exportViewer(c.id);
  return h(
    'div',
    {},
    h('h2', {}, t('contacts.subscriptions')),
    table(
      /** @satisfies {Column<import('../pageTypes.js').Subscription>[]} */ ([
        { label: t('topics.title'), cell: (x) => [x.title, ' ', code(x.key)] },
        {
          label: t('contacts.subscribed'),
          cell: (x) =>
            c.erased_at
              ? badge(t('consent.badge.erased'), 'muted')
              : x.subscribed
                ? badge(t('consent.badge.subscribed'), 'ok')
                : badge(t('consent.badge.left'), 'warn'),
        },
        { label: t('topics.requireConsent'), cell: (x) => yesNo(x.require_consent) },
        { label: t('contacts.latestGrant'), cell: (x) => yesNo(x.latest_grant) },
      ]),
      d.topics,
    ),
    h('h2', {}, t('contacts.consentHistory')),
    table(
      /** @satisfies {Column<import('../pageTypes.js').ConsentRecord>[]} */ ([
        { label: t('contacts.consentAt'), cell: (r) => time(r.at) },
        { label: t('topics.key'), cell: (r) => code(r.topic) },
        {
          label: t('contacts.consentGranted'),
          cell: (r) =>
            r.granted ? badge(t('consent.badge.granted'), 'ok') : badge(t('consent.badge.withdrawn'), 'bad'),
        },
        { label: t('contacts.consentSource'), cell: (r) => t(`consent.source.${r.source}`) },
        { label: t('contacts.textVersion'), cell: (r) => r.text_version ?? '—' },
        { label: t('contacts.ip'), cell: (r) => r.ip ?? '—' },
      ]),
      d.consent,
      { empty: t('contacts.noConsent') },
    ),
    h('h2', {}, t('contacts.personalData')),
    erasure,
    c.erased_at
      ? null
      : h(
          'div',
          { class: 'inline-controls' },
          h(
            'a',
            { class: 'button', href: `/api/admin/contacts/${c.id}/export`, download: `contact-${c.id}.json` },
            t('contacts.export'),
          ),
          viewer.button,
          h(
            'button',
            { type: 'button', class: 'danger', 'data-write': true, onclick: () => void erase() },
            t('contacts.erase'),
          ),
        ),
    status,
    viewer.out,
  );
}
