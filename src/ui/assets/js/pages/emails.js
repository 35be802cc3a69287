// @ts-check
// E-mails (SPEC §6): the list with filters and server-side paging, and one e-mail's page: its rendered
// HTML in an iframe with sandbox="" (no scripts), the text part, headers, attempts and last error, and
// the actions an administrator has: cancel a pending e-mail, retry a failed one.
import { api, ApiError, describeError, enc, meta, projects, qs } from '../api.js';
import {
  badge,
  code,
  confirmDialog,
  errorBox,
  facts,
  field,
  h,
  jsonBlock,
  select,
  statusBadge,
  table,
  time,
  toast,
} from '../dom.js';
import { hasKey, statusLabel, t } from '../i18n.js';
import { cursorPager, filterForm } from '../paging.js';
import { engagementPart } from './engagement.js';

/** @typedef {import('../pageTypes.js').PageContext} PageContext */
/** @typedef {import('../pageTypes.js').EmailListItem} EmailListItem */
/** @typedef {import('../pageTypes.js').UiMeta} UiMeta */
/** @typedef {import('../pageTypes.js').Project} Project */
/**
 * @template T
 * @typedef {import('../pageTypes.js').Page<T>} Page
 */
/**
 * @template R
 * @typedef {import('../pageTypes.js').Column<R>} Column
 */
/**
 * GET /api/admin/emails/{id} (schemas/chronology.ts EmailDetail).
 * @typedef {EmailListItem & {
 *   to_name: string | null, created_at: string, message_id: string | null,
 *   reason: import('../../../../../clients/ts/src/types').EmailReason | null, send_started_at: string | null,
 *   in_flight_event_id: number | null, context: Record<string, unknown>, attempts_log: Attempt[],
 *   reports: Report[], engagement: import('../pageTypes.js').Engagement }} EmailDetail
 */
/**
 * A delivery attempt: where it went and what the relay said.
 * @typedef {{ attempt: number, at: string, transport: 'primary' | 'fallback' | 'installation' | 'capture',
 *   ok: boolean, reply: string | null, queue_id: string | null }} Attempt
 */
/**
 * An inbound report about the e-mail (SPEC §12): a DSN, a complaint, a provider's webhook.
 * @typedef {{ id: number, received_at: string, source: string, kind: string, status_code: string | null,
 *   diagnostic: string | null, raw: string,
 *   effects: { email_status?: { to: string }, contact_status?: { to: string } } }} Report
 */
/**
 * GET /api/admin/emails/{id}/preview (schemas/adminUi.ts EmailPreviewResponse).
 * @typedef {{ stored: boolean, subject: string, html: string, text: string, headers: Record<string, string> }} Preview
 */

/** @param {string} k */
const kindLabel = (k) => (hasKey(`emails.kind.${k}`) ? t(`emails.kind.${k}`) : k);
/**
 * @param {string | null} s
 * @param {number} [n]
 */
const short = (s, n = 80) => (s && s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * The last note of an e-mail in words (issue 37): the reason the API named from it («оплачено — письмо
 * отменено»), the note itself in the tooltip; a relay's reply, which has no reason, as the relay wrote it.
 * @param {EmailListItem} e
 * @param {number} [n] how many characters of a relay's reply to show
 */
const lastNote = (e, n) =>
  !e.last_error
    ? '—'
    : e.reason && hasKey(`emailReason.${e.reason}`)
      ? h('span', { title: e.last_error, 'data-reason': e.reason }, t(`emailReason.${e.reason}`))
      : h('span', { title: e.last_error, class: 'mono' }, n ? short(e.last_error, n) : e.last_error);

/** @returns {Column<EmailListItem>[]} */
export function emailColumns() {
  return [
    { label: t('common.email'), cell: (e) => h('a', { href: `/ui/emails/${e.id}` }, `#${e.id}`) },
    { label: t('common.project'), cell: (e) => e.site_key },
    { label: t('common.template'), cell: (e) => code(e.template_key) },
    { label: t('emails.to'), cell: (e) => e.to },
    { label: t('emails.subject'), cell: (e) => (e.subject ? h('span', { title: e.subject }, short(e.subject)) : '—') },
    {
      label: t('common.status'),
      cell: (e) => h('span', {}, statusBadge(e.status), e.test ? [' ', badge(t('emails.test'), 'muted')] : null),
    },
    { label: t('emails.due'), cell: (e) => time(e.due_at) },
    { label: t('emails.sent'), cell: (e) => time(e.sent_at) },
    // Waiting for the relay (SPEC §20): since when says more than a count of attempts.
    {
      label: t('emails.attempts'),
      class: 'num',
      cell: (e) =>
        e.waiting_since
          ? h('span', { title: t('emails.waitingSince', { since: e.waiting_since }) }, String(e.attempts))
          : String(e.attempts),
    },
    {
      label: t('emails.lastError'),
      cell: (e) => lastNote(e, 80),
    },
  ];
}

/** @param {PageContext} ctx */
export async function emailsPage(ctx) {
  const q = ctx.query;
  const params = {
    site_key: q.get('site_key'),
    status: q.get('status'),
    order_id: q.get('order_id'),
    to: q.get('to'),
    cursor: q.get('cursor'),
    limit: 50,
  };
  /** @type {[Project[], UiMeta, Page<EmailListItem>]} */
  const [all, m, page] = await Promise.all([projects(), meta(), api('GET', `/api/admin/emails${qs(params)}`)]);
  const filters = filterForm(
    ctx,
    [
      field(
        t('common.project'),
        select([['', t('common.allProjects')], ...all.map((p) => [p.site_key, p.site_key])], params.site_key, {
          name: 'site_key',
        }),
      ),
      field(
        t('common.status'),
        select([['', t('common.any')], ...m.email_statuses.map((x) => [x, statusLabel(x)])], params.status, {
          name: 'status',
        }),
      ),
      field(t('events.orderId'), h('input', { name: 'order_id', value: params.order_id ?? '', maxlength: '200' })),
      field(
        t('emails.recipient'),
        // Not type=email: browsers refuse a Cyrillic local part (иван@пример.рф) there.
        h('input', { name: 'to', inputmode: 'email', value: params.to ?? '', maxlength: '254', spellcheck: 'false' }),
      ),
    ],
    { label: t('emails.filter') },
  );
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, t('nav.emails')),
    filters,
    table(emailColumns(), page.items, { empty: t('emails.empty') }),
    cursorPager(ctx, page.next_cursor, page.items.length),
  );
}

