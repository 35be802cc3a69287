// The gateway client: the four gateway calls plus the address-book upsert, with idempotency keys made
// for the caller, retries that reuse them, and typed errors. Needs nothing but `fetch`.
import { ConnectionError, errorFor, GatewayError } from './errors.js';
import type { paths } from './openapi.js';

/** Released with the gateway: the same version as the gateway's package.json. */
export const VERSION = '0.1.0';

type JsonBody<P extends keyof paths> = paths[P]['post'] extends {
  requestBody: { content: { 'application/json': infer B } };
}
  ? B
  : never;
type JsonAnswer<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer R } } };
}
  ? R
  : never;

export type CatalogResponse = JsonAnswer<'/api/scoped/events/catalog', 'get'>;
export type TransactionalRequest = JsonBody<'/api/scoped/send/transactional'>;
export type TransactionalResponse = JsonAnswer<'/api/scoped/send/transactional', 'post'>;
export type OrderCreatedRequest = JsonBody<'/api/scoped/events/order-created'>;
export type OrderCreatedResponse = JsonAnswer<'/api/scoped/events/order-created', 'post'>;
export type PurchaseRequest = JsonBody<'/api/scoped/events/purchase'>;
export type PurchaseResponse = JsonAnswer<'/api/scoped/events/purchase', 'post'>;
export type ListContactRequest = JsonBody<'/api/scoped/lists/{list_id}/contacts'>;
export type ListContactResponse = JsonAnswer<'/api/scoped/lists/{list_id}/contacts', 'post'>;

export interface RetryInfo {
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  /** Why: a ConnectionError, a RateLimitedError or a ServerError. */
  error: GatewayError;
  method: string;
  path: string;
  /** The key every attempt carries (null for the catalog and the address-book upsert). */
  idempotencyKey: string | null;
}

export interface GatewayClientOptions {
  /** e.g. https://gateway.example.org (no path). */
  baseUrl: string;
  /** The project's key, `egw_live_…`. Keep it on the server: never ship it to a browser. */
  apiKey: string;
  /** Another fetch (a proxy agent, instrumentation). Default: the global fetch. */
  fetch?: typeof fetch;
  /** Per attempt, including reading the answer. Default 15000. */
  timeoutMs?: number;
  /** Retries after the first attempt, for connection errors, 429 and 5xx. Default 3. */
  maxRetries?: number;
  /** First backoff delay; doubles each retry, with jitter. Default 500. */
  retryBaseMs?: number;
  /** Longest backoff delay. Default 10000. */
  retryMaxMs?: number;
  /** A 429 asking to wait longer than this is thrown at once (RateLimitedError). Default 60000. */
  maxRetryAfterMs?: number;
  /** Called before each retry (logging, metrics). */
  onRetry?: (info: RetryInfo) => void;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface TransactionalOptions extends CallOptions {
  /** Answer at once with status `queued` instead of waiting for the first delivery attempt. */
  respondAsync?: boolean;
}

export class GatewayClient {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly onRetry?: (info: RetryInfo) => void;

  constructor(options: GatewayClientOptions) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required');
    if (!options.apiKey) throw new TypeError('apiKey is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.maxRetries = Math.max(0, options.maxRetries ?? 3);
    this.retryBaseMs = options.retryBaseMs ?? 500;
    this.retryMaxMs = options.retryMaxMs ?? 10_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.onRetry = options.onRetry;
  }

  /** The shared event catalog, each event's required fields, and the events this key may send. */
  catalog(options: CallOptions = {}): Promise<CatalogResponse> {
    return this.request('GET', '/api/scoped/events/catalog', undefined, {}, options.signal);
  }

  /**
   * Sends (or schedules) the e-mail routed for `event_type`. Without `idempotency_key` the client uses
   * `<order_id>:<event_type>` when there is an order id (so the same event for the same order is sent
   * once, whoever repeats it), else a random key for this call and its retries.
   */
  sendTransactional(event: TransactionalRequest, options: TransactionalOptions = {}): Promise<TransactionalResponse> {
    const body = normalise(event);
    if (!body.idempotency_key) {
      body.idempotency_key =
        typeof body.order_id === 'string' && body.order_id !== ''
          ? `${body.order_id}:${String(body.event_type)}`
          : randomKey();
    }
    const headers: Record<string, string> = options.respondAsync ? { prefer: 'respond-async' } : {};
    return this.request('POST', '/api/scoped/send/transactional', body, headers, options.signal);
  }

  /** An order was created: starts the abandoned-cart e-mails. A repeat for the same order schedules nothing. */
  orderCreated(order: OrderCreatedRequest, options: CallOptions = {}): Promise<OrderCreatedResponse> {
    const body = normalise(order);
    body.idempotency_key ||= callKey(body.order_id, 'order-created');
    return this.request('POST', '/api/scoped/events/order-created', body, {}, options.signal);
  }

