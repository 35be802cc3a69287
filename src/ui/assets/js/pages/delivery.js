// A project's delivery (SPEC §11): its own relays (primary and fallback), sender, DKIM and daily quota.
// Secrets are never shown: a password or key left empty keeps the stored one. Verify connects to the
// relays and looks the DKIM record up; a test send goes to any address with a template's sample data.
import { api, describeError, enc } from '../api.js';
import { badge, code, errorBox, facts, field, h, select, table, toast } from '../dom.js';
import { catalogueSentence, clearErrors, showError } from '../errors.js';
import { t, tNodes } from '../i18n.js';
import { senderDomainsCard } from './senderDomains.js';
import { trackingSettingsPart } from './trackingSettings.js';

/**
 * A relay of the project as GET …/delivery shows it: without the password (schemas/delivery.ts TransportView).
 * @typedef {{ smtp_url: string, pool_size: number, rate_per_second: number | null,
 *   starttls: 'required' | 'opportunistic', password_set: boolean, password_last4: string | null }} Transport
 */
/**
 * GET /api/admin/projects/{site_key}/delivery (schemas/delivery.ts DeliveryView).
 * @typedef {object} Delivery
 * @property {boolean} configured false: the installation's transport (SMTP_URL or capture) is used
 * @property {'installation' | 'capture'} installation_transport
 * @property {Transport | null} primary
 * @property {Transport | null} fallback
 * @property {string | null} from_name
 * @property {string | null} from_email
 * @property {string | null} reply_to
 * @property {Dkim | null} dkim
 * @property {number | null} daily_quota
 * @property {number} quota_used_today
 * @property {string[]} warnings
 * @property {{ primary?: Breaker, fallback?: Breaker }} breaker
 */
/**
 * @typedef {{ domain: string, selector: string, private_key_set: boolean, private_key_fingerprint: string,
 *   dns_record: { name: string, value: string } }} Dkim
 */
/** @typedef {{ state: 'closed' | 'open' | 'half_open', failures: number }} Breaker */
/** A check of POST …/delivery/verify: what it found, in the catalogue's words (`reason`) and the server's. */
/** @typedef {{ ok: boolean, reason: string, reply: string }} Check */
/** A relay's settings as PUT …/delivery takes them (schemas/delivery.ts TransportBody). */
/**
 * @typedef {{ smtp_url: string, pool_size: number, rate_per_second?: number, starttls: string }} TransportBody
 */

const STARTTLS = () => [
  ['opportunistic', t('delivery.starttls.opportunistic')],
  ['required', t('delivery.starttls.required')],
];

/**
 * A relay's fields, and `read()`: its settings, or undefined when its URL is empty.
 * @param {'primary' | 'fallback'} role
 * @param {Transport | null} cur the stored one
 * @returns {{ node: HTMLElement, read: () => TransportBody | undefined }}
 */
function transportFields(role, cur) {
  /** @type {HTMLInputElement} */
  const url = h('input', {
    name: `${role}_url`,
    'data-field': `${role}.smtp_url`,
    spellcheck: 'false',
    maxlength: '2000',
    value: cur?.smtp_url ?? '',
    placeholder: t('delivery.urlPlaceholder'),
    required: role === 'primary',
  });
  /** @type {HTMLInputElement} */
  const pool = h('input', { name: `${role}_pool`, type: 'number', min: '1', max: '50', value: cur?.pool_size ?? 5 });
  /** @type {HTMLInputElement} */
  const rate = h('input', {
    name: `${role}_rate`,
    type: 'number',
    min: '0',
    step: 'any',
    value: cur?.rate_per_second ?? '',
  });
  /** @type {HTMLSelectElement} */
  const tls = select(STARTTLS(), cur?.starttls ?? 'opportunistic', { name: `${role}_starttls` });
  const hint = cur?.password_set
    ? t('delivery.passwordKept', { last4: cur.password_last4 ?? '' })
    : t('delivery.urlHint');
  const read = () => {
    const v = url.value.trim();
    if (!v) return undefined;
    return {
      smtp_url: v,
      pool_size: Number(pool.value) || 5,
      ...(Number(rate.value) > 0 ? { rate_per_second: Number(rate.value) } : {}),
      starttls: tls.value,
    };
  };
  const node = h(
    'fieldset',
    {},
    h('legend', {}, t(`delivery.${role}`)),
    field(t('delivery.url'), url, hint),
    h(
      'div',
      { class: 'row' },
      field(t('delivery.pool'), pool),
      field(t('delivery.rate'), rate, t('delivery.rateHint')),
      field(t('delivery.starttls'), tls),
    ),
  );
  return { node, read };
}

