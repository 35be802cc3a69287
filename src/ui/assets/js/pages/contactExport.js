// @ts-check
// A person's exported data (SPEC §18) as the administrator reads it (issue 37 item 6): the same document
// the JSON download streams, shown as tables with Russian (or English) headings and values in words.
// The raw JSON stays one click away (the download, and «показать» beside a stored request or e-mail).
import { api, describeError } from '../api.js';
import { errorBox, h, jsonBlock, table } from '../dom.js';
import { fmtTime, hasKey, nameOf, statusLabel, t } from '../i18n.js';

/** The document's sections that are lists of rows, in the order the export writes them. */
const SECTIONS = ['subscriptions', 'consent', 'books', 'events', 'emails', 'reports', 'orders'];

/** Members that name a code of a dictionary (domain/names.ts). */
/** @type {Record<string, string>} */
const NAMED = { event_type: 'event_type', cart_type: 'cart_type', endpoint: 'endpoint' };

/**
 * A column's heading: the catalogue's, else the member's own name (a member added later still shows).
 * @param {string} key
 */
const heading = (key) => (hasKey(`export.col.${key}`) ? t(`export.col.${key}`) : key);

/**
 * One value in words: times, yes/no, statuses and codes by name; a stored object behind «показать».
 * @param {string} key
 * @param {unknown} v
 * @returns {Node | string}
 */
function cell(key, v) {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'boolean') return v ? t('common.yes') : t('common.no');
  if (typeof v === 'object')
    return h('details', { class: 'export-raw' }, h('summary', {}, t('export.show')), jsonBlock(v));
  if (typeof v !== 'string' && typeof v !== 'number') return '—';
  const s = String(v);
  if (key.endsWith('_at')) return fmtTime(s);
  // An order's status (paid, unpaid) has words of its own; other rows' are the UI's statuses.
  if (key === 'status') return hasKey(`export.status.${s}`) ? t(`export.status.${s}`) : statusLabel(s);
  if (key === 'kind' && hasKey(`emails.kind.${s}`)) return t(`emails.kind.${s}`);
  if (NAMED[key]) return nameOf(NAMED[key], s);
  return s;
}

/**
 * A table of rows whose columns are their members.
 * @param {Record<string, unknown>[]} rows
 */
function rowsTable(rows) {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return table(
    keys.map((k) => ({ label: heading(k), cell: (/** @type {Record<string, unknown>} */ r) => cell(k, r[k]) })),
    rows,
    { empty: t('export.none') },
  );
}

/**
 * The export drawn as tables.
 * @param {Record<string, unknown>} doc GET /api/admin/contacts/{id}/export
 */
export function exportTables(doc) {
  const contact = /** @type {Record<string, unknown>} */ (doc.contact ?? {});
  return h(
    'div',
    { class: 'contact-export' },
    h('h3', {}, t('export.section.contact')),
    rowsTable([contact]),
    SECTIONS.map((s) => {
      const rows = Array.isArray(doc[s]) ? /** @type {Record<string, unknown>[]} */ (doc[s]) : [];
      return [h('h3', {}, t(`export.section.${s}`)), rowsTable(rows)];
    }),
  );
}

/**
 * A button that reads the export and shows it below, as tables.
 * @param {number} contactId
 */
export function exportViewer(contactId) {
  const out = h('div', { 'aria-live': 'polite' });
  const show = async () => {
    out.replaceChildren(h('p', { class: 'muted' }, t('app.loading')));
    try {
      out.replaceChildren(exportTables(await api('GET', `/api/admin/contacts/${contactId}/export`)));
    } catch (e) {
      out.replaceChildren(errorBox(describeError(e)));
    }
  };
  return {
    button: h('button', { type: 'button', class: 'show-export', onclick: () => void show() }, t('export.showAll')),
    out,
  };
}
