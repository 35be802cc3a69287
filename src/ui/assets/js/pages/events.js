// @ts-check
// The event chronology (SPEC §5): filters, newest first, server-side paging; and one event's page with
// its payload, error, effects and the e-mails it created. Payloads are shown as text, never as markup.
import { api, describeError, enc, meta, projects, qs } from '../api.js';
import {
  code,
  confirmDialog,
  errorBox,
  facts,
  field,
  h,
  jsonBlock,
  named,
  select,
  statusBadge,
  table,
  time,
  toast,
} from '../dom.js';
import { hasKey, nameOf, t, tNodes } from '../i18n.js';
import { cursorPager, filterForm, localInputValue } from '../paging.js';
import { emailColumns } from './emails.js';
import { rightLink } from './keyHelp.js';
import { problemText, whyBox } from './refusal.js';

/** @typedef {import('../pageTypes.js').PageContext} PageContext */
/** @typedef {import('../pageTypes.js').EventView} EventView */
/** @typedef {import('../pageTypes.js').EmailListItem} EmailListItem */
/** @typedef {import('../pageTypes.js').Content} Content */
/**
 * @template T
 * @typedef {import('../pageTypes.js').Page<T>} Page
 */
/**
 * POST /api/admin/external-events/{id}/replay (schemas/siteWebhooks.ts ReplayAnswer): `answer` is the
 * gateway's answer to the new request, an error answer's carrying error.code.
 * @typedef {{ accepted: boolean, event_id: number | null, http_status: number,
 *   answer?: { error?: { code?: string } } }} Replay
 */

/** @param {EventView} e */
const outcome = (e) =>
  h(
    'span',
    { class: 'outcome' },
    statusBadge(e.outcome),
    ' ',
    code(String(e.http_status)),
    e.error_code ? [' ', code(e.error_code)] : null,
  );

/** @param {PageContext} ctx */
export async function eventsPage(ctx) {
  const q = ctx.query;
  const params = {
    site_key: q.get('site_key'),
    order_id: q.get('order_id'),
    event_type: q.get('event_type'),
    endpoint: q.get('endpoint'),
    status: q.get('status'),
    email: q.get('email'),
    since: q.get('since'),
    until: q.get('until'),
    order: q.get('order'),
    cursor: q.get('cursor'),
    limit: 50,
  };
  /** @type {[import('../pageTypes.js').Project[], import('../pageTypes.js').UiMeta, Page<EventView>]} */
  const [all, m, page] = await Promise.all([projects(), meta(), api('GET', `/api/admin/external-events${qs(params)}`)]);
  const types = h(
    'datalist',
    { id: 'event-types' },
    [...m.routing_keys, 'order_created', 'purchase'].map((t) => h('option', { value: t })),
  );
  const filters = filterForm(
    ctx,
    [
      field(
        t('common.project'),
        select([['', t('common.allProjects')], ...all.map((p) => [p.site_key, p.site_key])], params.site_key, {
          name: 'site_key',
        }),
      ),
      field(t('events.orderId'), h('input', { name: 'order_id', value: params.order_id ?? '', maxlength: '200' })),
      field(
        t('events.eventType'),
        h('input', {
          name: 'event_type',
          value: params.event_type ?? '',
          list: 'event-types',
          maxlength: '100',
          spellcheck: 'false',
        }),
      ),
      field(
        t('events.endpoint'),
        select([['', t('common.any')], ...m.endpoints.map((e) => [e, e])], params.endpoint, { name: 'endpoint' }),
      ),
      field(
        t('events.outcome'),
        select(
          [
            ['', t('common.any')],
            ['accepted', t('events.accepted')],
            ['rejected', t('events.rejected')],
            ['repeated', t('events.repeated')],
          ],
          params.status,
          { name: 'status' },
        ),
      ),
      field(
        t('common.email'),
        // Text, not type=email: browsers refuse a non-ASCII local part (иван@пример.рф) in an email input.
        h('input', {
          name: 'email',
          inputmode: 'email',
          value: params.email ?? '',
          maxlength: '254',
          spellcheck: 'false',
        }),
      ),
      field(
        t('events.since'),
        h('input', { name: 'since', type: 'datetime-local', value: localInputValue(params.since) }),
      ),
      field(
        t('events.until'),
        h('input', { name: 'until', type: 'datetime-local', value: localInputValue(params.until) }),
      ),
      field(
        t('events.sort'),
        select(
          [
            ['desc', t('events.newest')],
            ['asc', t('events.oldest')],
          ],
          params.order ?? 'desc',
          { name: 'order' },
        ),
      ),
      types,
    ],
    { label: t('events.filter') },
  );

  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, t('nav.events')),
    filters,
    table(
      /** @satisfies {import('../pageTypes.js').Column<EventView>[]} */ ([
        { label: t('events.received'), cell: (e) => h('a', { href: `/ui/events/${e.id}` }, time(e.received_at)) },
        { label: t('common.project'), cell: (e) => e.site_key },
        { label: t('events.endpoint'), cell: (e) => e.endpoint },
        { label: t('events.eventType'), cell: (e) => (e.event_type ? code(e.event_type) : '—') },
        { label: t('common.email'), cell: (e) => e.email ?? '—' },
        { label: t('events.order'), cell: (e) => e.order_id ?? '—' },
        { label: t('events.outcome'), cell: outcome },
        { label: t('keys.key'), cell: (e) => (e.key_last4 ? code(`…${e.key_last4}`) : '—') },
      ]),
      page.items,
      {
        empty: t('events.empty'),
        rowClass: (/** @type {EventView} */ e) => (e.outcome === 'rejected' ? 'rejected' : null),
      },
    ),
    cursorPager(ctx, page.next_cursor, page.items.length),
  );
}

