// The Domains card of the Delivery tab (SPEC §21): a project sends only from domains verified for it.
// Each domain shows the TXT record to publish and a check button; owners may approve instead. The DKIM
// record stands beside it, since both are published in the same DNS zone at the same time.
import { api, enc } from '../api.js';
import { badge, code, copyButton, facts, field, h, table, toast } from '../dom.js';
import { showError } from '../errors.js';
import { t } from '../i18n.js';

/**
 * A sender domain as GET …/domains lists it (services/senderDomains.ts domainView).
 * @typedef {{ domain: string, status: 'pending' | 'verified' | 'approved', txt_name: string,
 *   txt_value: string, checked_at: string | null, approved_by: string | null }} SenderDomain
 */

/** @param {string} text a value to publish: shown as code with its copy button */
function copyable(text) {
  const c = code(text);
  return h('span', { class: 'copyable' }, c, ' ', copyButton(text, c));
}

/**
 * @param {string} site
 * @param {{ dns_record: { name: string, value: string } } | null} dkim the Delivery tab's DKIM, if set
 * @returns {HTMLElement}
 */
export function senderDomainsCard(site, dkim) {
  const base = `/api/admin/projects/${enc(site)}/domains`;
  const list = h('div', { 'aria-live': 'polite' });
  const status = h('div', { 'aria-live': 'polite' });

  /**
   * A write to one domain, then the list again; a refusal shows in the card.
   * @param {string} path
   * @param {(r: SenderDomain & { found?: boolean }) => void} done
   */
  const act = async (path, done) => {
    status.replaceChildren();
    try {
      done(await api('POST', path));
      await refresh();
    } catch (e) {
      showError(status, e);
    }
  };

  /** @param {SenderDomain} x */
  const actions = (x) =>
    x.status !== 'pending'
      ? ''
      : h(
          'div',
          { class: 'actions' },
          h(
            'button',
            {
              type: 'button',
              'data-write': true,
              onclick: () =>
                act(`${base}/${enc(x.domain)}/verify`, (r) =>
                  r.found
                    ? toast(t('domains.verified', { domain: x.domain }))
                    : toast(t('domains.notFound', { name: x.txt_name }), 'warn'),
                ),
            },
            t('domains.check'),
          ),
          h(
            'button',
            {
              type: 'button',
              'data-write': true,
              'data-owner': true,
              onclick: () =>
                act(`${base}/${enc(x.domain)}/approve`, () => toast(t('domains.approved', { domain: x.domain }))),
            },
            t('domains.approve'),
          ),
        );

  async function refresh() {
    try {
      /** @type {{ items: SenderDomain[] }} */
      const r = await api('GET', base);
      list.replaceChildren(
        table(
          /** @satisfies {import('../pageTypes.js').Column<SenderDomain>[]} */ ([
            { label: t('domains.domain'), cell: (x) => code(x.domain) },
            {
              label: t('domains.status'),
              cell: (x) => badge(t(`domains.status.${x.status}`), x.status === 'pending' ? 'warn' : 'ok'),
            },
            {
              label: t('domains.record'),
              cell: (x) =>
                x.status === 'pending'
                  ? facts([
                      [t('delivery.dnsName'), copyable(x.txt_name)],
                      [t('delivery.dnsType'), code(t('delivery.txt'))],
                      [t('delivery.dnsValue'), copyable(x.txt_value)],
                    ])
                  : h('span', { class: 'muted' }, x.approved_by ? t('domains.approvedBy', { who: x.approved_by }) : ''),
            },
            { label: '', cell: actions },
          ]),
          r.items,
          { empty: t('domains.none'), rowClass: (x) => `domain-${x.status}` },
        ),
      );
    } catch (e) {
      showError(list, e);
    }
  }

  /** @type {HTMLInputElement} */
  const domain = h('input', {
    name: 'domain',
    'data-field': 'domain',
    required: true,
    maxlength: '253',
    spellcheck: 'false',
    placeholder: t('domains.placeholder'),
  });
  const form = h(
    'form',
    {
      class: 'row',
      'data-write': true,
      onsubmit: async (/** @type {Event} */ ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          await api('POST', base, { domain: domain.value.trim() });
          domain.value = '';
          await refresh();
        } catch (e) {
          showError(status, e);
        }
      },
    },
    field(t('domains.add'), domain, t('domains.addHint')),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('domains.addButton'))),
  );

  const dkimBox = h(
    'div',
    { class: 'dns-record' },
    h('h4', {}, t('delivery.dkim')),
    dkim
      ? facts([
          [t('delivery.dnsName'), copyable(dkim.dns_record.name)],
          [t('delivery.dnsType'), code(t('delivery.txt'))],
          [t('delivery.dnsValue'), copyable(dkim.dns_record.value)],
        ])
      : h('p', { class: 'muted' }, t('domains.noDkim')),
  );

  void refresh();
  return h(
    'section',
    { class: 'card sender-domains', 'aria-labelledby': 'sender-domains-title' },
    h('h3', { id: 'sender-domains-title' }, t('domains.title')),
    h('p', { class: 'muted' }, t('domains.intro')),
    list,
    status,
    form,
    dkimBox,
  );
}
