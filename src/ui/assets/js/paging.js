// @ts-check
// Paging and filters for the long lists (events, e-mails, contacts, address-book members). The page's
// URL holds the filters and the cursor, so every page is a bookmarkable link; the cursors of the pages
// before this one travel in history.state so "Previous" walks back without the server keeping anything.
import { h, pager } from './dom.js';
import { t } from './i18n.js';

/** @typedef {import('./types.js').PageContext} PageContext */

/**
 * This page's URL with some query parameters changed; an empty value removes its parameter.
 * @param {PageContext} ctx
 * @param {Record<string, string | null | undefined>} changes
 */
function urlWith(ctx, changes) {
  const q = new URLSearchParams(ctx.query);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === undefined || v === '') q.delete(k);
    else q.set(k, v);
  }
  const s = q.toString();
  return location.pathname + (s ? `?${s}` : '');
}

/**
 * Previous/next page controls for a cursor-paged list.
 * @param {PageContext} ctx
 * @param {string | null | undefined} nextCursor the answer's next_cursor
 * @param {number} shown how many rows this page shows
 */
export function cursorPager(ctx, nextCursor, shown) {
  const stack = Array.isArray(ctx.state.stack) ? ctx.state.stack : [];
  const current = ctx.query.get('cursor');
  /**
   * @param {string | null} cursor
   * @param {string[]} newStack
   */
  const go = (cursor, newStack) =>
    ctx.navigate(urlWith(ctx, { cursor }), { state: { stack: newStack }, focus: '.table-wrap' });
  const pageNo = current ? (stack.length ? stack.length + 1 : null) : 1;
  return pager({
    info: pageNo ? t('pager.page', { page: pageNo, shown }) : t('pager.later', { shown }),
    prev: current ? () => go(stack.length ? stack[stack.length - 1] : null, stack.slice(0, -1)) : null,
    next: nextCursor ? () => go(nextCursor, [...stack, current ?? '']) : null,
  });
}

/**
 * A filter form over the URL's query: each control's name is a query parameter. Submitting starts again
 * at the first page; "Clear" drops every filter.
 * @param {PageContext} ctx
 * @param {import('./dom.js').Child} controls
 * @param {{ label?: string }} [options]
 */
export function filterForm(ctx, controls, { label = t('filters.label') } = {}) {
  /** @type {HTMLFormElement} */
  const form = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': label,
      onsubmit: (ev) => {
        ev.preventDefault();
        /** @type {Record<string, string | null>} */
        const changes = { cursor: null };
        // A filter form has no file input: every value is a string.
        for (const [k, v] of new FormData(form).entries()) if (typeof v === 'string') changes[k] = v.trim();
        for (const el of form.elements) {
          if (el instanceof HTMLInputElement && el.name && el.type === 'datetime-local')
            changes[el.name] = el.value ? new Date(el.value).toISOString() : null;
        }
        ctx.navigate(urlWith(ctx, changes), { focus: '.table-wrap' });
      },
    },
    controls,
    h(
      'div',
      { class: 'filter-actions' },
      h('button', { type: 'submit', class: 'primary' }, t('filters.apply')),
      h('a', { href: location.pathname, class: 'button' }, t('filters.clear')),
    ),
  );
  return form;
}

/**
 * The value for a datetime-local input from an ISO time in the URL (local time, minutes).
 * @param {string | null | undefined} iso
 */
export function localInputValue(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  /** @param {number} n */
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}
