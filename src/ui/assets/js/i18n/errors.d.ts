// The error sentences the server serves at /ui/assets/js/i18n/errors.js, built from its one catalogue
// (src/domain/errorCatalog.ts): per language, `code.<code>`, `reason.<reason>` and `check.<reason>`.
declare const sentences: Record<'en' | 'ru', Record<string, string>>;
export default sentences;