/**
 * @param {PageContext} ctx
 * @param {string} id
 * @param {'cancel' | 'retry'} verb
 * @param {string} question
 */
async function act(ctx, id, verb, question) {
  if (
    !(await confirmDialog(
      question,
      verb === 'cancel' ? t('emails.cancelYes') : t('emails.retryYes'),
      verb === 'cancel' ? 'danger' : 'primary',
    ))
  )
    return;
  try {
    /** @type {{ id: number, status: string }} */
    const r = await api('POST', `/api/admin/emails/${id}/${verb}`);
    toast(t('emails.nowStatus', { id, status: statusLabel(r.status) }));
  } catch (e) {
    toast(describeError(e), 'bad');
  }
  ctx.navigate(`/ui/emails/${id}`, { replace: true, focus: '.email-actions button, h1' });
}

/** @param {Preview | Error} preview */
function renderedPart(preview) {
  if (preview instanceof Error) return errorBox(t('emails.noRendering', { error: describeError(preview) }));
  /** @type {HTMLIFrameElement} */
  const frame = h('iframe', {
    sandbox: '',
    title: t('emails.htmlFrame'),
    class: 'preview-frame',
    referrerpolicy: 'no-referrer',
  });
  frame.srcdoc = preview.html;
  return h(
    'div',
    { class: 'rendered' },
    preview.stored ? null : h('p', { class: 'notice' }, t('emails.notRendered')),
    h('h3', {}, t('templates.subject')),
    h('p', { class: 'preview-subject' }, preview.subject),
    h('h3', {}, t('templates.html')),
    frame,
    h('h3', {}, t('templates.text')),
    h('pre', { class: 'preview-text', tabindex: '0', 'aria-label': t('templates.text') }, preview.text),
    h('h3', {}, t('emails.headers')),
    table(
      /** @satisfies {Column<[string, string]>[]} */ ([
        { label: t('emails.header'), cell: (r) => r[0] },
        { label: t('emails.value'), cell: (r) => r[1] },
      ]),
      Object.entries(preview.headers),
    ),
  );
}

/**
 * What came back about the e-mail (SPEC §12): DSNs, complaints, provider webhooks, each with its body.
 * @param {Report[]} reports
 */
function reportsPart(reports) {
  if (!reports.length) return h('p', { class: 'muted' }, t('emails.noReports'));
  /** @param {Report} r */
  const effect = (r) => {
    const parts = [];
    if (r.effects.email_status)
      parts.push(t('emails.reportEmailStatus', { status: statusLabel(r.effects.email_status.to) }));
    if (r.effects.contact_status)
      parts.push(t('emails.reportContactStatus', { status: statusLabel(r.effects.contact_status.to) }));
    return parts.length ? parts.join('; ') : t('emails.reportNoEffect');
  };
  return h(
    'div',
    { class: 'reports' },
    table(
      /** @satisfies {Column<Report>[]} */ ([
        { label: t('emails.reportReceived'), cell: (r) => time(r.received_at) },
        { label: t('emails.reportSource'), cell: (r) => t(`emails.source.${r.source}`) },
        { label: t('emails.reportKind'), cell: (r) => statusBadge(r.kind) },
        { label: t('emails.reportCode'), cell: (r) => (r.status_code ? code(r.status_code) : '—') },
        { label: t('emails.reportDiagnostic'), cell: (r) => short(r.diagnostic, 160) ?? '—' },
        { label: t('emails.reportEffect'), cell: effect },
      ]),
      reports,
    ),
    reports.map((r) =>
      h(
        'details',
        {},
        h('summary', {}, t('emails.reportRaw', { id: r.id })),
        h('pre', { class: 'preview-text', tabindex: '0', 'aria-label': t('emails.reportRaw', { id: r.id }) }, r.raw),
      ),
    ),
  );
}

