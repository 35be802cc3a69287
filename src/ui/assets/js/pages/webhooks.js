// @ts-check
// A project's webhook endpoints (SPEC §13): add one (its signing secret is shown once, here), see which
// are disabled and why, every delivery with each attempt, and send a delivery again.
import { api, describeError, enc, meta, qs } from '../api.js';
import {
  append,
  badge,
  checkbox,
  clear,
  code,
  confirmDialog,
  copyButton,
  field,
  h,
  named,
  pagedTable,
  statusBadge,
  time,
  toast,
} from '../dom.js';
import { fmtTime, nameOf, t } from '../i18n.js';
import { clearErrors, showError } from '../errors.js';

/**
 * @template T
 * @typedef {import('../pageTypes.js').Items<T>} Items
 */
/**
 * @template R
 * @typedef {import('../pageTypes.js').Column<R>} Column
 */
/**
 * A webhook endpoint of the project (schemas/siteWebhooks.ts WebhookView).
 * @typedef {object} Webhook
 * @property {number} id
 * @property {string} url
 * @property {string | null} description
 * @property {string[]} events the kinds it subscribes to
 * @property {'active' | 'disabled'} status
 * @property {string | null} failing_since since when every attempt failed
 * @property {string | null} disabled_at
 * @property {string | null} disabled_reason
 * @property {string} created_at
 */
/**
 * A delivery to an endpoint, with each attempt (schemas/siteWebhooks.ts DeliveryView).
 * @typedef {object} Delivery
 * @property {number} id
 * @property {string} webhook_id the webhook-id header, the same on every attempt
 * @property {string} type
 * @property {'pending' | 'sending' | 'delivered' | 'failed'} status
 * @property {number} attempts
 * @property {string | null} next_attempt_at
 * @property {string | null} last_error
 * @property {string} created_at
 * @property {Attempt[]} attempts_log
 */
/**
 * @typedef {{ at: string, status_code: number | null, latency_ms: number, error: string | null,
 *   response_excerpt: string | null }} Attempt
 */

/** @param {Delivery} d */
function attemptsList(d) {
  if (!d.attempts_log.length) return h('p', { class: 'muted' }, t('webhooks.noAttempts'));
  return pagedTable(
    /** @satisfies {Column<Attempt>[]} */ ([
      { label: t('webhooks.attemptAt'), cell: (a) => time(a.at) },
      { label: t('webhooks.httpStatus'), cell: (a) => (a.status_code === null ? '—' : String(a.status_code)) },
      { label: t('webhooks.latency'), cell: (a) => t('webhooks.ms', { ms: a.latency_ms }) },
      { label: t('webhooks.error'), cell: (a) => a.error ?? '—' },
      {
        label: t('webhooks.response'),
        cell: (a) => (a.response_excerpt ? h('code', { class: 'excerpt' }, a.response_excerpt) : '—'),
      },
    ]),
    d.attempts_log,
  );
}