/**
 * A refusal a key's right explains: which field of the key's form to change, as a link to it (issue 28).
 * @param {EventView} e
 */
function rightFix(e) {
  const link = rightLink(e.error_code, e.site_key, e.key_last4);
  return link ? h('p', { class: 'right-fix' }, ...tNodes('events.rightFix', { field: link })) : null;
}

/**
 * Replay after fixing the configuration: a new event linked to this one; the answer is shown here.
 * @param {PageContext} ctx
 * @param {EventView} e
 */
function replayBox(ctx, e) {
  const result = h('div', { 'aria-live': 'polite' });
  const run = async () => {
    if (!(await confirmDialog(t('events.replayQuestion'), t('events.replay'), 'primary'))) return;
    result.replaceChildren();
    try {
      /** @type {Replay} */
      const r = await api('POST', `/api/admin/external-events/${e.id}/replay`);
      if (r.accepted && r.event_id) {
        toast(t('events.replayed'));
        ctx.navigate(`/ui/events/${r.event_id}`);
      } else if (r.accepted) result.append(h('p', {}, t('events.replayStored')));
      else
        result.append(
          errorBox(t('events.replayRefused', { status: r.http_status, code: r.answer?.error?.code ?? '—' })),
        );
    } catch (err) {
      result.append(errorBox(describeError(err)));
    }
  };
  return h(
    'div',
    { class: 'stack', 'data-write': true },
    h('p', { class: 'muted' }, t('events.replayHelp')),
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: run }, t('events.replay'))),
    result,
  );
}

/**
 * Links to e-mails by id, or a dash.
 * @param {unknown} ids a member of the effects: ids, if it is a list
 */
const emailLinks = (ids) =>
  Array.isArray(ids) && ids.length
    ? h(
        'span',
        {},
        ids.map((id, i) => [i ? ', ' : '', h('a', { href: `/ui/emails/${Number(id)}` }, `#${Number(id)}`)]),
      )
    : '—';

/**
 * A purchase's warnings by member (issue 37): the member's code, then what was kept instead in the UI's
 * language (the one dictionary, domain/names.ts), the API's sentence in the tooltip.
 * @param {unknown} details effects.warning_details: [{member, problem}]
 * @param {unknown[]} sentences effects.warnings, shown as they are only when there are no details
 */