/** @param {Delivery} d */
function breakerTable(d) {
  const rows = Object.entries(d.breaker ?? {}).map(([role, b]) => ({ role, ...b }));
  if (!rows.length) return h('p', { class: 'muted' }, t('delivery.breakerNone'));
  return table(
    /** @satisfies {import('../pageTypes.js').Column<(typeof rows)[number]>[]} */ ([
      { label: t('delivery.transport'), cell: (r) => t(`delivery.${r.role}`) },
      {
        label: t('delivery.breakerState'),
        cell: (r) => badge(t(`delivery.breaker.${r.state}`), r.state === 'closed' ? 'ok' : 'warn'),
      },
      { label: t('delivery.failures'), class: 'num', cell: (r) => String(r.failures) },
    ]),
    rows,
  );
}

/**
 * A check's outcome: what it means in words, and the server's reply as it came, as the detail.
 * @param {string} label
 * @param {Check} r
 */
function checkResult(label, r) {
  const meaning = catalogueSentence(`check.${r.reason}`);
  return h(
    'div',
    { class: `check-result ${r.ok ? 'ok-text' : 'error-text'}`, 'data-reason': r.reason ?? '' },
    h(
      'p',
      {},
      badge(r.ok ? t('delivery.ok') : t('delivery.failed'), r.ok ? 'ok' : 'bad'),
      ` ${label}: `,
      // A passed check in words too (issue 37): the server's own English reply is one click away.
      meaning ?? (r.ok ? t('delivery.checkPassed') : code(r.reply)),
    ),
    meaning || r.ok ? h('p', { class: 'muted' }, ...tNodes('errors.serverReply', { reply: code(r.reply) })) : null,
  );
}

