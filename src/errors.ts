// Typed errors carrying the codes of SPEC §1. Everything that answers with an error goes through
// AppError so the envelope is built in one place (http/plugins/errors.ts).

export type ErrorCode =
  | 'invalid_json'
  | 'bad_request'
  | 'uri_too_long'
  | 'headers_too_large'
  | 'request_timeout'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'api_key_disabled'
  | 'permission_denied'
  | 'event_type_not_allowed'
  | 'cart_type_not_allowed'
  | 'template_not_allowed'
  | 'not_found'
  | 'unauthorized'
  | 'csrf_failed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'validation_error'
  | 'unknown_event_type'
  | 'idempotency_key_reused'
  | 'conflict'
  | 'template_impact'
  | 'rate_limited'
  | 'not_ready'
  | 'internal_error';

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Case-specific members placed beside code and message in the envelope. */
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toBody(): ErrorBody {
    return { detail: { ok: false, error: { code: this.code, message: this.message, ...this.extra } } };
  }
}

export interface ErrorBody {
  detail: { ok: false; error: { code: string; message: string; [k: string]: unknown } };
}

export const notFound = (what: string) => new AppError(404, 'not_found', `${what} not found`);

export function validationError(
  message: string,
  members: {
    event_type?: string | null;
    missing_fields?: string[];
    required_fields?: string[];
    invalid_fields?: Record<string, string>;
  },
): AppError {
  return new AppError(422, 'validation_error', message, {
    event_type: members.event_type ?? null,
    missing_fields: members.missing_fields ?? [],
    required_fields: members.required_fields ?? [],
    invalid_fields: members.invalid_fields ?? {},
  });
}
