// @ts-check
// DOM helpers. Every piece of data reaches the page as a text node or an attribute value set through
// the DOM API: nothing is ever parsed as HTML, so a payload holding <script> shows as text.
import { fmtTime, nameOf, statusLabel, t } from './i18n.js';

/** @typedef {import('./types.js').Tone} Tone */
/**
 * What h() and append() take as a child: a node, or a value shown as text; null, undefined and false
 * are left out, and arrays are flattened.
 * @typedef {Node | string | number | boolean | null | undefined} Leaf
 * @typedef {Leaf | ChildList} Child
 * @typedef {ReadonlyArray<Child>} ChildList
 */
/**
 * Attributes for h(): an on<event> member is that event's listener; any other value is set as the
 * attribute's text (see h).
 * @typedef {string | number | boolean | null | undefined} AttrValue
 * @typedef {{ [E in keyof HTMLElementEventMap as `on${E}`]?: (ev: HTMLElementEventMap[E]) => unknown }
 *   & { [name: string]: AttrValue | ((ev: never) => unknown) }} Attrs
 */
/**
 * A table column: its header, and what a row shows in it.
 * @template R
 * @typedef {{ label: Child, cell: (row: R) => Child, class?: string }} Column
 */
/**
 * @template R
 * @typedef {{ empty?: Child, caption?: Child, rowClass?: (row: R) => string | null | undefined }} TableOptions
 */

/**
 * h('a', { href: '/ui/', class: 'x', onclick: fn }, 'text', child) -> Element.
 * Attributes whose value is null, undefined or false are left out; true sets an empty attribute.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs | null} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const made = document.createElement(tag);
  /** @type {HTMLElement} */
  const el = made;
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function')
      el.addEventListener(k.slice(2), /** @type {EventListener} the on<event> member (Attrs) */ (v));
    else if (k === 'value' && 'value' in el) el.value = String(v);
    else if (k === 'checked' || k === 'selected') Object.assign(el, { [k]: Boolean(v) });
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return made;
}

/**
 * @template {Element} E
 * @param {E} el
 * @param {readonly Child[]} children
 * @returns {E}
 */
export function append(el, children) {
  // Typed as unknown[] first: flat(Infinity) over the recursive Child type is too deep for tsc.
  const leaves = /** @type {Leaf[]} */ (/** @type {readonly unknown[]} */ (children).flat(Infinity));
  for (const c of leaves) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/**
 * @template {Node} N
 * @param {N} el
 * @returns {N}
 */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export { fmtDuration, fmtMinutes, fmtNumber } from './i18n.js';

/** @param {string | null | undefined} iso */
export function time(iso) {
  return iso ? h('time', { datetime: iso, title: iso }, fmtTime(iso)) : '—';
}

/**
 * Each status's badge tone, from /api/admin/ui/meta (the server defines them beside the statuses).
 * @type {Record<string, Tone>}
 */
let statusTones = {};
/** @param {Record<string, Tone>} tones */
export function setStatusTones(tones) {
  statusTones = tones;
}

/**
 * A coloured label: display text, and a tone (ok, bad, warn, info, muted).
 * @param {string} text
 * @param {Tone} [tone]
 */
export function badge(text, tone = 'muted') {
  return h('span', { class: `badge ${tone}` }, text);
}

/**
 * A status of the API as a badge: its words in the UI's language, the code itself in the tooltip.
 * @param {string} status
 */
export function statusBadge(status) {
  const el = badge(statusLabel(status), statusTones[status] ?? 'muted');
  el.title = String(status);
  return el;
}

/**
 * A label with its definition as the tooltip (issue 37: each figure is defined once, and says how).
 * @param {string} label
 * @param {string} definition
 */
export const defined = (label, definition) => h('span', { class: 'defined', title: definition }, label);

/**
 * A code shown by its name (issue 37), the code itself in the tooltip for whoever needs it.
 * @param {string} kind event_type, cart_type, step, webhook_kind, endpoint
 * @param {string | null | undefined} value
 */
export function named(kind, value) {
  if (value === null || value === undefined) return document.createTextNode('—');
  return h('span', { class: 'named', title: value, 'data-code': value }, nameOf(kind, value));
}

/** @param {string | number | null | undefined} text */
export function code(text) {
  return h('code', {}, text ?? '—');
}

/**
 * Pretty JSON in a <pre>, as text.
 * @param {unknown} value
 * @param {string} [label]
 */
export function jsonBlock(value, label) {
  return h(
    'pre',
    { class: 'json', tabindex: '0', 'aria-label': label ?? t('common.json') },
    JSON.stringify(value ?? null, null, 2),
  );
}

/**
 * A <dl> from [term, value] pairs; values may be nodes. A missing pair (null, false) is left out.
 * @param {readonly (readonly Child[] | null | undefined | false)[]} pairs
 */
export function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.filter((pair) => !!pair).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]),
  );
}

/**
 * A table. columns: [{ label, cell(row) -> Node|string, class? }]. Empty rows show `empty`.
 * Tables only ever hold one page of rows: paging happens on the server or in `pageSlice`.
 * @template R
 * @param {readonly Column<R>[]} columns
 * @param {readonly R[]} rows
 * @param {TableOptions<R>} [options]
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

/**
 * Client-side paging for lists the API returns whole (a project's templates, keys, address books).
 * @template R
 * @param {readonly Column<R>[]} columns
 * @param {readonly R[]} rows
 * @param {TableOptions<R> & { pageSize?: number }} [opts]
 */
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

/**
 * Previous/next buttons; a missing handler disables its button.
 * @param {{ info: Child, prev?: (() => void) | null, next?: (() => void) | null, prevLabel?: string,
 *   nextLabel?: string }} buttons
 */
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
/**
 * A labelled control: field('Name', h('input', {...}), 'hint'). Gives the control an id if it has none.
 * @param {Child} label
 * @param {HTMLElement} control
 * @param {Child} [hint]
 */
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

/**
 * A <select> of options, each a value or [value, text]; `value` is the one selected.
 * @param {readonly (string | readonly Child[])[]} options
 * @param {string | number | null | undefined} value
 * @param {Attrs} [attrs]
 */
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

/**
 * A checkbox inside its label; the <label> is returned (its input: `querySelector('input')`).
 * @param {Child} label
 * @param {boolean} checked
 * @param {Attrs} [attrs]
 */
export function checkbox(label, checked, attrs = {}) {
  const input = h('input', { type: 'checkbox', checked, ...attrs });
  return h('label', { class: 'check' }, input, ' ', label);
}

/**
 * A short-lived message in the polite live region.
 * @param {string} message
 * @param {Tone} [tone]
 */
export function toast(message, tone = 'ok') {
  const el = h('div', { class: `toast ${tone}` }, message);
  document.getElementById('toasts')?.append(el);
  setTimeout(() => el.remove(), tone === 'bad' ? 8000 : 4000);
}

/**
 * An error paragraph announced to screen readers.
 * @param {Child} message
 */
export function errorBox(message) {
  return h('p', { class: 'error', role: 'alert' }, message);
}

/**
 * A modal yes/no question in a <dialog>: focus is trapped, Escape answers no.
 * @param {Child} question
 * @param {string} [yesLabel]
 * @param {'danger' | 'primary'} [tone] the class of the yes button
 * @returns {Promise<boolean>}
 */
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

/**
 * Copies text to the clipboard; works on http://127.0.0.1 too (a secure context) and falls back to selecting.
 * @param {string} text
 * @param {Node} [target] what to select when the clipboard refuses
 */
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
