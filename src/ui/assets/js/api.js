// @ts-check
// The admin API from the browser: same-origin fetch with the session cookie, the session's CSRF token on
// every change, and the service's error envelope turned into an ApiError with its code and members.
import { errorText } from './errors.js';
import { language, t } from './i18n.js';

let csrfToken = null;
/** @type {(err: ApiError) => void} */
let onUnauthorized = () => {};

export function setCsrfToken(token) {
  csrfToken = token;
}

/** Called when a request answers 401 (session ended or expired): the app shows the login page. */
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? t('error.http', { status }));
    this.status = status;
    this.code = error?.code ?? 'http_error';
    this.detail = error ?? {};
  }
}

export async function api(method, path, body, { quiet401 = false } = {}) {
  // The server's `message` then speaks the UI's language too (the UI shows its own sentence anyway).
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
  return data;
}

/** ?a=1&b=2 from an object, leaving out empty values. */
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

export const enc = encodeURIComponent;

let metaPromise = null;
/** Catalog and vocabularies; fetched once per page load. */
export function meta() {
  metaPromise ??= api('GET', '/api/admin/ui/meta').catch((e) => {
    metaPromise = null;
    throw e;
  });
  return metaPromise;
}

/** All projects (site_key, name, from_email); small, fetched when a page needs it. */
export async function projects() {
  return (await api('GET', '/api/admin/projects')).items;
}

/**
 * One sentence for an error, in the UI's language (see errors.js). It used to append each field's
 * reason to the message, which already said the same: the administrator read every error twice.
 */
export function describeError(e) {
  if (!(e instanceof ApiError)) return String(e?.message ?? e);
  return errorText(e);
}
