// @ts-check
// The UI's words and formats. Every string a person reads comes from a catalogue (i18n/en.js,
// i18n/ru.js; a test fails on a literal elsewhere), in the language the user chose (remembered in
// localStorage), else the one the server picked from the browser's Accept-Language (<html lang>), else
// navigator.languages. Numbers, dates and durations are formatted by Intl in that language.
//
//   t('emails.title')                          -> 'E-mails'
//   t('emails.cancelled', { id: 7 })           -> 'E-mail #7 is cancelled'   ({name} placeholders)
//   t('lists.members', { count: 3 })           -> '3 contacts'  (an entry {one, few, many, other} is a plural)
//   h('p', {}, ...tNodes('x', { link: h('a', …) }))  -> placeholders may be DOM nodes
//
// Values are never parsed as HTML: they reach the page as text nodes, like everything else.
import en from './i18n/en.js';
import ru from './i18n/ru.js';
import names from './i18n/names.js';

/**
 * A catalogue entry: the text, or its plural forms by Intl.PluralRules category ({one, few, many, other}).
 * @typedef {string | Record<string, string>} Entry
 * @typedef {Record<string, Entry>} Catalogue
 * @typedef {'ru' | 'en'} Language
 * @typedef {Record<string, string | number>} Params values for the {name} placeholders
 */

/** @type {Record<Language, Catalogue>} */
export const CATALOGUES = { ru, en };
export const LANGUAGES = /** @type {Language[]} the keys of CATALOGUES */ (Object.keys(CATALOGUES));
const STORE_KEY = 'egw.lang';
const FALLBACK = 'en';

/**
 * The UI's language for a language tag (ru-RU -> ru), or null when it has none of them.
 * @param {string | null | undefined} tag
 * @returns {Language | null}
 */
const supported = (tag) => {
  const primary = String(tag ?? '')
    .toLowerCase()
    .split('-')[0];
  return LANGUAGES.find((l) => l === primary) ?? null;
};

function storedChoice() {
  try {
    return supported(localStorage.getItem(STORE_KEY));
  } catch {
    return null; // storage disabled: the choice lasts for this page only
  }
}

function detect() {
  return (
    storedChoice() ??
    supported(document.documentElement.lang) ??
    (navigator.languages ?? [navigator.language]).map(supported).find(Boolean) ??
    FALLBACK
  );
}

let lang = detect();
let locale = localeFor(lang);
let plurals = new Intl.PluralRules(locale);

/**
 * The browser's own tag when it speaks that language (en-GB keeps its day/month order), else the language.
 * @param {Language} l
 */
function localeFor(l) {
  return (navigator.languages ?? []).find((tag) => supported(tag) === l) ?? l;
}

export const language = () => lang;
export const intlLocale = () => locale;

/**
 * Switches the language and remembers the choice; the caller draws the page again.
 * @param {string} l a language tag; one the UI does not speak changes nothing
 */
export function setLanguage(l) {
  const chosen = supported(l);
  if (!chosen) return;
  lang = chosen;
  locale = localeFor(lang);
  plurals = new Intl.PluralRules(locale);
  document.documentElement.lang = lang;
  try {
    localStorage.setItem(STORE_KEY, lang);
  } catch {
    /* see storedChoice */
  }
}
document.documentElement.lang = lang;

/** @param {string} key */
function entry(key) {
  const own = CATALOGUES[lang][key];
  if (own !== undefined) return own;
  // A missing entry is a bug the browser test sees (console errors fail it); the page still reads.
  console.error(`i18n: no "${key}" in the ${lang} catalogue`);
  return CATALOGUES[FALLBACK][key] ?? key;
}

/** @param {string} key */
export const hasKey = (key) => CATALOGUES[lang][key] !== undefined;

/**
 * @param {Entry} value
 * @param {{ count?: unknown }} [params]
 */
function pick(value, params) {
  if (typeof value === 'string') return value;
  const n = Number(params?.count ?? 0);
  return value[plurals.select(n)] ?? value.other;
}

/**
 * The text for key, with {name} placeholders filled from params.
 * @param {string} key
 * @param {Params} [params]
 */
export function t(key, params) {
  const text = pick(entry(key), params);
  return params ? text.replace(/\{(\w+)\}/g, (all, name) => (name in params ? String(params[name]) : all)) : text;
}

