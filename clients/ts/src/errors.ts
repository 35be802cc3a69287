// Typed errors: one class per thing a caller does something different about. Every gateway error body is
// {"detail": {"ok": false, "error": {"code", "message", ...}}}; the class is chosen by status and code.

export interface ErrorDetails {
  code: string;
  message: string;
  [member: string]: unknown;
}

/** Base of every error the client throws. `status` is null when no HTTP answer arrived. */
export class GatewayError extends Error {
  readonly status: number | null;
  readonly code: string;
  /** The `detail.error` object of the answer (code, message and the case-specific members). */
  readonly details: ErrorDetails;
  /** The gateway's `x-request-id`, for finding the request in its logs. */
  readonly requestId: string | null;

  constructor(status: number | null, details: ErrorDetails, requestId: string | null = null, options?: ErrorOptions) {
    super(details.message, options);
    this.name = new.target.name;
    this.status = status;
    this.code = details.code;
    this.details = details;
    this.requestId = requestId;
  }
}

/** 422 `validation_error` or `unknown_event_type`: fix the data, never retried. */
export class ValidationError extends GatewayError {
  get eventType(): string | null {
    return typeof this.details.event_type === 'string' ? this.details.event_type : null;
  }
  /** Absent names; members of `fields` written `fields.<name>`. */
  get missingFields(): string[] {
    return stringList(this.details.missing_fields);
  }
  /** Every name the event type requires. */
  get requiredFields(): string[] {
    return stringList(this.details.required_fields);
  }
  /** Present but wrong: name -> reason. */
  get invalidFields(): Record<string, string> {
    const v = this.details.invalid_fields;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, string>) : {};
  }
}

/** 401 (missing or unknown key) and 403 (disabled key, or a right the key lacks). */
export class AuthError extends GatewayError {}

/** 429 after the retries were used up, or with a Retry-After longer than the client may wait. */
export class RateLimitedError extends GatewayError {
  /** Seconds the gateway asked to wait, when it said. */
  readonly retryAfter: number | null;
  constructor(
    status: number,
    details: ErrorDetails,
    requestId: string | null,
    retryAfter: number | null,
    options?: ErrorOptions,
  ) {
    super(status, details, requestId, options);
    this.retryAfter = retryAfter;
  }
}

/**
 * 422 `idempotency_key_reused`: this key was used before with a different body. For a key the client
 * derived (`<order_id>:<event_type>`), this means the event was already sent for that order; nothing was
 * sent now.
 */
export class IdempotencyConflictError extends GatewayError {
  get idempotencyKey(): string | null {
    return typeof this.details.idempotency_key === 'string' ? this.details.idempotency_key : null;
  }
}

/** 5xx after the retries were used up. */
export class ServerError extends GatewayError {}

/** No answer (refused, reset, timed out) after the retries were used up. */
export class ConnectionError extends GatewayError {}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

const AUTH_CODES = new Set(['missing_api_key', 'invalid_api_key', 'api_key_disabled']);

/** The error for an HTTP answer that is not a success. */
export function errorFor(
  status: number,
  body: unknown,
  requestId: string | null,
  retryAfter: number | null,
): GatewayError {
  const e = (body as { detail?: { error?: unknown } } | null)?.detail?.error;
  const given = e && typeof e === 'object' ? (e as Partial<ErrorDetails>) : null;
  const details: ErrorDetails =
    given && typeof given.code === 'string'
      ? { ...given, code: given.code, message: typeof given.message === 'string' ? given.message : `HTTP ${status}` }
      : { code: `http_${status}`, message: `HTTP ${status} without an error body` };
  if (status === 429) return new RateLimitedError(status, details, requestId, retryAfter);
  if (status >= 500) return new ServerError(status, details, requestId);
  if (status === 401 || status === 403 || AUTH_CODES.has(details.code))
    return new AuthError(status, details, requestId);
  if (details.code === 'idempotency_key_reused') return new IdempotencyConflictError(status, details, requestId);
  if (status === 422) return new ValidationError(status, details, requestId);
  return new GatewayError(status, details, requestId);
}