  /** An order was paid: stops its cart e-mails and adds the customer to the paid-customers books. */
  purchase(purchase: PurchaseRequest, options: CallOptions = {}): Promise<PurchaseResponse> {
    const body = normalise(purchase);
    body.idempotency_key ||= callKey(body.order_id, 'purchase');
    return this.request('POST', '/api/scoped/events/purchase', body, {}, options.signal);
  }

  /** Adds or updates a contact in the one address book a `list_contacts_write` key may write. */
  upsertListContact(
    listId: number,
    contact: ListContactRequest,
    options: CallOptions = {},
  ): Promise<ListContactResponse> {
    if (!Number.isInteger(listId) || listId < 1) throw new TypeError('listId must be a positive integer');
    return this.request('POST', `/api/scoped/lists/${listId}/contacts`, normalise(contact), {}, options.signal);
  }

  private async request<T>(
    method: 'GET' | 'POST',
    path: string,
    body: Record<string, unknown> | undefined,
    extraHeaders: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const idempotencyKey = typeof body?.idempotency_key === 'string' ? body.idempotency_key : null;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'x-api-key': this.apiKey,
      'user-agent': `edu-gateway-client-ts/${VERSION}`,
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      ...extraHeaders,
    };
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(method, path, headers, payload, signal);
      if (outcome.ok) return outcome.data as T;
      const { error, retryAfterMs } = outcome;
      if (!outcome.retryable || attempt > this.maxRetries) throw error;
      if (retryAfterMs !== null && retryAfterMs > this.maxRetryAfterMs) throw error;
      const delayMs = retryAfterMs ?? this.backoff(attempt);
      this.onRetry?.({ attempt, delayMs, error, method, path, idempotencyKey });
      await sleep(delayMs, signal);
    }
  }

  private async attempt(
    method: string,
    path: string,
    headers: Record<string, string>,
    payload: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<
    { ok: true; data: unknown } | { ok: false; error: GatewayError; retryable: boolean; retryAfterMs: number | null }
  > {
    signal?.throwIfAborted();
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => controller.abort(new Error(`no answer within ${this.timeoutMs} ms`)),
      this.timeoutMs,
    );
    let status: number;
    let text: string;
    let responseHeaders: Headers;
    try {
      const res = await this.fetchImpl(this.baseUrl + path, {
        method,
        headers,
        body: payload,
        signal: controller.signal,
      });
      // The body is read inside the timeout too: a connection cut mid-answer is a connection error.
      text = await res.text();
      status = res.status;
      responseHeaders = res.headers;
    } catch (e) {
      // The caller's own abort is not a gateway failure: never retried.
      if (signal?.aborted) throw e;
      return { ok: false, error: connectionError(method, path, e), retryable: true, retryAfterMs: null };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    const requestId = responseHeaders.get('x-request-id');
    let data: unknown;
    try {
      data = text === '' ? undefined : JSON.parse(text);
    } catch {
      data = undefined;
    }
    if (status >= 200 && status < 300) {
      if (data === undefined || data === null || typeof data !== 'object') {
        const details = { code: 'invalid_response', message: `HTTP ${status} without a JSON body` };
        return { ok: false, error: new GatewayError(status, details, requestId), retryable: false, retryAfterMs: null };
      }
      return { ok: true, data };
    }
    const retryAfter = parseRetryAfter(responseHeaders.get('retry-after'));
    return {
      ok: false,
      error: errorFor(status, data, requestId, retryAfter),
      // Never a 4xx other than 429: the same request would be refused again.
      retryable: status === 429 || status >= 500,
      retryAfterMs: retryAfter === null ? null : retryAfter * 1000,
    };
  }

  /** Exponential, with jitter so that many clients cut off together do not come back together. */
  private backoff(attempt: number): number {
    const cap = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** (attempt - 1));
    return Math.round(cap / 2 + Math.random() * (cap / 2));
  }
}

/** A copy of the body with what PHP-era sites often send fixed: a numeric order id becomes its string. */
function normalise(body: object): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  if (typeof copy.order_id === 'number') copy.order_id = String(copy.order_id);
  return copy;
}

function randomKey(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * A key for one call and its retries. Not `<order_id>:<event>` alone: order-created and purchase are
 * already idempotent per order at the gateway, and a fixed key would turn an order re-sent with changed
 * data into a conflict (and `1001:course_paid` would clash with the transactional course_paid e-mail).
 */
function callKey(orderId: unknown, kind: string): string {
  const id = typeof orderId === 'string' && orderId !== '' ? `${orderId}:` : '';
  return `${id}${kind}:${randomKey().replace(/-/g, '').slice(0, 16)}`;
}

/** Retry-After is delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

function connectionError(method: string, path: string, e: unknown): ConnectionError {
  const err = e as { message?: string; cause?: { code?: string; message?: string } };
  const why = err.cause?.code ?? err.cause?.message ?? err.message ?? String(e);
  return new ConnectionError(
    null,
    { code: 'connection_failed', message: `${method} ${path}: no answer from the gateway (${why})` },
    null,
    { cause: e },
  );
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
