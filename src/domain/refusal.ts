// What the chronology keeps of a refused gateway request's answer, and whether running the request again
// (a replay, issue 15) can ever succeed (issue 37). The administrator reads the same members the site's
// developer was told (the reason, the missing and invalid members), and is offered a replay only where
// changing the configuration can change the answer: a body that lacks `email` fails again whatever she does.
import { catalogEvent } from './catalog.js';
import { REPEAT_ERROR_CODE } from './statuses.js';

/** The members of an answer a refused event keeps (the envelope's, without `message` and `code`). */
export interface StoredRefusal {
  reason?: string;
  params?: Record<string, string | number>;
  missing_fields?: string[];
  invalid_fields?: Record<string, string>;
}

/** The part of an error's envelope worth keeping: only members present and not empty. */
export function refusalRecord(e: {
  reason?: string;
  params?: Record<string, string | number>;
  extra: Record<string, unknown>;
}): StoredRefusal | null {
  const out: StoredRefusal = {};
  if (e.reason) out.reason = e.reason;
  if (e.params && Object.keys(e.params).length) out.params = e.params;
  const missing = e.extra.missing_fields;
  if (Array.isArray(missing) && missing.length) out.missing_fields = missing.map(String);
  const invalid = e.extra.invalid_fields;
  if (invalid && typeof invalid === 'object' && !Array.isArray(invalid) && Object.keys(invalid).length)
    out.invalid_fields = Object.fromEntries(Object.entries(invalid).map(([k, v]) => [k, String(v)]));
  return Object.keys(out).length ? out : null;
}

/** The endpoints whose requests a replay runs again (services/replay.ts). */
export const REPLAYABLE_ENDPOINTS: readonly string[] = ['transactional', 'order-created', 'purchase'];

/**
 * Codes that describe the request itself, not the project's configuration: the same body is refused
 * again whatever the administrator changes.
 */
const BODY_FAULTS = new Set([
  'invalid_json',
  'bad_request',
  'payload_too_large',
  'unsupported_media_type',
  'unknown_event_type',
  'missing_api_key',
  'invalid_api_key',
]);

/**
 * A 422 that a configuration change can cure: only members of `fields` a routed template requires (the
 * template may change); a top-level member (`email`, `order_id`…), a member the catalog itself requires,
 * or an invalid value is the request's own fault.
 */
function curableValidation(eventType: string | null, r: StoredRefusal | null): boolean {
  // A refusal logged before issue 37 kept no detail: offered as before.
  if (!r) return true;
  if (r.invalid_fields && Object.keys(r.invalid_fields).length) return false;
  const catalogNeeds = new Set((eventType ? (catalogEvent(eventType)?.fields ?? []) : []).map((f) => `fields.${f}`));
  return (r.missing_fields ?? []).every((m) => m.startsWith('fields.') && !catalogNeeds.has(m));
}

/** effects.refusal as stored (JSON), or null when the row kept none. */
function storedRefusal(v: unknown): StoredRefusal | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  return {
    missing_fields: Array.isArray(o.missing_fields) ? o.missing_fields.map(String) : undefined,
    invalid_fields:
      o.invalid_fields && typeof o.invalid_fields === 'object'
        ? (o.invalid_fields as Record<string, string>)
        : undefined,
  };
}

export interface ReplayableEvent {
  endpoint: string;
  event_type: string | null;
  accepted: boolean;
  http_status: number;
  error_code: string | null;
  effects: Record<string, unknown>;
}

/** Why a replay of this event cannot succeed, or null when it can (after the configuration is fixed). */
export function replayBlocker(
  ev: ReplayableEvent,
):
  | null
  | 'replay_endpoint'
  | 'replay_dry_run'
  | 'replay_repeat'
  | 'replay_accepted'
  | 'replay_rate_limited'
  | 'replay_request_fault' {
  if (!REPLAYABLE_ENDPOINTS.includes(ev.endpoint)) return 'replay_endpoint';
  if (ev.effects.dry_run) return 'replay_dry_run';
  if (ev.error_code === REPEAT_ERROR_CODE) return 'replay_repeat';
  const templateLess = ev.accepted && ev.endpoint === 'transactional' && ev.effects.template_key === null;
  if (ev.accepted && !templateLess) return 'replay_accepted';
  if (ev.http_status === 429) return 'replay_rate_limited';
  if (ev.error_code && BODY_FAULTS.has(ev.error_code)) return 'replay_request_fault';
  if (ev.error_code === 'validation_error') {
    if (!curableValidation(ev.event_type, storedRefusal(ev.effects.refusal))) return 'replay_request_fault';
  }
  return null;
}
