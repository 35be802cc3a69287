// Liquid filters that speak the project's language (SPEC §15): `date` in the project's time zone and
// locale, `plural` by the locale's plural rules, `money` as Intl.NumberFormat formats a currency.
//
// The project's settings reach the filters through the render call's `globals`, under a Symbol key: a
// template cannot name a Symbol, so no placeholder can read or override them.
import { filters, type FilterImplOptions } from 'liquidjs';
import { DEFAULT_LOCALE, DEFAULT_TIMEZONE, type Locale } from '../domain/locale.js';

type FilterHandler = Extract<FilterImplOptions, (...args: never[]) => unknown>;
type FilterImpl = ThisParameterType<FilterHandler>;
const builtinDate = filters.date as FilterHandler;

export interface RenderSettings {
  locale: Locale;
  /** IANA name, already validated (projects store only names Intl accepts). */
  timezone: string;
}

export const SETTINGS = Symbol('egw.renderSettings');
const DEFAULTS: RenderSettings = { locale: DEFAULT_LOCALE, timezone: DEFAULT_TIMEZONE };

function settingsOf(impl: FilterImpl): RenderSettings {
  const globals = impl.context.globals as Record<symbol, RenderSettings | undefined>;
  return globals?.[SETTINGS] ?? DEFAULTS;
}

// Without a format, Russian gets the way a Russian letter writes a date and time; English keeps
// liquid's own default.
const DEFAULT_FORMAT: Partial<Record<Locale, string>> = { ru: '%-d %B %Y, %H:%M' };

