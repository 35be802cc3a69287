// Typed errors carrying the codes of SPEC §1. Everything that answers with an error goes through
// AppError so the envelope is built in one place (http/plugins/errors.ts). A case with its own reason
// (issue 28) takes its sentences from the catalogue (domain/errorCatalog.ts): the reason must be one
// of its keys, so a reason without an English and a Russian sentence does not compile.
import {
  sentenceFor,
  type ErrorCode,
  type ErrorParams,
  type ErrorReason,
  type MessageLanguage,
} from './domain/errorCatalog.js';

export type { ErrorCode, ErrorParams, ErrorReason } from './domain/errorCatalog.js';

/** A reason of the catalogue and what its sentence names; `field` names the form field concerned. */
export interface Said {
  reason: ErrorReason;
  params?: ErrorParams;
}

export class AppError extends Error {
  readonly reason?: ErrorReason;
  readonly params?: ErrorParams;

  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    /** A sentence of its own (English), or a reason whose English sentence becomes the message. */
    said: string | Said,
    /** Case-specific members placed beside code and message in the envelope. */
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof said === 'string' ? said : sentenceFor('en', { code, ...said }));
    if (typeof said !== 'string') {
      this.reason = said.reason;
      if (said.params && Object.keys(said.params).length) this.params = said.params;
    }
  }

  /** The reason and params of this error, for a copy made with another status (see toAppError). */
  get said(): string | Said {
    return this.reason ? { reason: this.reason, params: this.params } : this.message;
  }

  /**
   * The envelope; `message` in the language asked for (English, the default, is the message as built).
   * `reason` and `params` are additive members: present when the case has them.
   */
  toBody(lang: MessageLanguage = 'en'): ErrorBody {
    const message = lang === 'en' ? this.message : sentenceFor(lang, this);
    return {
      detail: {
        ok: false,
        error: {
          code: this.code,
          message,
          ...(this.reason ? { reason: this.reason } : {}),
          ...(this.params ? { params: this.params } : {}),
          ...this.extra,
        },
      },
    };
  }
}

export interface ErrorBody {
  detail: { ok: false; error: { code: string; message: string; [k: string]: unknown } };
}

export const notFound = (what: string) => new AppError(404, 'not_found', `${what} not found`);

export function validationError(
  said: string | Said,
  members: {
    event_type?: string | null;
    missing_fields?: string[];
    required_fields?: string[];
    invalid_fields?: Record<string, string>;
  },
): AppError {
  return new AppError(422, 'validation_error', said, {
    event_type: members.event_type ?? null,
    missing_fields: members.missing_fields ?? [],
    required_fields: members.required_fields ?? [],
    invalid_fields: members.invalid_fields ?? {},
  });
}
