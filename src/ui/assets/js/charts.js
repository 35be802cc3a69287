// @ts-check
// Charts drawn as SVG with the DOM API (no library, nothing from the network). Colours come from CSS
// classes (c-ok, c-bad, c-0 … c-7), so the charts follow the stylesheet. Each chart carries a text
// summary for screen readers and a table of its numbers behind a <details>.
import { h, table } from './dom.js';
import { fmtDay, fmtNumber, t } from './i18n.js';

const NS = 'http://www.w3.org/2000/svg';

/**
 * A chart's series: its name in the legend, its colour class, and one value per label.
 * @typedef {{ name: string, cls: string, values: number[] }} Series
 */

/**
 * An SVG element, like dom.js's h(): attributes set as text, children appended.
 * @param {string} tag
 * @param {Record<string, string | number | null | undefined>} [attrs]
 * @param {...(Node | string | number)} children
 */
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const c of children)
    el.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  return el;
}

/**
 * The axis top for counts: four steps of 1, 2, 2.5 or 5 × 10^k, so every tick is a whole round number.
 * @param {number} v
 */
export function niceMax(v) {
  const rough = Math.max(1, v) / 4;
  const p = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((x) => x >= rough) ?? 10 * p;
  return Math.max(1, Math.ceil(step)) * 4;
}

let chartSeq = 0;

/**
 * Bars per label (one per day), the series stacked (default) or side by side.
 * series: [{ name, cls, values: number[] }] with one value per label.
 * @param {{ title: string, labels: string[], series: Series[], stacked?: boolean, height?: number,
 *   formatLabel?: (label: string) => string }} chart
 */
export function barChart({
  title,
  labels,
  series,
  stacked = true,
  height = 220,
  formatLabel = (l) => fmtDay(l, { short: true }),
}) {
  const id = `chart${++chartSeq}`;
  const left = 44,
    right = 8,
    top = 10,
    bottom = 26;
  // A fixed drawing width: the SVG scales to its box, so text keeps one size whatever the period.
  const width = 640;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const totals = labels.map((_, i) => series.reduce((sum, se) => sum + (se.values[i] ?? 0), 0));
  const max = niceMax(stacked ? Math.max(0, ...totals) : Math.max(0, ...series.flatMap((se) => se.values)));
  /** @param {number} v */
  const y = (v) => top + plotH - (v / max) * plotH;
  const band = plotW / Math.max(1, labels.length);

  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    class: 'chart',
    role: 'img',
    'aria-labelledby': `${id}-t ${id}-d`,
    preserveAspectRatio: 'xMinYMin meet',
  });
  const total = totals.reduce((a, b) => a + b, 0);
  svg.append(
    s('title', { id: `${id}-t` }, title),
    s(
      'desc',
      { id: `${id}-d` },
      t('chart.summary', {
        bars: labels.length,
        total: fmtNumber(total),
        series: series.map((se) => `${se.name} ${fmtNumber(se.values.reduce((a, b) => a + b, 0))}`).join(', '),
      }),
    ),
  );
  for (let i = 0; i <= 4; i++) {
    const v = (max / 4) * i;
    svg.append(
      s('line', { x1: left, x2: width - right, y1: y(v), y2: y(v), class: 'grid' }),
      s('text', { x: left - 6, y: y(v) + 4, class: 'axis', 'text-anchor': 'end' }, fmtNumber(v)),
    );
  }
  const every = Math.ceil(labels.length / 14);
  labels.forEach((label, i) => {
    const x0 = left + i * band;
    if (stacked) {
      let base = 0;
      series.forEach((se) => {
        const v = se.values[i] ?? 0;
        if (v > 0) {
          svg.append(
            s(
              'rect',
              {
                x: x0 + band * 0.15,
                width: band * 0.7,
                y: y(base + v),
                height: Math.max(1, y(base) - y(base + v)),
                class: se.cls,
              },
              s('title', {}, `${fmtDay(label)} · ${se.name}: ${fmtNumber(v)}`),
            ),
          );
        }
        base += v;
      });
    } else {
      const w = (band * 0.8) / series.length;
      series.forEach((se, k) => {
        const v = se.values[i] ?? 0;
        svg.append(
          s(
            'rect',
            {
              x: x0 + band * 0.1 + k * w,
              width: Math.max(1, w - 1),
              y: y(v),
              height: Math.max(v > 0 ? 1 : 0, y(0) - y(v)),
              class: se.cls,
            },
            s('title', {}, `${fmtDay(label)} · ${se.name}: ${fmtNumber(v)}`),
          ),
        );
      });
    }
    if (i % every === 0)
      svg.append(
        s('text', { x: x0 + band / 2, y: height - 8, class: 'axis', 'text-anchor': 'middle' }, formatLabel(label)),
      );
  });

  const legend = h(
    'ul',
    { class: 'legend' },
    series.map((se) => h('li', {}, h('span', { class: `swatch ${se.cls}`, 'aria-hidden': 'true' }), se.name)),
  );
  const data = h(
    'details',
    { class: 'chart-data' },
    h('summary', {}, t('chart.numbers')),
    table(
      [
        { label: t('chart.day'), cell: (r) => fmtDay(r.label) },
        ...series.map((se, k) => ({
          label: se.name,
          class: 'num',
          cell: (/** @type {{ values: number[] }} */ r) => String(r.values[k]),
        })),
      ],
      labels.map((label, i) => ({ label, values: series.map((se) => se.values[i] ?? 0) })).reverse(),
    ),
  );
  return h(
    'figure',
    { class: 'chart-box' },
    h('figcaption', {}, title),
    h('div', { class: 'chart-scroll' }, svg),
    legend,
    data,
  );
}

/**
 * Horizontal proportion bars in a table: one row per item, segments per series (a row's `key` member).
 * @template {string} K
 * @param {{ title: string, rows: ({ label: string } & Partial<Record<K, number>>)[],
 *   series: { key: K, name: string, cls: string }[], labelHeader?: string }} chart
 */
export function proportionTable({ title, rows, series, labelHeader = t('chart.type') }) {
  const max = Math.max(1, ...rows.map((r) => series.reduce((sum, se) => sum + (r[se.key] ?? 0), 0)));
  /** @param {typeof rows[number]} r */
  const bar = (r) => {
    const box = h('div', { class: 'hbar', 'aria-hidden': 'true' });
    for (const se of series) {
      const seg = h('span', { class: `seg ${se.cls}`, title: `${se.name}: ${r[se.key] ?? 0}` });
      seg.style.width = `${((r[se.key] ?? 0) / max) * 100}%`;
      box.append(seg);
    }
    return box;
  };
  return h(
    'figure',
    { class: 'chart-box' },
    h('figcaption', {}, title),
    h(
      'ul',
      { class: 'legend' },
      series.map((se) => h('li', {}, h('span', { class: `swatch ${se.cls}`, 'aria-hidden': 'true' }), se.name)),
    ),
    table(
      [
        { label: labelHeader, cell: (r) => h('code', {}, r.label) },
        { label: t('chart.share'), class: 'bar-cell', cell: bar },
        ...series.map((se) => ({
          label: se.name,
          class: 'num',
          cell: (/** @type {typeof rows[number]} */ r) => String(r[se.key] ?? 0),
        })),
      ],
      rows,
      { empty: t('dashboard.noEvents') },
    ),
  );
}