/**
 * Like t, but a placeholder may be a DOM node: returns the pieces for h() to append in order.
 * @param {string} key
 * @param {Record<string, import('./dom.js').Child>} [params]
 */
export function tNodes(key, params = {}) {
  /** @type {import('./dom.js').Child[]} */
  const out = [];
  const text = pick(entry(key), params);
  let last = 0;
  for (const m of text.matchAll(/\{(\w+)\}/g)) {
    if (!(m[1] in params)) continue;
    out.push(text.slice(last, m.index), params[m[1]]);
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out.filter((x) => x !== '');
}

// Formats, built once per language.
/** @type {Map<string, Intl.NumberFormat | Intl.DateTimeFormat>} */
const cache = new Map();
/**
 * @template {Intl.NumberFormat | Intl.DateTimeFormat} F
 * @param {string} kind names one format: the same kind always makes the same type
 * @param {() => F} make
 * @returns {F}
 */
function format(kind, make) {
  const k = `${locale}|${kind}`;
  if (!cache.has(k)) cache.set(k, make());
  return /** @type {F} made by `make` for this kind */ (cache.get(k));
}

/** @param {number | null | undefined} n */
export const fmtNumber = (n) =>
  typeof n === 'number'
    ? format('n', () => new Intl.NumberFormat(locale, { maximumFractionDigits: 2 })).format(n)
    : '—';

/**
 * A moment in the browser's time zone, to the second.
 * @param {string | null | undefined} iso
 */
export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return format(
    'dt',
    () =>
      new Intl.DateTimeFormat(locale, {
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      }),
  ).format(d);
}

/**
 * A UTC day (YYYY-MM-DD, as the dashboard counts) as the locale writes it; short: without the year.
 * @param {string} day
 * @param {{ short?: boolean }} [options]
 */
export function fmtDay(day, { short = false } = {}) {
  const d = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(d.getTime())) return String(day);
  /** @type {Intl.DateTimeFormatOptions} */
  const opts = short
    ? { month: '2-digit', day: '2-digit', timeZone: 'UTC' }
    : { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: 'UTC' };
  return format(short ? 'ds' : 'd', () => new Intl.DateTimeFormat(locale, opts)).format(d);
}

/** @param {Date} d */
export const fmtClock = (d) =>
  format(
    'clock',
    () => new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', second: '2-digit' }),
  ).format(d);

/**
 * @param {'second' | 'minute' | 'hour' | 'day'} u
 * @param {number} n
 */
const unit = (u, n) =>
  format(`u${u}`, () => new Intl.NumberFormat(locale, { style: 'unit', unit: u, unitDisplay: 'short' })).format(n);

/** @param {number | null | undefined} seconds */
export function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 90) return unit('second', seconds);
  if (seconds < 5400) return unit('minute', Math.round(seconds / 60));
  if (seconds < 172800) return unit('hour', Math.round(seconds / 3600));
  return unit('day', Math.round(seconds / 86400));
}

/** @param {number} m */
export function fmtMinutes(m) {
  if (m % 1440 === 0) return unit('day', m / 1440);
  if (m % 60 === 0) return unit('hour', m / 60);
  return unit('minute', m);
}

/**
 * part / whole as a percentage; '—' when whole is 0.
 * @param {number} part
 * @param {number} whole
 */
export const fmtPercent = (part, whole) =>
  whole ? format('pct', () => new Intl.NumberFormat(locale, { style: 'percent' })).format(part / whole) : '—';

/**
 * A status of the API (sent, admin_blocked…) in words; unknown values show as they are.
 * @param {string} status
 */
export const statusLabel = (status) => (hasKey(`status.${status}`) ? t(`status.${status}`) : String(status));

/**
 * A code's name (kind: event_type, cart_type, step, webhook_kind, endpoint) in the UI's language, from the
 * server's one dictionary (src/domain/names.ts, issue 37); the code itself when the dictionary has none.
 * @param {string} kind
 * @param {string | null | undefined} code
 */
export const nameOf = (kind, code) =>
  code === null || code === undefined
    ? '—'
    : (names[lang]?.[`${kind}.${code}`] ?? names.en[`${kind}.${code}`] ?? String(code));
