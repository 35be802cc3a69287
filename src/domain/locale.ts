// A project's language and time zone for templates (SPEC §15). Defined once: schemas, the repository,
// the filters and the admin UI take the values from here.

export const LOCALES = ['ru', 'en'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'ru';
export const DEFAULT_TIMEZONE = 'Europe/Moscow';

/**
 * The canonical spelling of an IANA time zone name (`europe/moscow` -> `Europe/Moscow`), or null when
 * the runtime's time-zone database does not know it. Offsets such as `+03:00` are not names: a
 * project in a place that changes its clocks must follow those changes, which only a name does.
 */
export function canonicalTimeZone(name: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/.test(name)) return null;
  try {
    return new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}