/** @type {import('../pageTypes.js').ProjectTab} */
export async function deliveryTab(ctx, p, m) {
  const site = p.site_key;
  const base = `/api/admin/projects/${enc(site)}/delivery`;
  /** @type {[Delivery, import('../pageTypes.js').Items<import('../pageTypes.js').Template>]} */
  const [d, templates] = await Promise.all([
    api('GET', base),
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
  ]);
  const reload = () => ctx.navigate(`/ui/projects/${enc(site)}?tab=delivery`, { replace: true, keepFocus: true });
  const primary = transportFields('primary', d.primary);
  const fallback = transportFields('fallback', d.fallback);
  /**
   * @param {string} name
   * @param {string | number | null | undefined} value the stored one
   * @param {Record<string, string>} [attrs]
   * @returns {HTMLInputElement}
   */
  const input = (name, value, attrs = {}) => h('input', { name, value: value ?? '', spellcheck: 'false', ...attrs });
  const fromName = input('from_name', d.from_name, { maxlength: '200' });
  const fromEmail = input('from_email', d.from_email, { inputmode: 'email', maxlength: '254' });
  const replyTo = input('reply_to', d.reply_to, { inputmode: 'email', maxlength: '254' });
  const quota = input('daily_quota', d.daily_quota, { type: 'number', min: '1' });
  const dkimDomain = input('dkim_domain', d.dkim?.domain, { maxlength: '253', 'data-field': 'dkim.domain' });
  const dkimSelector = input('dkim_selector', d.dkim?.selector, { maxlength: '63', 'data-field': 'dkim.selector' });
  /** @type {HTMLTextAreaElement} */
  const dkimKey = h('textarea', {
    name: 'dkim_key',
    'data-field': 'dkim.private_key',
    rows: '4',
    spellcheck: 'false',
    placeholder: d.dkim?.private_key_set ? t('delivery.keyKept') : t('delivery.keyPlaceholder'),
  });
  const status = h('div', { 'aria-live': 'polite' });

  const form = h(
    'form',
    {
      class: 'stack delivery-form',
      onsubmit: async (/** @type {Event} */ ev) => {
        ev.preventDefault();
        status.replaceChildren();
        /**
         * What PUT …/delivery takes (schemas/delivery.ts DeliveryBody); without a primary the server says so.
         * @type {{ primary: TransportBody | undefined, fallback?: TransportBody, from_name?: string,
         *   from_email?: string, reply_to?: string, daily_quota?: number,
         *   dkim?: { domain: string, selector: string, private_key?: string } }}
         */
        const body = { primary: primary.read() };
        const fb = fallback.read();
        if (fb) body.fallback = fb;
        /** @type {['from_name' | 'from_email' | 'reply_to', HTMLInputElement][]} */
        const senderFields = [
          ['from_name', fromName],
          ['from_email', fromEmail],
          ['reply_to', replyTo],
        ];
        for (const [k, el] of senderFields) if (el.value.trim()) body[k] = el.value.trim();
        if (Number(quota.value) > 0) body.daily_quota = Number(quota.value);
        if (dkimDomain.value.trim() || dkimSelector.value.trim()) {
          body.dkim = { domain: dkimDomain.value.trim(), selector: dkimSelector.value.trim() };
          if (dkimKey.value.trim()) body.dkim.private_key = dkimKey.value.trim();
        }
        try {
          await api('PUT', base, body);
          toast(t('delivery.saved'));
          reload();
        } catch (e) {
          showError(status, e);
        }
      },
    },
    h(
      'p',
      { class: 'muted' },
      d.configured ? t('delivery.own') : t(`delivery.usesInstallation.${d.installation_transport}`),
    ),
    primary.node,
    fallback.node,
    h(
      'fieldset',
      {},
      h('legend', {}, t('delivery.sender')),
      h(
        'div',
        { class: 'row' },
        field(t('delivery.fromName'), fromName, t('delivery.fromHint', { name: p.name })),
        field(t('delivery.fromEmail'), fromEmail, t('delivery.fromHint', { name: p.from_email })),
        field(t('delivery.replyTo'), replyTo),
        field(t('delivery.quota'), quota, t('delivery.quotaHint', { used: d.quota_used_today })),
      ),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, t('delivery.dkim')),
      h(
        'div',
        { class: 'row' },
        field(t('delivery.dkimDomain'), dkimDomain),
        field(t('delivery.selector'), dkimSelector),
      ),
      field(
        t('delivery.privateKey'),
        dkimKey,
        d.dkim ? t('delivery.fingerprint', { fp: d.dkim.private_key_fingerprint }) : t('delivery.keyHint'),
      ),
      d.dkim
        ? h(
            'div',
            { class: 'dns-record' },
            h('p', {}, t('delivery.dnsPublish')),
            facts([
              [t('delivery.dnsName'), code(d.dkim.dns_record.name)],
              [t('delivery.dnsType'), code(t('delivery.txt'))],
              [t('delivery.dnsValue'), code(d.dkim.dns_record.value)],
            ]),
          )
        : null,
    ),
    status,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, t('delivery.save')),
      d.configured
        ? h(
            'button',
            {
              type: 'button',
              class: 'danger',
              onclick: async () => {
                try {
                  await api('DELETE', base);
                  toast(t('delivery.cleared'));
                  reload();
                } catch (e) {
                  showError(status, e);
                }
              },
            },
            t('delivery.clear'),
          )
        : null,
    ),
  );

  const verifyOut = h('div', { 'aria-live': 'polite', class: 'verify-result' });
  const verify = h(
    'button',
    {
      type: 'button',
      onclick: async () => {
        verifyOut.replaceChildren(h('p', { class: 'muted' }, t('delivery.verifying')));
        try {
          /** @type {{ primary: Check, fallback?: Check, dkim?: Check }} */
          const r = await api('POST', `${base}/verify`);
          verifyOut.replaceChildren(
            checkResult(t('delivery.primary'), r.primary),
            r.fallback ? checkResult(t('delivery.fallback'), r.fallback) : '',
            r.dkim ? checkResult(t('delivery.dkim'), r.dkim) : '',
          );
        } catch (e) {
          verifyOut.replaceChildren(errorBox(describeError(e)));
        }
      },
    },
    t('delivery.verify'),
  );

  /** @type {HTMLSelectElement} */
  const tpl = select(
    templates.items.map((x) => [x.name, x.name]),
    templates.items[0]?.name ?? '',
    { name: 'test_template', 'data-field': 'template' },
  );
  // type=text: browsers refuse an internationalised address (ирина@пример.рф) that the API accepts.
  /** @type {HTMLInputElement} */
  const to = h('input', {
    name: 'test_to',
    type: 'text',
    inputmode: 'email',
    autocomplete: 'email',
    required: true,
    maxlength: '254',
    spellcheck: 'false',
    // The administrator's own address (issue 37): the usual first test is to oneself.
    value: ctx.session?.account.email ?? '',
  });
  const testOut = h('div', { 'aria-live': 'polite' });
  const testForm = h(
    'form',
    {
      class: 'stack',
      onsubmit: async (/** @type {Event} */ ev) => {
        ev.preventDefault();
        testOut.replaceChildren();
        try {
          /** @type {{ scheduled_email_id: number }} */
          const r = await api('POST', `${base}/test`, { template: tpl.value, to: to.value.trim() });
          clearErrors(testOut);
          testOut.append(
            h(
              'p',
              {},
              t('delivery.testQueued'),
              ' ',
              h('a', { href: `/ui/emails/${r.scheduled_email_id}` }, `#${r.scheduled_email_id}`),
            ),
          );
        } catch (e) {
          showError(testOut, e);
        }
      },
    },
    h('div', { class: 'row' }, field(t('common.template'), tpl), field(t('delivery.testTo'), to)),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('delivery.testSend'))),
    testOut,
  );

  // Cart and campaign e-mail offer one-click unsubscribe only under a DKIM signature (RFC 8058 §4).
  const warnings = (d.warnings ?? []).map((w) =>
    h('div', { class: 'notice', role: 'status', 'data-warning': w }, h('p', {}, t(`delivery.warning.${w}`))),
  );

  return h(
    'div',
    { class: 'stack' },
    ...warnings,
    senderDomainsCard(site, d.dkim),
    form,
    h('h3', {}, t('delivery.check')),
    h('div', { class: 'actions' }, verify),
    verifyOut,
    h('h3', {}, t('delivery.breakerTitle')),
    breakerTable(d),
    h('h3', {}, t('delivery.testTitle')),
    testForm,
    h('h3', {}, t('tracking.title')),
    trackingSettingsPart(p, m.tracking_active, reload),
  );
}