function warningList(details, sentences) {
  const list = Array.isArray(details) ? details : [];
  if (!list.length) return sentences.map((w) => code(String(w)));
  return h(
    'ul',
    { class: 'warnings' },
    list.map((d) => {
      const member = String(d?.member ?? '');
      const problem = String(d?.problem ?? '');
      const said = nameOf('warning', member);
      // A value the purchase could not use: what was wrong, then what was kept; a configuration gap: what.
      const wrong = problemText(problem.split('; ')[0]);
      const text = said === member ? wrong : member === 'cart_type' ? said : `${wrong}; ${said}`;
      return h('li', { title: problem }, code(member), ' — ', text);
    }),
  );
}

/**
 * What the request did, in words (issue 28: not raw JSON): the members the accept path records, each
 * with its label and links; a member this page does not know yet is shown as its value, and the whole
 * record stays available as JSON for a developer.
 * @param {EventView} e
 */
function effectsView(e) {
  const fx = e.effects ?? {};
  const site = enc(e.site_key);
  /** @type {Record<string, (v: unknown) => Content>} the members this page knows, each as it shows it */
  const known = {
    contact_id: (v) => h('a', { href: `/ui/contacts/${Number(v)}` }, `#${Number(v)}`),
    scheduled_email_ids: emailLinks,
    stopped_email_ids: emailLinks,
    // A template key, or null: none was routed.
    template_key: (v) => (v === null ? t('events.fx.noTemplate') : code(/** @type {string} */ (v))),
    address_books: (v) =>
      Array.isArray(v) && v.length
        ? h(
            'span',
            {},
            v.map((id, i) => [i ? ', ' : '', h('a', { href: `/ui/projects/${site}/lists/${Number(id)}` }, `№${id}`)]),
          )
        : '—',
    added: (v) => (v ? t('common.yes') : t('common.no')),
    already_paid: (v) => (v ? t('events.fx.alreadyPaidYes') : t('common.no')),
    // The sentences are the API's (English); their details are shown instead, by member, in words.
    warnings: (v) => (Array.isArray(v) && v.length ? warningList(fx.warning_details, v) : '—'),
    in_flight_email_ids: emailLinks,
    attributed_to: (v) => {
      const a = /** @type {{ scheduled_email_id?: unknown, step?: unknown } | null} */ (v);
      return a && typeof a.scheduled_email_id === 'number'
        ? h(
            'span',
            {},
            h('a', { href: `/ui/emails/${a.scheduled_email_id}` }, `#${a.scheduled_email_id}`),
            typeof a.step === 'string' ? [' (', named('step', a.step), ')'] : null,
          )
        : t('events.fx.notAttributed');
    },
    note: (v) => String(v),
    replay_of: (v) => h('a', { href: `/ui/events/${Number(v)}` }, t('events.title', { id: Number(v) })),
    repeat_of: (v) => h('a', { href: `/ui/events/${Number(v)}` }, t('events.title', { id: Number(v) })),
    dry_run: () => t('events.fx.dryRunYes'),
    supported_events: (v) => String(v),
  };
  // `refusal` is shown in words in the «why» box (refusal.js).
  const hidden = new Set(['admin_replay', 'warning_details', 'refusal']);
  const pairs = Object.entries(fx)
    .filter(([k]) => !hidden.has(k))
    .map(([k, v]) => [
      hasKey(`events.fx.${k}`) ? t(`events.fx.${k}`) : code(k),
      known[k] ? known[k](v) : typeof v === 'object' ? code(JSON.stringify(v)) : String(v),
    ]);
  if (!pairs.length) return h('p', { class: 'muted' }, t('events.noEffects'));
  return h(
    'div',
    {},
    facts(pairs),
    h('details', {}, h('summary', {}, t('events.fx.asJson')), jsonBlock(fx, t('events.effects'))),
  );
}

