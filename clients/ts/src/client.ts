// The gateway client: the four gateway calls, the address-book upsert and the scoped reads, with
// idempotency keys made for the caller, retries that reuse them, and typed errors. Needs nothing but `fetch`.
import { ConnectionError, errorFor, GatewayError } from './errors.js';
import type {
  CatalogResponse,
  DryRun,
  EmailResponse,
  EmailsQuery,
  EmailsResponse,
  EventsQuery,
  EventsResponse,
  ListContactRequest,
  ListContactResponse,
  ConsentRequest,
  ConsentResponse,
  EraseResponse,
  OrderCreatedRequest,
  OrderCreatedResponse,
  PurchaseRequest,
  PurchaseResponse,
  ScopedEmail,
  ScopedEvent,
  TransactionalRequest,
  TransactionalResponse,
} from './types.js';

/** Released with the gateway: the same version as the gateway's package.json. */
export const VERSION = '0.1.0';

export interface RetryInfo {
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** How long the client waits before the next attempt. */
  delayMs: number;
  /** Why: a ConnectionError, a RateLimitedError or a ServerError. */
  error: GatewayError;
  method: string;
  path: string;
  /** The key every attempt carries (null for the reads and the address-book upsert). */
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

export interface WriteOptions extends CallOptions {
  /**
   * `?dry_run=true`: the gateway runs the same checks, routing, rendering and plan, answers with
   * `dry_run: true`, and writes nothing (but a chronology row marked as a dry run). A gateway too old to
   * know dry runs would really send: the client then throws a GatewayError `dry_run_unsupported`.
   */
  dryRun?: boolean;
}

export interface TransactionalOptions extends WriteOptions {
  /** Answer at once with status `queued` instead of waiting for the first delivery attempt. */
  respondAsync?: boolean;
}

type DryRunOptions<O> = O & { dryRun: true };

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
   * once, whoever repeats it), else a random key for this call and its retries. The answer's `plan` says
   * what the gateway did with the e-mail (or why it will not go).
   */
  sendTransactional(
    event: TransactionalRequest,
    options: DryRunOptions<TransactionalOptions>,
  ): Promise<DryRun<TransactionalResponse>>;
  sendTransactional(event: TransactionalRequest, options?: TransactionalOptions): Promise<TransactionalResponse>;
  sendTransactional(event: TransactionalRequest, options: TransactionalOptions = {}): Promise<TransactionalResponse> {
    const body = normalise(event);
    if (!body.idempotency_key) {
      body.idempotency_key =
        typeof body.order_id === 'string' && body.order_id !== ''
          ? `${body.order_id}:${String(body.event_type)}`
          : randomKey();
    }
    const headers: Record<string, string> = options.respondAsync ? { prefer: 'respond-async' } : {};
    return this.write('/api/scoped/send/transactional', body, headers, options);
  }

  /**
   * An order was created: starts the abandoned-cart e-mails (`plan` lists each step, with its due time or
   * why it is skipped). A repeat for the same order schedules nothing.
   */
  orderCreated(order: OrderCreatedRequest, options: DryRunOptions<WriteOptions>): Promise<DryRun<OrderCreatedResponse>>;
  orderCreated(order: OrderCreatedRequest, options?: WriteOptions): Promise<OrderCreatedResponse>;
  orderCreated(order: OrderCreatedRequest, options: WriteOptions = {}): Promise<OrderCreatedResponse> {
    const body = normalise(order);
    body.idempotency_key ||= callKey(body.order_id, 'order-created');
    return this.write('/api/scoped/events/order-created', body, {}, options);
  }

  /**
   * An order was paid: stops its cart e-mails (`plan` lists each one cancelled) and adds the customer to
   * the paid-customers books.
   */
  purchase(purchase: PurchaseRequest, options: DryRunOptions<WriteOptions>): Promise<DryRun<PurchaseResponse>>;
  purchase(purchase: PurchaseRequest, options?: WriteOptions): Promise<PurchaseResponse>;
  purchase(purchase: PurchaseRequest, options: WriteOptions = {}): Promise<PurchaseResponse> {
    const body = normalise(purchase);
    body.idempotency_key ||= callKey(body.order_id, 'purchase');
    return this.write('/api/scoped/events/purchase', body, {}, options);
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

  /**
   * Records consent given or withdrawn for one topic, with when and where the person decided (`at`,
   * `ip`) and which text they saw (`text_version`). Any key of the project may call it.
   */
  recordConsent(consent: ConsentRequest, options: CallOptions = {}): Promise<ConsentResponse> {
    return this.request('POST', '/api/scoped/contacts/consent', normalise(consent), {}, options.signal);
  }

  /**
   * Passes a person's deletion request on: the gateway erases every stored copy of the address, name and
   * fields (`status: "in_progress"` while a long history is erased in the background). An address the
   * gateway does not hold is a GatewayError 404 (`not_found`): nothing is left to erase.
   */
  eraseContact(email: string, options: CallOptions = {}): Promise<EraseResponse> {
    return this.request('POST', '/api/scoped/contacts/erase', { email }, {}, options.signal);
  }

  /**
   * One of the project's e-mails: status, attempts, the last delivery note, why it will not go, and
   * `opened_at` / `clicked_at` (the first human open and click, or null). 404: not the project's.
   */
  async email(scheduledEmailId: number, options: CallOptions = {}): Promise<ScopedEmail> {
    if (!Number.isInteger(scheduledEmailId) || scheduledEmailId < 1)
      throw new TypeError('scheduledEmailId must be a positive integer');
    const answer = await this.request<EmailResponse>(
      'GET',
      `/api/scoped/emails/${scheduledEmailId}`,
      undefined,
      {},
      options.signal,
    );
    return answer.email;
  }

  /** One page of the project's e-mails of an order or an idempotency key, newest first; `next_cursor` for the next. */
  emails(query: EmailsQuery, options: CallOptions = {}): Promise<EmailsResponse> {
    return this.request('GET', `/api/scoped/emails${queryString(query)}`, undefined, {}, options.signal);
  }

  /** Every e-mail of the query, page after page (`limit` is the page size). */
  iterateEmails(query: Omit<EmailsQuery, 'cursor'>, options: CallOptions = {}): AsyncGenerator<ScopedEmail> {
    return pages((cursor) => this.emails({ ...query, cursor }, options));
  }

  /**
   * One page of the project's chronology (accepted and refused requests, what each did), newest first;
   * `order: 'asc'` with `since` for polling.
   */
  events(query: EventsQuery = {}, options: CallOptions = {}): Promise<EventsResponse> {
    return this.request('GET', `/api/scoped/events${queryString(query)}`, undefined, {}, options.signal);
  }

  /** Every chronology row of the query, page after page (`limit` is the page size). */
  iterateEvents(query: Omit<EventsQuery, 'cursor'> = {}, options: CallOptions = {}): AsyncGenerator<ScopedEvent> {
    return pages((cursor) => this.events({ ...query, cursor }, options));
  }

  /** A gateway POST; with `dryRun`, `?dry_run=true` and a check that the gateway did treat it as one. */
  private async write<T>(
    path: string,
    body: Record<string, unknown>,
    headers: Record<string, string>,
    options: WriteOptions,
  ): Promise<T> {
    if (!options.dryRun) return this.request('POST', path, body, headers, options.signal);
    const answer = await this.request<Record<string, unknown>>(
      'POST',
      `${path}?dry_run=true`,
      body,
      headers,
      options.signal,
    );
    if (answer.dry_run !== true) {
      throw new GatewayError(200, {
        code: 'dry_run_unsupported',
        message: `POST ${path}: this gateway does not know dry runs; the request was handled for real`,
        answer,
      });
    }
    return answer as T;
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

/** Every item of every page, following `next_cursor` until the gateway gives none. */
async function* pages<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; next_cursor: string | null }>,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const answer = await page(cursor);
    yield* answer.items;
    cursor = answer.next_cursor ?? undefined;
  } while (cursor);
}

/** `?a=1&b=2` from the members that are set, or ''. */
function queryString(query: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
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