/** @param {PageContext} ctx */
export async function emailPage(ctx) {
  const id = ctx.params[0];
  /** @type {[EmailDetail, Preview | Error]} */
  const [e, preview] = await Promise.all([
    api('GET', `/api/admin/emails/${id}`),
    api('GET', `/api/admin/emails/${id}/preview`).catch((/** @type {unknown} */ err) => {
      if (err instanceof ApiError && err.status === 401) throw err;
      return err;
    }),
  ]);
  const actions = h(
    'div',
    { class: 'actions email-actions', 'data-write': true },
    ['scheduled', 'queued'].includes(e.status)
      ? h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: () => act(ctx, id, 'cancel', t('emails.cancelQuestion', { id, to: e.to })),
          },
          t('emails.cancel'),
        )
      : null,
    e.status === 'failed'
      ? h(
          'button',
          {
            type: 'button',
            class: 'primary',
            onclick: () => act(ctx, id, 'retry', t('emails.retryQuestion', { id, to: e.to })),
          },
          t('emails.retry'),
        )
      : null,
  );
  return h(
    'section',
    {},
    h(
      'h1',
      { tabindex: '-1' },
      t('emails.title', { id: e.id }),
      ' ',
      statusBadge(e.status),
      e.test ? [' ', badge(t('emails.test'), 'muted')] : null,
    ),
    actions,
    facts([
      [t('common.project'), h('a', { href: `/ui/projects/${enc(e.site_key)}` }, e.site_key)],
      [
        t('emails.kind'),
        e.chain_step ? t('emails.kindStep', { kind: kindLabel(e.kind), step: e.chain_step }) : kindLabel(e.kind),
      ],
      [
        t('common.template'),
        h('a', { href: `/ui/projects/${enc(e.site_key)}/templates/${enc(e.template_key)}` }, e.template_key),
      ],
      [t('emails.to'), h('a', { href: `/ui/contacts/${e.contact_id}` }, e.to_name ? `${e.to_name} <${e.to}>` : e.to)],
      [t('common.created'), time(e.created_at)],
      [t('emails.due'), time(e.due_at)],
      [t('emails.sent'), time(e.sent_at)],
      // Already handed to the relay when its order's purchase committed (issue 30): it went anyway.
      e.reason === 'in_flight'
        ? [
            t('emails.inFlight'),
            [
              time(e.send_started_at),
              ' — ',
              t('emails.inFlightNote'),
              ' ',
              h('a', { href: `/ui/events/${e.in_flight_event_id}` }, `#${e.in_flight_event_id}`),
            ],
          ]
        : null,
      e.waiting_since
        ? [
            t('emails.waiting'),
            [t('emails.waitingFor'), ' ', time(e.waiting_since), ' — ', t('emails.waitingNote', { n: e.attempts })],
          ]
        : [t('emails.attempts'), String(e.attempts)],
      [t('emails.lastError'), h('span', { class: 'error-text' }, lastNote(e))],
      [
        t('events.order'),
        e.order_id
          ? h(
              'a',
              { href: `/ui/events${qs({ site_key: e.site_key, order_id: e.order_id, order: 'asc' })}` },
              e.order_id,
            )
          : '—',
      ],
      [t('emails.event'), e.event_id ? h('a', { href: `/ui/events/${e.event_id}` }, `#${e.event_id}`) : '—'],
      [t('emails.campaign'), e.campaign_id ? `#${e.campaign_id}` : '—'],
      [t('emails.messageId'), e.message_id ? code(e.message_id) : '—'],
    ]),
    h('h2', {}, t('emails.attemptsLog')),
    table(
      /** @satisfies {Column<Attempt>[]} */ ([
        { label: '#', class: 'num', cell: (a) => String(a.attempt) },
        { label: t('emails.attemptAt'), cell: (a) => time(a.at) },
        { label: t('emails.transport'), cell: (a) => t(`emails.transport.${a.transport}`) },
        {
          label: t('common.status'),
          cell: (a) => badge(a.ok ? t('emails.accepted') : t('emails.refused'), a.ok ? 'ok' : 'bad'),
        },
        { label: t('emails.reply'), cell: (a) => (a.reply ? code(a.reply) : '—') },
        { label: t('emails.queueId'), cell: (a) => (a.queue_id ? code(a.queue_id) : '—') },
      ]),
      e.attempts_log ?? [],
      { empty: t('emails.noAttempts') },
    ),
    h('h2', {}, t('emails.reports')),
    reportsPart(e.reports ?? []),
    e.engagement ? [h('h2', {}, t('engagement.title')), engagementPart(e.engagement)] : null,
    h('h2', {}, t('emails.content')),
    renderedPart(preview),
    h('details', {}, h('summary', {}, t('emails.context')), jsonBlock(e.context, t('emails.contextLabel'))),
  );
}