/** @type {import('../pageTypes.js').ProjectTab} */
export async function webhooksTab(ctx, p) {
  const site = p.site_key;
  const base = `/api/admin/projects/${enc(site)}/webhooks`;
  const secretBox = h('div', { 'aria-live': 'polite' });
  const tableBox = h('div', {});
  const deliveriesBox = h('div', {});

  async function refresh() {
    /** @type {Items<Webhook>} */
    const list = await api('GET', base);
    drawTable(list.items);
  }

  /**
   * Runs a change, says so, and draws the endpoints again; or says why not.
   * @param {() => Promise<unknown>} fn
   * @param {string} message
   */
  async function act(fn, message) {
    try {
      await fn();
      if (message) toast(message);
      await refresh();
    } catch (e) {
      toast(describeError(e), 'bad');
    }
  }

  /** @param {Webhook} w */
  async function showDeliveries(w) {
    /** @type {Items<Delivery>} the first page: the latest 50 */
    const list = await api('GET', `${base}/${w.id}/deliveries${qs({ limit: 50 })}`);
    /** @param {Delivery} d */
    const resend = (d) =>
      act(async () => {
        await api('POST', `${base}/${w.id}/deliveries/${d.id}/resend`);
        await showDeliveries(w);
      }, t('webhooks.resent'));
    const heading = h('h3', { tabindex: '-1' }, t('webhooks.deliveriesOf', { url: w.url }));
    clear(deliveriesBox).append(
      heading,
      pagedTable(
        /** @satisfies {Column<Delivery>[]} */ ([
          { label: t('common.created'), cell: (d) => time(d.created_at) },
          { label: t('webhooks.kind'), cell: (d) => code(d.type) },
          { label: t('common.status'), cell: (d) => statusBadge(d.status) },
          {
            label: t('webhooks.attempts'),
            cell: (d) => h('details', {}, h('summary', {}, String(d.attempts)), attemptsList(d), code(d.webhook_id)),
          },
          { label: t('webhooks.nextAttempt'), cell: (d) => (d.next_attempt_at ? time(d.next_attempt_at) : '—') },
          { label: t('webhooks.lastError'), cell: (d) => d.last_error ?? '—' },
          {
            label: t('common.actions'),
            cell: (d) =>
              d.status === 'sending'
                ? '—'
                : h(
                    'button',
                    { type: 'button', class: 'small', 'data-write': true, onclick: () => resend(d) },
                    t('webhooks.resend'),
                  ),
          },
        ]),
        list.items,
        { empty: t('webhooks.noDeliveries') },
      ),
    );
    heading.focus();
  }

  /** @param {Webhook[]} items */
  function drawTable(items) {
    clear(tableBox).append(
      pagedTable(
        /** @satisfies {Column<Webhook>[]} */ ([
          {
            label: t('webhooks.url'),
            cell: (w) => h('span', {}, code(w.url), w.description ? ` ${w.description}` : ''),
          },
          {
            label: t('webhooks.kinds'),
            cell: (w) => w.events.map((k, i) => [i ? ', ' : '', named('webhook_kind', k)]),
          },
          {
            label: t('common.status'),
            cell: (w) =>
              h(
                'div',
                {},
                statusBadge(w.status),
                w.status === 'disabled'
                  ? h(
                      'small',
                      { class: 'muted' },
                      ` ${t('webhooks.disabledOn', { date: fmtTime(w.disabled_at) })}: ${w.disabled_reason ?? ''}`,
                    )
                  : w.failing_since
                    ? badge(t('webhooks.failingSince', { date: fmtTime(w.failing_since) }), 'warn')
                    : null,
              ),
          },
          { label: t('common.created'), cell: (w) => time(w.created_at) },
          {
            label: t('common.actions'),
            cell: (w) =>
              h(
                'div',
                { class: 'actions' },
                h(
                  'button',
                  { type: 'button', class: 'small', onclick: () => showDeliveries(w) },
                  t('webhooks.deliveries'),
                ),
                w.status === 'disabled'
                  ? h(
                      'button',
                      {
                        type: 'button',
                        class: 'small',
                        'data-write': true,
                        onclick: () =>
                          act(() => api('PATCH', `${base}/${w.id}`, { enabled: true }), t('webhooks.enabled')),
                      },
                      t('webhooks.enable'),
                    )
                  : h(
                      'button',
                      {
                        type: 'button',
                        class: 'small',
                        'data-write': true,
                        onclick: () =>
                          act(() => api('PATCH', `${base}/${w.id}`, { enabled: false }), t('webhooks.disabledNow')),
                      },
                      t('webhooks.disable'),
                    ),
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'small danger',
                    'data-write': true,
                    onclick: async () => {
                      if (await confirmDialog(t('webhooks.deleteQuestion', { url: w.url }), t('common.remove')))
                        await act(() => api('DELETE', `${base}/${w.id}`), t('webhooks.deleted'));
                    },
                  },
                  t('common.remove'),
                ),
              ),
          },
        ]),
        items,
        {
          empty: t('webhooks.empty'),
          rowClass: (/** @type {Webhook} */ w) => (w.status === 'disabled' ? 'dim' : null),
        },
      ),
    );
  }

  /** @param {string[]} kinds the kinds of SPEC §13 (meta): identifiers a site's code matches on, shown as they are */
  function form(kinds) {
    /** @type {HTMLInputElement} */
    const url = h('input', { name: 'url', type: 'url', required: true, maxlength: '2000' });
    /** @type {HTMLInputElement} */
    const description = h('input', { name: 'description', maxlength: '500' });
    // By name, the identifier a site's code matches on beside it (issue 37).
    const boxes = kinds.map((k) =>
      checkbox([nameOf('webhook_kind', k), ' ', code(k)], k !== 'event.rejected', { name: 'events', value: k }),
    );
    const status = h('div', { 'aria-live': 'polite' });
    return h(
      'form',
      {
        class: 'stack',
        'data-write': true,
        onsubmit: async (/** @type {Event} */ ev) => {
          ev.preventDefault();
          status.replaceChildren();
          const events = boxes
            .map((b) => /** @type {HTMLInputElement} */ (b.querySelector('input')))
            .filter((i) => i.checked)
            .map((i) => i.value);
          try {
            /** @type {{ id: number, secret: string }} the signing secret: shown in this answer only */
            const created = await api('POST', base, {
              url: url.value.trim(),
              events,
              ...(description.value.trim() ? { description: description.value.trim() } : {}),
            });
            clearErrors(status);
            const value = code(created.secret);
            value.classList.add('secret');
            clear(secretBox).append(
              h(
                'div',
                { class: 'new-key', role: 'alert' },
                h('h3', { tabindex: '-1' }, t('webhooks.created')),
                h('p', {}, t('webhooks.secretHelp')),
                h('div', { class: 'key-line' }, value, copyButton(created.secret, value)),
              ),
            );
            url.value = '';
            description.value = '';
            await refresh();
            secretBox.querySelector('h3')?.focus();
          } catch (e) {
            showError(status, e);
          }
        },
      },
      h('h3', {}, t('webhooks.new')),
      field(t('webhooks.url'), url, t('webhooks.urlHint')),
      field(t('webhooks.description'), description),
      h(
        'fieldset',
        { class: 'checks' },
        h('legend', {}, t('webhooks.kinds')),
        h('div', { class: 'check-grid' }, boxes),
      ),
      status,
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, t('webhooks.create'))),
    );
  }

  /**
   * Local development (issue 28): an owner lets this project's webhooks reach loopback and private
   * addresses, shown with a warning while on. Project administrators see the state, not the switch.
   */
  function privateSwitch() {
    const box = h('div', { 'aria-live': 'polite' });
    /** @param {boolean} on */
    const draw = (on) => {
      /** @type {HTMLInputElement} */
      const input = h('input', { type: 'checkbox', checked: on, 'data-write': true, 'data-owner': true });
      const save = async () => {
        input.disabled = true;
        try {
          /** @type {{ project: import('../pageTypes.js').Project }} */
          const r = await api('PATCH', `/api/admin/projects/${enc(site)}`, { allow_private_webhooks: input.checked });
          p.allow_private_webhooks = r.project.allow_private_webhooks;
          toast(p.allow_private_webhooks ? t('webhooks.privateOnDone') : t('webhooks.privateOffDone'));
          draw(p.allow_private_webhooks);
        } catch (e) {
          toast(describeError(e), 'bad');
          draw(on);
        }
      };
      input.addEventListener('change', () => void save());
      // append() of dom.js leaves the missing warning out (Element.append would write "null").
      append(clear(box), [
        on ? h('p', { class: 'notice bad', role: 'note' }, t('webhooks.privateWarning')) : null,
        h(
          'label',
          { class: 'check', 'data-owner': true },
          input,
          ' ',
          t('webhooks.privateSwitch'),
          h('small', { class: 'muted' }, ` ${t('webhooks.privateHint')}`),
        ),
      ]);
    };
    draw(Boolean(p.allow_private_webhooks));
    return box;
  }

  /** @type {[import('../pageTypes.js').UiMeta, void]} */
  const [m] = await Promise.all([meta(), refresh()]);
  return h(
    'div',
    {},
    h('p', { class: 'muted' }, t('webhooks.intro')),
    privateSwitch(),
    secretBox,
    tableBox,
    deliveriesBox,
    form(m.webhook_kinds),
  );
}