/**
 * A repeated call (a retry whose body changed under a used idempotency key): which call it repeats and
 * what that call did, so nobody reads it as a lost e-mail (issue 28).
 * @param {EventView} e
 */
async function repeatBox(e) {
  const first = e.repeat_of;
  /** @type {[{ event: EventView } | null, { items: EmailListItem[] }]} */
  const [orig, emails] = first
    ? await Promise.all([
        api('GET', `/api/admin/external-events/${first}`).catch(() => null),
        api('GET', `/api/admin/emails${qs({ event_id: first, limit: 100 })}`).catch(() => ({ items: [] })),
      ])
    : [null, { items: [] }];
  const link = first ? h('a', { href: `/ui/events/${first}` }, t('events.repeatOf', { id: first })) : '—';
  return h(
    'div',
    { class: 'notice' },
    h('h2', {}, t('events.repeatTitle')),
    h('p', {}, ...tNodes('events.repeatText', { first: link })),
    orig
      ? h(
          'p',
          {},
          ...tNodes('events.repeatFirstDid', {
            outcome: statusBadge(orig.event.outcome),
            time: time(orig.event.received_at),
          }),
        )
      : null,
    emails.items.length ? table(emailColumns(), emails.items) : h('p', { class: 'muted' }, t('events.repeatNoEmails')),
    h('p', { class: 'muted' }, t('events.repeatHelp')),
  );
}

/** @param {PageContext} ctx */
export async function eventPage(ctx) {
  const id = ctx.params[0];
  /** @type {[{ event: EventView }, Page<EmailListItem>]} */
  const [{ event: e }, emails] = await Promise.all([
    api('GET', `/api/admin/external-events/${id}`),
    api('GET', `/api/admin/emails${qs({ event_id: id, limit: 100 })}`),
  ]);
  const repeat = e.outcome === 'repeated' ? await repeatBox(e) : null;
  const story = e.order_id
    ? h(
        'a',
        { href: `/ui/events${qs({ site_key: e.site_key, order_id: e.order_id, order: 'asc' })}` },
        e.order_id,
        ' ',
        t('events.story'),
      )
    : '—';
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, t('events.title', { id: e.id }), e.event_type ? [' · ', e.event_type] : null),
    facts([
      [t('events.received'), time(e.received_at)],
      [t('common.project'), h('a', { href: `/ui/projects/${enc(e.site_key)}` }, e.site_key)],
      [t('events.endpoint'), code(e.endpoint)],
      [t('events.eventType'), e.event_type ? [named('event_type', e.event_type), ' ', code(e.event_type)] : '—'],
      [
        t('common.email'),
        e.email ? h('a', { href: `/ui/contacts${qs({ email: e.email, site_key: e.site_key })}` }, e.email) : '—',
      ],
      [t('events.order'), story],
      [t('events.idempotencyKey'), e.idempotency_key ? code(e.idempotency_key) : '—'],
      [t('events.apiKey'), e.key_last4 ? code(`…${e.key_last4}`) : t('events.noKey')],
      [t('events.outcome'), outcome(e)],
    ]),
    repeat,
    e.outcome === 'rejected' ? whyBox(e, rightFix(e)) : null,
    // The API says whether a replay can succeed (domain/refusal.ts), the same rule the replay applies.
    e.replayable ? replayBox(ctx, e) : null,
    e.effects?.replay_of && e.effects?.admin_replay
      ? h(
          'p',
          {},
          h(
            'a',
            { href: `/ui/events/${Number(e.effects.replay_of)}` },
            t('events.replayOf', { id: Number(e.effects.replay_of) }),
          ),
        )
      : null,
    h('h2', {}, t('events.payload')),
    jsonBlock(e.payload, t('events.payload')),
    h('h2', {}, t('events.effects')),
    effectsView(e),
    h('h2', {}, t('events.emails')),
    table(emailColumns(), emails.items, { empty: t('events.noEmails') }),
  );
}
