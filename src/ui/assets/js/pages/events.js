// The event chronology (SPEC §5): filters, newest first, server-side paging; and one event's page with
// its payload, error, effects and the e-mails it created. Payloads are shown as text, never as markup.
import { api, enc, meta, projects, qs } from '../api.js';
import { badge, code, facts, field, h, jsonBlock, select, table, time } from '../dom.js';
import { cursorPager, filterForm, localInputValue } from '../paging.js';
import { emailColumns } from './emails.js';

// What each error code of SPEC §1 means, for the person reading a rejected event (the log keeps the code).
const WHY = {
  invalid_json: 'the body was not a JSON object',
  missing_api_key: 'no X-API-Key header',
  invalid_api_key: 'unknown or malformed key',
  api_key_disabled: 'the key is disabled',
  permission_denied: 'the key lacks the permission for this endpoint',
  event_type_not_allowed: "the event type is not in the key's allowed_api_events",
  cart_type_not_allowed: "the cart type is not in the key's allowed_cart_types",
  template_not_allowed: "the routed template is not in the key's allowed_template_keys",
  payload_too_large: 'the body was over the size limit',
  unsupported_media_type: 'the body was not sent as application/json',
  validation_error: 'required fields were missing or had wrong values: compare the payload with the catalog',
  unknown_event_type: 'the event type is neither in the catalog nor a further event type',
  idempotency_key_reused: 'the idempotency key was used before with a different body',
  rate_limited: 'the key sent more requests than its rate limit allows',
  internal_error: 'the service failed; the request was not applied',
};

const outcome = (e) =>
  h(
    'span',
    { class: 'outcome' },
    badge(e.accepted ? 'accepted' : 'rejected'),
    ' ',
    code(String(e.http_status)),
    e.error_code ? [' ', code(e.error_code)] : null,
  );

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
        'Project',
        select([['', 'All projects'], ...all.map((p) => [p.site_key, p.site_key])], params.site_key, {
          name: 'site_key',
        }),
      ),
      field('Order id', h('input', { name: 'order_id', value: params.order_id ?? '', maxlength: '200' })),
      field(
        'Event type',
        h('input', {
          name: 'event_type',
          value: params.event_type ?? '',
          list: 'event-types',
          maxlength: '100',
          spellcheck: 'false',
        }),
      ),
      field(
        'Endpoint',
        select([['', 'Any'], ...m.endpoints.map((e) => [e, e])], params.endpoint, { name: 'endpoint' }),
      ),
      field(
        'Outcome',
        select(
          [
            ['', 'Any'],
            ['accepted', 'Accepted'],
            ['rejected', 'Rejected'],
          ],
          params.status,
          { name: 'status' },
        ),
      ),
      // Text, not type=email: browsers refuse a non-ASCII local part (иван@пример.рф) in an email input.
      field(
        'E-mail',
        h('input', {
          name: 'email',
          inputmode: 'email',
          value: params.email ?? '',
          maxlength: '254',
          spellcheck: 'false',
        }),
      ),
      field('From', h('input', { name: 'since', type: 'datetime-local', value: localInputValue(params.since) })),
      field('Until', h('input', { name: 'until', type: 'datetime-local', value: localInputValue(params.until) })),
      field(
        'Order',
        select(
          [
            ['desc', 'Newest first'],
            ['asc', 'Oldest first'],
          ],
          params.order ?? 'desc',
          { name: 'order' },
        ),
      ),
      types,
    ],
    { label: 'Filter events' },
  );

  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, 'Events'),
    filters,
    table(
      [
        { label: 'Received', cell: (e) => h('a', { href: `/ui/events/${e.id}` }, time(e.received_at)) },
        { label: 'Project', cell: (e) => e.site_key },
        { label: 'Endpoint', cell: (e) => e.endpoint },
        { label: 'Event type', cell: (e) => (e.event_type ? code(e.event_type) : '—') },
        { label: 'E-mail', cell: (e) => e.email ?? '—' },
        { label: 'Order', cell: (e) => e.order_id ?? '—' },
        { label: 'Outcome', cell: outcome },
        { label: 'Key', cell: (e) => (e.key_last4 ? code(`…${e.key_last4}`) : '—') },
      ],
      page.items,
      { empty: 'No events match these filters.', rowClass: (e) => (e.accepted ? null : 'rejected') },
    ),
    cursorPager(ctx, page.next_cursor, page.items.length),
  );
}

export async function eventPage(ctx) {
  const id = ctx.params[0];
  const [{ event: e }, emails] = await Promise.all([
    api('GET', `/api/admin/external-events/${id}`),
    api('GET', `/api/admin/emails${qs({ event_id: id, limit: 100 })}`),
  ]);
  const story = e.order_id
    ? h(
        'a',
        { href: `/ui/events${qs({ site_key: e.site_key, order_id: e.order_id, order: 'asc' })}` },
        e.order_id,
        " (the order's story)",
      )
    : '—';
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, `Event #${e.id}`, e.event_type ? [' · ', e.event_type] : null),
    facts([
      ['Received', time(e.received_at)],
      ['Project', h('a', { href: `/ui/projects/${enc(e.site_key)}` }, e.site_key)],
      ['Endpoint', code(e.endpoint)],
      ['Event type', e.event_type ? code(e.event_type) : '—'],
      [
        'E-mail',
        e.email ? h('a', { href: `/ui/contacts${qs({ email: e.email, site_key: e.site_key })}` }, e.email) : '—',
      ],
      ['Order', story],
      ['Idempotency key', e.idempotency_key ? code(e.idempotency_key) : '—'],
      ['API key', e.key_last4 ? code(`…${e.key_last4}`) : 'none (admin or legacy call)'],
      ['Outcome', outcome(e)],
    ]),
    e.accepted
      ? null
      : h(
          'div',
          { class: 'notice bad' },
          h('h2', {}, 'Why it was rejected'),
          h(
            'p',
            {},
            code(e.error_code ?? 'unknown'),
            ` with HTTP ${e.http_status}: `,
            WHY[e.error_code] ?? 'see the code above',
            '.',
          ),
        ),
    h('h2', {}, 'Payload'),
    jsonBlock(e.payload, 'Payload'),
    h('h2', {}, 'Effects'),
    Object.keys(e.effects ?? {}).length
      ? jsonBlock(e.effects, 'Effects')
      : h('p', { class: 'muted' }, 'None recorded.'),
    h('h2', {}, 'E-mails this event created'),
    table(emailColumns(), emails.items, { empty: 'None.' }),
  );
}
