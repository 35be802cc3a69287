// @ts-check
// The admin API from the browser: same-origin fetch with the session cookie, the session's CSRF token on
// every change, and the service's error envelope turned into an ApiError with its code and members.
import { errorText } from './errors.js';
import { language, t } from './i18n.js';

/**
 * @typedef {import('./types.js').ErrorBody} ErrorBody
 * @typedef {import('./types.js').Project} Project
 * @typedef {import('./types.js').UiMeta} UiMeta
 */

/** @type {string | null} */
let csrfToken = null;
/** @type {(err: ApiError) => void} */
let onUnauthorized = () => {};

/** @param {string | null} token the session's, or null once it has ended */
export function setCsrfToken(token) {
  csrfToken = token;
}

/**
 * Called when a request answers 401 (session ended or expired): the app shows the login page.
 * @param {(err: ApiError) => void} fn
 */
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status; 0: the request did not reach the server
   * @param {ErrorBody} [error] the answer's `detail.error`, when it had one
   */
  constructor(status, error) {
    super(error?.message ?? t('error.http', { status }));
    this.status = status;
    this.code = error?.code ?? 'http_error';
    /** @type {Partial<ErrorBody>} */
    this.detail = error ?? {};
  }
}

/**
 * A call of the admin API. Resolves to the parsed JSON answer (null when empty), whose shape is the
 * endpoint's: the caller names it with a JSDoc type (types.js). Rejects with an ApiError.
 * @param {'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} method
 * @param {string} path
 * @param {unknown} [body] sent as JSON
 * @param {{ quiet401?: boolean }} [options] quiet401: a 401 does not end the session (the login itself)
 * @returns {Promise<any>}
 */
export async function api(method, path, body, { quiet401 = false } = {}) {
  // The server's `message` then speaks the UI's language too (the UI shows its own sentence anyway).
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json', 'accept-language': language() };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, { code: 'network_error', message: t('error.network') });
  }
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null; // a proxy's HTML error page, say: the status still tells what happened
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data?.detail?.error);
    if (res.status === 401 && !quiet401) onUnauthorized(err);
    throw err;
  }
  // Pages that show state another part of the page changed (the checklist) re-read it (issue 37 item 4).
  if (method !== 'GET') window.dispatchEvent(new CustomEvent(CHANGED, { detail: { method, path } }));
  return data;
}

/** The window event sent after every successful change (POST, PUT, PATCH, DELETE) the UI made. */
export const CHANGED = 'gateway:changed';

/**
 * Calls `redraw` after each change the UI makes, while `node` is in the page; the listener goes with
 * the page (the first change after it was replaced removes it).
 * @param {Element} node
 * @param {() => unknown} redraw
 */
export function onChanged(node, redraw) {
  const listener = () => {
    if (!node.isConnected) window.removeEventListener(CHANGED, listener);
    else void redraw();
  };
  window.addEventListener(CHANGED, listener);
}

/**
 * ?a=1&b=2 from an object, leaving out empty values.
 * @param {Record<string, string | number | boolean | null | undefined>} params
 */
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

export const enc = encodeURIComponent;

/** @type {Promise<UiMeta> | null} */
let metaPromise = null;
/**
 * Catalog and vocabularies; fetched once per page load.
 * @returns {Promise<UiMeta>}
 */
export function meta() {
  metaPromise ??= api('GET', '/api/admin/ui/meta').catch((e) => {
    metaPromise = null;
    throw e;
  });
  return metaPromise;
}

/**
 * All projects (site_key, name, from_email); small, fetched when a page needs it.
 * @returns {Promise<Project[]>}
 */
export async function projects() {
  return (await api('GET', '/api/admin/projects')).items;
}

/**
 * One sentence for an error, in the UI's language (see errors.js). It used to append each field's
 * reason to the message, which already said the same: the administrator read every error twice.
 * @param {unknown} e what a call threw
 */
export function describeError(e) {
  if (!(e instanceof ApiError)) {
    const message = typeof e === 'object' && e !== null && 'message' in e ? e.message : undefined;
    return String(message ?? e);
  }
  return errorText(e);
}
