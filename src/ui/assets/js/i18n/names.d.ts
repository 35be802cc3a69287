// The names the server serves at /ui/assets/js/i18n/names.js, built from its one dictionary
// (src/domain/names.ts): per language, `<kind>.<code>` (event_type, cart_type, step, webhook_kind, endpoint).
declare const names: Record<'en' | 'ru', Record<string, string>>;
export default names;