/** Every strftime conversion, and the escaped percent sign that is not one. */
const CONVERSION = /%%|%([-_0^#:]*)(\d*)([EO]?)(.)/g;

// Month names as they stand after a day number ("20 ноября"): Intl gives the genitive when the day is
// part of the same format, which a standalone `%B` ("ноябрь") is not.
const genitive = (style: 'long' | 'short') =>
  Array.from({ length: 12 }, (_, m) => {
    const parts = new Intl.DateTimeFormat('ru', { day: 'numeric', month: style, timeZone: 'UTC' }).formatToParts(
      Date.UTC(2000, m, 15),
    );
    return parts.find((p) => p.type === 'month')!.value;
  });
const GENITIVE = { B: genitive('long'), b: genitive('short'), h: genitive('short') } as const;

function hasDayOfMonth(format: string): boolean {
  for (const m of format.matchAll(CONVERSION)) if (m[4] === 'd' || m[4] === 'e') return true;
  return false;
}

// liquid's own date filter reads its locale from the engine's options; this `this` gives it the
// project's instead, and everything else (memory limit, the other options) stays the engine's.
const implCache = new WeakMap<FilterImpl['context'], Map<Locale, FilterImpl>>();
function withLocale(impl: FilterImpl, locale: Locale): FilterImpl {
  let perLocale = implCache.get(impl.context);
  if (!perLocale) implCache.set(impl.context, (perLocale = new Map<Locale, FilterImpl>()));
  let out = perLocale.get(locale);
  if (!out) {
    const context = Object.create(impl.context) as FilterImpl['context'];
    context.opts = { ...impl.context.opts, locale };
    out = { ...impl, context };
    perLocale.set(locale, out);
  }
  return out;
}

/**
 * `{{ paid_at | date: "%-d %B %Y" }}` → `20 ноября 2026` (ru) or `20 November 2026` (en), in the
 * project's time zone. liquid's semantics otherwise: numbers are Unix seconds, "now" is now, a value
 * that is not a date comes back unchanged, and a third argument names another time zone.
 */
function dateFilter(this: FilterImpl, value: unknown, format?: unknown, timezone?: unknown): unknown {
  const s = settingsOf(this);
  const impl = withLocale(this, s.locale);
  const tz = typeof timezone === 'string' || typeof timezone === 'number' ? timezone : s.timezone;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a template's argument: whatever its author wrote
  let fmt = format === undefined || format === null ? DEFAULT_FORMAT[s.locale] : String(format);
  if (fmt === undefined) return builtinDate.call(impl, value as string, undefined, tz);
  if (s.locale === 'ru' && /%[-_0^#:]*\d*[bBh]/.test(fmt) && hasDayOfMonth(fmt)) {
    const month = Number(builtinDate.call(impl, value as string, '%m', tz));
    if (!Number.isInteger(month) || month < 1 || month > 12) return value;
    // `%OB` keeps the nominative (glibc's alternative form), for formats that need it.
    fmt = fmt.replace(CONVERSION, (all, flags: string = '', _width, modifier: string, conv: string) => {
      if (all === '%%' || modifier === 'O' || !(conv in GENITIVE)) return all;
      const name = GENITIVE[conv as keyof typeof GENITIVE][month - 1];
      return flags.includes('^') ? name.toUpperCase() : name;
    });
  }
  return builtinDate.call(impl, value as string, fmt, tz);
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const t = value.trim().replace(/[\s\u00a0\u202f]/g, '');
  // The decimal forms PHP sites send (SPEC §10): "2500", "2500.00", "2500,00".
  if (!/^-?\d+(?:[.,]\d+)?$/.test(t)) return null;
  return Number(t.replace(',', '.'));
}

const pluralRules = new Map<Locale, Intl.PluralRules>();

/**
 * `{{ n | plural: "курс", "курса", "курсов" }}` → the form for n by the project locale's rules:
 * ru one/few/many (fractions take the second form: "1,5 курса"); en one/other with two forms.
 * A value that is not a number takes the form of 0.
 */
function pluralFilter(this: FilterImpl, value: unknown, ...forms: unknown[]): string {
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a template's arguments: whatever its author wrote
  const words = forms.map((f) => (f === undefined || f === null ? '' : String(f)));
  if (!words.length) return '';
  const { locale } = settingsOf(this);
  let rules = pluralRules.get(locale);
  if (!rules) pluralRules.set(locale, (rules = new Intl.PluralRules(locale)));
  const category = rules.select(Math.abs(toNumber(value) ?? 0));
  const index =
    locale === 'ru'
      ? { one: 0, few: 1, many: 2, other: 1, two: 1, zero: 2 }[category]
      : { one: 0, other: 1, two: 1, few: 1, many: 1, zero: 1 }[category];
  return words[Math.min(index, words.length - 1)];
}

const moneyFormats = new Map<string, Intl.NumberFormat>();

function moneyFormat(locale: Locale, currency: string | null): Intl.NumberFormat {
  const key = `${locale}:${currency ?? ''}`;
  let f = moneyFormats.get(key);
  if (!f) {
    f = currency
      ? new Intl.NumberFormat(locale, { style: 'currency', currency })
      : new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    if (moneyFormats.size < 1000) moneyFormats.set(key, f); // a bound: currency codes come from requests
  }
  return f;
}

/**
 * `{{ amount | money: currency }}` → `2 500,00 ₽` (ru, RUB), `RUB 2,500.00` (en; the spaces are no-break ones): what
 * Intl.NumberFormat gives. Without a currency: the number with two decimals. A currency that is not a
 * three-letter code is printed after the number; an amount that is not a number comes back unchanged.
 */
function moneyFilter(this: FilterImpl, value: unknown, currency?: unknown): unknown {
  const amount = toNumber(value);
  if (amount === null) return value;
  const { locale } = settingsOf(this);
  const code = typeof currency === 'string' ? currency.trim() : '';
  if (code && !/^[A-Za-z]{3}$/.test(code)) return `${moneyFormat(locale, null).format(amount)} ${code}`;
  return moneyFormat(locale, code ? code.toUpperCase() : null).format(amount);
}

export const localeFilters = { date: dateFilter, plural: pluralFilter, money: moneyFilter };
