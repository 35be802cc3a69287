// @ts-check
// DOM helpers. Every piece of data reaches the page as a text node or an attribute value set through
// the DOM API: nothing is ever parsed as HTML, so a payload holding <script> shows as text.
import { fmtTime, statusLabel, t } from './i18n.js';

/**
 * h('a', { href: '/ui/', class: 'x', onclick: fn }, 'text', child) -> Element.
 * Attributes whose value is null, undefined or false are left out; true sets an empty attribute.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value' && 'value' in el) el.value = String(v);
    else if (k === 'checked' || k === 'selected') el[k] = Boolean(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export { fmtDuration, fmtMinutes, fmtNumber } from './i18n.js';

export function time(iso) {
  return iso ? h('time', { datetime: iso, title: iso }, fmtTime(iso)) : '—';
}

/** Each status's badge tone, from /api/admin/ui/meta (the server defines them beside the statuses). */
let statusTones = {};
/** @param {Record<string, string>} tones */
export function setStatusTones(tones) {
  statusTones = tones;
}

/** A coloured label: display text, and a tone (ok, bad, warn, info, muted). */
export function badge(text, tone = 'muted') {
  return h('span', { class: `badge ${tone}` }, text);
}

/** A status of the API as a badge: its words in the UI's language, the code itself in the tooltip. */
export function statusBadge(status) {
  const el = badge(statusLabel(status), statusTones[status] ?? 'muted');
  el.title = String(status);
  return el;
}

export function code(text) {
  return h('code', {}, text ?? '—');
}

/** Pretty JSON in a <pre>, as text. */
export function jsonBlock(value, label) {
  return h(
    'pre',
    { class: 'json', tabindex: '0', 'aria-label': label ?? t('common.json') },
    JSON.stringify(value ?? null, null, 2),
  );
}

/** A <dl> from [term, value] pairs; values may be nodes. */
export function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]),
  );
}

/**
 * A table. columns: [{ label, cell(row) -> Node|string, class? }]. Empty rows show `empty`.
 * Tables only ever hold one page of rows: paging happens on the server or in `pageSlice`.
 * @param {any[]} columns
 * @param {any[]} rows
 * @param {{ empty?: any, caption?: any, rowClass?: (row: any) => string | null | undefined }} [options]
 */
export function table(columns, rows, { empty = t('common.nothing'), caption, rowClass } = {}) {
  const head = h(
    'thead',
    {},
    h(
      'tr',
      {},
      columns.map((c) => h('th', { scope: 'col', class: c.class }, c.label)),
    ),
  );
  const body = h(
    'tbody',
    {},
    rows.length
      ? rows.map((r) =>
          h(
            'tr',
            { class: rowClass ? rowClass(r) : null },
            columns.map((c) => h('td', { class: c.class }, c.cell(r) ?? '—')),
          ),
        )
      : h('tr', {}, h('td', { colspan: String(columns.length), class: 'empty' }, empty)),
  );
  return h(
    'div',
    { class: 'table-wrap', tabindex: '0' },
    h('table', {}, caption ? h('caption', {}, caption) : null, head, body),
  );
}

/** Client-side paging for lists the API returns whole (a project's templates, keys, address books). */
export function pagedTable(columns, rows, opts = {}) {
  const size = opts.pageSize ?? 50;
  const box = h('div', { class: 'paged' });
  let page = 0;
  const draw = () => {
    clear(box);
    const pages = Math.max(1, Math.ceil(rows.length / size));
    page = Math.min(page, pages - 1);
    box.append(table(columns, rows.slice(page * size, (page + 1) * size), opts));
    if (pages > 1) {
      box.append(
        pager({
          info: t('pager.range', {
            from: page * size + 1,
            to: Math.min(rows.length, (page + 1) * size),
            total: rows.length,
          }),
          prev:
            page > 0
              ? () => {
                  page -= 1;
                  draw();
                }
              : null,
          next:
            page < pages - 1
              ? () => {
                  page += 1;
                  draw();
                }
              : null,
        }),
      );
    }
  };
  draw();
  return box;
}

/** Previous/next buttons; a missing handler disables its button. */
export function pager({ info, prev, next, prevLabel = t('pager.prev'), nextLabel = t('pager.next') }) {
  return h(
    'nav',
    { class: 'pager', 'aria-label': t('pager.label') },
    h('button', { type: 'button', disabled: !prev, onclick: prev ?? undefined }, prevLabel),
    info ? h('span', { class: 'muted' }, info) : null,
    h('button', { type: 'button', disabled: !next, onclick: next ?? undefined }, nextLabel),
  );
}

let fieldSeq = 0;
/** A labelled control: field('Name', h('input', {...}), 'hint'). Gives the control an id if it has none. */
export function field(label, control, hint) {
  if (!control.id) control.id = `f${++fieldSeq}`;
  const hintId = hint ? `${control.id}-hint` : null;
  if (hintId) control.setAttribute('aria-describedby', hintId);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: control.id }, label),
    control,
    hint ? h('small', { id: hintId, class: 'muted' }, hint) : null,
  );
}

export function select(options, value, attrs = {}) {
  return h(
    'select',
    attrs,
    options.map((o) => {
      const [v, text] = Array.isArray(o) ? o : [o, o];
      return h('option', { value: v, selected: String(v) === String(value ?? '') }, text);
    }),
  );
}

export function checkbox(label, checked, attrs = {}) {
  const input = h('input', { type: 'checkbox', checked, ...attrs });
  return h('label', { class: 'check' }, input, ' ', label);
}

/** A short-lived message in the polite live region. */
export function toast(message, tone = 'ok') {
  const el = h('div', { class: `toast ${tone}` }, message);
  document.getElementById('toasts')?.append(el);
  setTimeout(() => el.remove(), tone === 'bad' ? 8000 : 4000);
}

/** An error paragraph announced to screen readers. */
export function errorBox(message) {
  return h('p', { class: 'error', role: 'alert' }, message);
}

/** A modal yes/no question in a <dialog>: focus is trapped, Escape answers no. */
export function confirmDialog(question, yesLabel = t('common.confirm'), tone = 'danger') {
  return new Promise((resolve) => {
    const yes = h('button', { type: 'submit', value: 'yes', class: tone }, yesLabel);
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-label': t('common.confirm') },
      h(
        'form',
        { method: 'dialog' },
        h('p', {}, question),
        h('div', { class: 'actions' }, h('button', { type: 'submit', value: 'no' }, t('common.cancel')), yes),
      ),
    );
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'yes');
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
    yes.focus();
  });
}

/** Copies text to the clipboard; works on http://127.0.0.1 too (a secure context) and falls back to selecting. */
export function copyButton(text, target) {
  return h(
    'button',
    {
      type: 'button',
      class: 'copy',
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(text);
          toast(t('copy.done'));
        } catch {
          if (target) {
            const range = document.createRange();
            range.selectNodeContents(target);
            const sel = document.getSelection();
            sel?.removeAllRanges();
            sel?.addRange(range);
          }
          toast(t('copy.blocked'), 'warn');
        }
      },
    },
    t('copy.button'),
  );
}
