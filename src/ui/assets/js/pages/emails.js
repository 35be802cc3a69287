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
  table,
  time,
  toast,
} from '../dom.js';
import { cursorPager, filterForm } from '../paging.js';

const short = (s, n = 80) => (s && s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function emailColumns() {
  return [
    { label: 'E-mail', cell: (e) => h('a', { href: `/ui/emails/${e.id}` }, `#${e.id}`) },
    { label: 'Project', cell: (e) => e.site_key },
    { label: 'Template', cell: (e) => code(e.template_key) },
    { label: 'To', cell: (e) => e.to },
    { label: 'Status', cell: (e) => badge(e.status) },
    { label: 'Due', cell: (e) => time(e.due_at) },
    { label: 'Sent', cell: (e) => time(e.sent_at) },
    { label: 'Attempts', class: 'num', cell: (e) => String(e.attempts) },
    {
      label: 'Last error',
      cell: (e) => (e.last_error ? h('span', { title: e.last_error }, short(e.last_error)) : '—'),
    },
  ];
}

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
  const [all, m, page] = await Promise.all([projects(), meta(), api('GET', `/api/admin/emails${qs(params)}`)]);
  const filters = filterForm(
    ctx,
    [
      field(
        'Project',
        select([['', 'All projects'], ...all.map((p) => [p.site_key, p.site_key])], params.site_key, {
          name: 'site_key',
        }),
      ),
      field('Status', select([['', 'Any'], ...m.email_statuses], params.status, { name: 'status' })),
      field('Order id', h('input', { name: 'order_id', value: params.order_id ?? '', maxlength: '200' })),
      field(
        'Recipient',
        h('input', { name: 'to', inputmode: 'email', value: params.to ?? '', maxlength: '254', spellcheck: 'false' }),
      ),
    ],
    { label: 'Filter e-mails' },
  );
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, 'E-mails'),
    filters,
    table(emailColumns(), page.items, { empty: 'No e-mails match these filters.' }),
    cursorPager(ctx, page.next_cursor, page.items.length),
  );
}

async function act(ctx, id, verb, question) {
  if (
    !(await confirmDialog(
      question,
      verb === 'cancel' ? 'Cancel the e-mail' : 'Send again',
      verb === 'cancel' ? 'danger' : 'primary',
    ))
  )
    return;
  try {
    const r = await api('POST', `/api/admin/emails/${id}/${verb}`);
    toast(`E-mail #${id} is now ${r.status}`);
  } catch (e) {
    toast(describeError(e), 'bad');
  }
  ctx.navigate(`/ui/emails/${id}`, { replace: true, focus: '.email-actions button, h1' });
}

function renderedPart(preview) {
  if (preview instanceof Error) return errorBox(`No rendering available: ${describeError(preview)}`);
  const frame = h('iframe', {
    sandbox: '',
    title: 'The HTML part, sandboxed',
    class: 'preview-frame',
    referrerpolicy: 'no-referrer',
  });
  frame.srcdoc = preview.html;
  return h(
    'div',
    { class: 'rendered' },
    preview.stored
      ? null
      : h(
          'p',
          { class: 'notice' },
          'Not rendered yet: this is how its template renders now. The e-mail is rendered again when it is sent.',
        ),
    h('h3', {}, 'Subject'),
    h('p', { class: 'preview-subject' }, preview.subject),
    h('h3', {}, 'HTML part'),
    frame,
    h('h3', {}, 'Text part'),
    h('pre', { class: 'preview-text', tabindex: '0', 'aria-label': 'Text part' }, preview.text),
    h('h3', {}, 'Headers'),
    table(
      [
        { label: 'Header', cell: (r) => r[0] },
        { label: 'Value', cell: (r) => r[1] },
      ],
      Object.entries(preview.headers),
    ),
  );
}

export async function emailPage(ctx) {
  const id = ctx.params[0];
  const [e, preview] = await Promise.all([
    api('GET', `/api/admin/emails/${id}`),
    api('GET', `/api/admin/emails/${id}/preview`).catch((err) => {
      if (err instanceof ApiError && err.status === 401) throw err;
      return err;
    }),
  ]);
  const actions = h(
    'div',
    { class: 'actions email-actions' },
    ['scheduled', 'queued'].includes(e.status)
      ? h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: () => act(ctx, id, 'cancel', `Cancel e-mail #${id} to ${e.to}? It will not be sent.`),
          },
          'Cancel e-mail',
        )
      : null,
    e.status === 'failed'
      ? h(
          'button',
          {
            type: 'button',
            class: 'primary',
            onclick: () => act(ctx, id, 'retry', `Send e-mail #${id} to ${e.to} again now? Its attempts start over.`),
          },
          'Retry now',
        )
      : null,
  );
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, `E-mail #${e.id}`, ' ', badge(e.status)),
    actions,
    facts([
      ['Project', h('a', { href: `/ui/projects/${enc(e.site_key)}` }, e.site_key)],
      ['Kind', e.kind + (e.chain_step ? ` (cart step ${e.chain_step})` : '')],
      [
        'Template',
        h('a', { href: `/ui/projects/${enc(e.site_key)}/templates/${enc(e.template_key)}` }, e.template_key),
      ],
      ['To', h('a', { href: `/ui/contacts/${e.contact_id}` }, e.to_name ? `${e.to_name} <${e.to}>` : e.to)],
      ['Created', time(e.created_at)],
      ['Due', time(e.due_at)],
      ['Sent', time(e.sent_at)],
      ['Attempts', String(e.attempts)],
      ['Last error', e.last_error ? h('span', { class: 'error-text' }, e.last_error) : '—'],
      [
        'Order',
        e.order_id
          ? h(
              'a',
              { href: `/ui/events${qs({ site_key: e.site_key, order_id: e.order_id, order: 'asc' })}` },
              e.order_id,
            )
          : '—',
      ],
      ['Event', e.event_id ? h('a', { href: `/ui/events/${e.event_id}` }, `#${e.event_id}`) : '—'],
      ['Campaign', e.campaign_id ? `#${e.campaign_id}` : '—'],
      ['Message-ID', e.message_id ? code(e.message_id) : '—'],
    ]),
    h('h2', {}, 'Content'),
    renderedPart(preview),
    h(
      'details',
      {},
      h('summary', {}, 'Template context (the values the event supplied)'),
      jsonBlock(e.context, 'Template context'),
    ),
  );
}
