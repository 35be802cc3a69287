// @ts-check
// Errors in the administrator's language (issue 28): the sentence of an error's reason (else of its code)
// from the server's catalogue, shown once, beside the form field it concerns when there is one.
import { h } from './dom.js';
import sentences from './i18n/errors.js';
import { language, t } from './i18n.js';

/**
 * What showError and errorText are given: an ApiError (api.js), or an Error made in the browser, which
 * has neither code nor detail.
 * @typedef {{ message: string, code?: string, detail?: Partial<import('./types.js').ErrorBody> }} Failure
 */

/**
 * @param {string} text
 * @param {Record<string, string | number>} [params]
 */
const fill = (text, params = {}) =>
  text.replace(/\{(\w+)\}/g, (all, name) => (name in params ? String(params[name]) : all));

/**
 * A catalogue sentence (`code.x`, `reason.x`, `check.x`) in the UI's language, or null when it has none.
 * @param {string} key
 * @param {Record<string, string | number>} [params]
 */
export function catalogueSentence(key, params) {
  const text = sentences[language()]?.[key] ?? sentences.en[key];
  return text === undefined ? null : fill(text, params);
}

/**
 * The API field names an error is about: its `params.field`, else the fields a 422 names.
 * @param {Partial<import('./types.js').ErrorBody>} detail
 */
function fieldsOf(detail) {
  if (typeof detail.params?.field === 'string') return [detail.params.field];
  return [...(detail.missing_fields ?? []), ...Object.keys(detail.invalid_fields ?? {})];
}

/**
 * One sentence for an API error `{status, code, message, detail}`: the reason's, else (in English) the
 * server's own message, else the code's with the fields it names. Errors made in the browser (network)
 * keep their message, which already comes from the UI's catalogue.
 * @param {Failure} e
 */
export function errorText(e) {
  const detail = e.detail ?? {};
  if (detail.reason) {
    const s = catalogueSentence(`reason.${detail.reason}`, detail.params);
    if (s !== null) return s;
  }
  const generic = catalogueSentence(`code.${e.code}`);
  if (language() === 'en' || generic === null) return e.message;
  const fields = fieldsOf(detail);
  return fields.length ? t('errors.withFields', { sentence: generic, fields: fields.join(', ') }) : generic;
}

const CONTROLS = 'input, textarea, select';

/**
 * The control of a form for an API field name: data-field, else name (dots written as underscores).
 * @param {HTMLFormElement} form
 * @param {string} field
 */
function controlFor(form, field) {
  for (const sel of [`[data-field="${field}"]`, `[name="${field}"]`, `[name="${field.replace(/\./g, '_')}"]`]) {
    const el = form.querySelector(sel);
    if (el?.matches(CONTROLS)) return el;
  }
  return null;
}

/** @param {HTMLFormElement} form */
function clearFieldErrors(form) {
  for (const p of form.querySelectorAll('.field-error')) p.remove();
  for (const el of form.querySelectorAll('[aria-invalid="true"]')) el.removeAttribute('aria-invalid');
}

/**
 * Takes away what showError left (the sentence in `status`, those beside the form's fields): called after
 * a successful save, so an old error does not read as the new answer (issue 37 item 4).
 * @param {HTMLElement} status
 */
export function clearErrors(status) {
  for (const p of status.querySelectorAll('.error')) p.remove();
  const form = status.closest('form');
  if (form) clearFieldErrors(form);
}

/**
 * Shows an API error once: beside the field of the enclosing form it concerns (marked aria-invalid and
 * described by the sentence), else in `status`. A later error, or typing in the field, clears it.
 * @param {HTMLElement} status
 * @param {unknown} e what a call threw: an ApiError, else an Error (Failure)
 * @param {string} [text]
 */
export function showError(status, e, text) {
  const failure = /** @type {Failure} */ (e);
  const sentence = text ?? errorText(failure);
  const form = status.closest('form');
  if (form) clearFieldErrors(form);
  const control =
    form && failure?.detail
      ? fieldsOf(failure.detail)
          .map((f) => controlFor(form, f))
          .find(Boolean)
      : null;
  if (!control || !form) {
    status.append(h('p', { class: 'error', role: 'alert' }, sentence));
    return;
  }
  const id = `${control.id || control.getAttribute('name')}-error`;
  const p = h('p', { class: 'error field-error', id, role: 'alert' }, sentence);
  control.after(p);
  control.setAttribute('aria-invalid', 'true');
  control.setAttribute('aria-errormessage', id);
  control.addEventListener('input', () => clearFieldErrors(form), { once: true });
}
