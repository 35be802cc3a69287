// What every gateway request shares, accepted or refused: its searchable members (describe), its
// chronology row, its idempotency record and the replay of a stored answer for a repeated key. Accepted
// requests are written by the plan executor (execute.ts); refusals are logged here (logRequest).
import { createHash } from 'node:crypto';
import type { NewEvent } from '../../db/schema.js';
import { inTransaction } from '../../db/groupCommit.js';
import { AppError } from '../../errors.js';
import { insertEvent } from '../../repos/events.js';
import { findIdempotency, type IdempotencyRecord, type NewIdempotencyRecord } from '../../repos/idempotency.js';
import { canonicalAddress } from '../../domain/email.js';
import type { Body } from '../../domain/validation.js';
import { storedPayload } from '../../domain/inputRules.js';
import { REPEAT_ERROR_CODE } from '../../domain/statuses.js';
import { refusalRecord } from '../../domain/refusal.js';
import type { GatewayCall } from '../context.js';
import { enqueueSiteWebhooks } from '../siteWebhooks/enqueue.js';

export interface Described {
  event_type: string | null;
  email: string | null;
  order_id: string | null;
  idempotency_key: string | null;
}

// A searchable column never gets a NUL (PostgreSQL refuses it) or a lone surrogate (stored as U+FFFD):
// such a value is left out; the payload keeps it, escaped by JSON.stringify.
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
function str(v: unknown, max = 500): string | null {
  if (typeof v !== 'string' || UNSTORABLE.test(v)) return null;
  // Cut between characters, never inside a surrogate pair.
  return v.length > max && /[\uD800-\uDBFF]/.test(v[max - 1]) ? v.slice(0, max - 1) : v.slice(0, max);
}

/** The searchable members of a request for the event log, whatever shape the body had. */
export function describe(endpoint: string, body: unknown): Described {
  const b = body && typeof body === 'object' && !Array.isArray(body) ? (body as Body) : {};
  let eventType = str(b.event_type, 100);
  const cart = str(b.cart_type, 20);
  if (endpoint === 'order-created' || endpoint === 'unpaid-order')
    eventType = cart ? `${cart}_order_created` : 'order_created';
  if (endpoint === 'purchase') eventType = cart ? `${cart}_paid` : 'purchase';
  if (endpoint === 'list-contact') eventType = 'list_contact_upsert';
  if (endpoint === 'contact-consent') eventType = 'contact_consent';
  if (endpoint === 'contact-erase') eventType = 'contact_erase';
  if (endpoint === 'catalog') eventType = null;
  const email = str(b.email, 254);
  return {
    event_type: eventType,
    email: email ? canonicalAddress(email) : null,
    order_id: typeof b.order_id === 'number' ? String(b.order_id) : str(b.order_id, 200),
    idempotency_key: str(b.idempotency_key, 200),
  };
}

/** Key order does not matter for "the same body". */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Body)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function requestHash(endpoint: string, body: Body): string {
  return createHash('sha256').update(endpoint).update('\n').update(canonical(body)).digest('hex');
}

export interface Accepted<T> {
  status: number;
  body: T;
  eventId: number;
  replayed: boolean;
}

/** Thrown inside the accept transaction when the idempotency key is stored already: roll back, replay. */
export class IdempotencyRace extends Error {}

/** What carrying out a request produced: its response body and the effects its event-log row records. */
export interface Answer<T> {
  response: T;
  effects: Record<string, unknown>;
}

/** A request as the accept path sees it: the call, its body and what is derived from them once. */
export interface Incoming {
  call: GatewayCall;
  body: Body;
  d: Described;
  /** requestHash of the body; empty without an idempotency key (nothing compares it then). */
  hash: string;
  now: number;
}

export function incoming(call: GatewayCall, body: Body): Incoming {
  const d = describe(call.endpoint, body);
  // The canonical form of the body is written only for an idempotency record to compare with.
  return { call, body, d, hash: d.idempotency_key ? requestHash(call.endpoint, body) : '', now: call.deps.clock.now() };
}

/** The chronology row of an accepted request (its effects given as JSON text). */
export function acceptedEventRow(r: Incoming, effects: string): NewEvent {
  const { project, key, endpoint } = r.call;
  return {
    project_id: project.id,
    key_id: key?.id ?? null,
    key_last4: key?.last4 ?? null,
    endpoint,
    ...r.d,
    http_status: 200,
    accepted: true,
    error_code: null,
    payload: storedPayload(r.body),
    effects,
    created_at: r.now,
  };
}

/**
 * Runs `write` (the request's transaction, which throws IdempotencyRace when the key is stored already)
 * and, when the key was taken, answers as the repeat of the stored request: the stored answer for the
 * same body, 422 for another.
 */
export async function withIdempotency<T>(
  r: Incoming,
  write: () => Promise<Accepted<T>>,
  refresh?: (stored: T) => Promise<T>,
): Promise<Accepted<T>> {
  try {
    return await write();
  } catch (e) {
    // The key was stored before (a repeat) or by a concurrent request that committed first: ours rolled
    // back, answer as the repeat of the stored request.
    if (e instanceof IdempotencyRace && r.d.idempotency_key) {
      const rec = await findIdempotency(r.call.deps.db.db, r.call.project.id, r.d.idempotency_key);
      if (rec) return replay(r, rec, refresh);
    }
    throw e;
  }
}

/** The idempotency record of an accepted request, or null when it has no key. */
export function idempotencyRow(r: Incoming, response: unknown, eventId: number): NewIdempotencyRecord | null {
  if (!r.d.idempotency_key) return null;
  return {
    project_id: r.call.project.id,
    idempotency_key: r.d.idempotency_key,
    request_hash: r.hash,
    endpoint: r.call.endpoint,
    response_status: 200,
    response_body: JSON.stringify(response),
    event_id: eventId,
    created_at: r.now,
  };
}

/** The answer stored under the request's key (refreshed), or 422 when it was stored for another body. */
async function storedAnswer<T>(r: Incoming, rec: IdempotencyRecord, refresh?: (stored: T) => Promise<T>): Promise<T> {
  if (rec.request_hash !== r.hash) {
    throw new AppError(
      422,
      'idempotency_key_reused',
      { reason: 'idempotency_key_reused' },
      {
        idempotency_key: r.d.idempotency_key,
        original_event_id: rec.event_id,
      },
    );
  }
  const stored = JSON.parse(rec.response_body) as T;
  return refresh ? refresh(stored) : stored;
}

async function replay<T>(
  r: Incoming,
  rec: IdempotencyRecord,
  refresh?: (stored: T) => Promise<T>,
): Promise<Accepted<T>> {
  const stored = await storedAnswer(r, rec, refresh);
  // The replay is itself a request the chronology should show, pointing at the original.
  if (r.call.dryRun) {
    const row = acceptedEventRow(r, JSON.stringify({ dry_run: true, replay_of: rec.event_id }));
    const eventId = await insertEvent(r.call.deps.db.db, row);
    return { status: rec.response_status, body: { ...stored, dry_run: true }, eventId, replayed: true };
  }
  const row = { ...acceptedEventRow(r, JSON.stringify({ replay_of: rec.event_id })), http_status: rec.response_status };
  const also = r.call.alsoInTransaction;
  const eventId = also
    ? await inTransaction(r.call.deps.db, async (trx) => {
        const id = await insertEvent(trx, row);
        await also(trx, { eventId: id, status: rec.response_status, accepted: true, replayed: true, body: stored });
        return id;
      })
    : await insertEvent(r.call.deps.db.db, row);
  return { status: rec.response_status, body: stored, eventId, replayed: true };
}

/**
 * Logs a gateway request that changed nothing: a refusal (SPEC §5: a developer debugging a 422 finds
 * it in the chronology), or a read such as the catalog (code null).
 */
export async function logRequest(
  call: GatewayCall,
  body: unknown,
  status: number,
  code: string | null,
  effects: Record<string, unknown> = {},
): Promise<void> {
  const { deps, project, key, endpoint } = call;
  const d = describe(endpoint, body);
  const now = deps.clock.now();
  const row = {
    project_id: project.id,
    key_id: key?.id ?? null,
    key_last4: key?.last4 ?? null,
    endpoint,
    ...d,
    http_status: status,
    accepted: code === null,
    error_code: code,
    payload: storedPayload(body),
    effects: JSON.stringify(effects),
    created_at: now,
  };
  if (call.dryRun) row.effects = JSON.stringify({ ...effects, dry_run: true });
  const also = call.dryRun ? undefined : call.alsoInTransaction;
  if (call.dryRun || (!notifiesRejection(code) && !also)) {
    await insertEvent(deps.db.db, row);
    return;
  }
  // event.rejected (and the caller's further work, an audit row) commit with the chronology row it
  // reports (SPEC §13).
  await inTransaction(deps.db, async (trx) => {
    const eventId = await insertEvent(trx, row);
    await also?.(trx, { eventId, status, accepted: code === null, replayed: false, body: null });
    if (!notifiesRejection(code)) return;
    await enqueueSiteWebhooks(
      trx,
      project.id,
      'event.rejected',
      {
        event_id: eventId,
        scheduled_email_id: null,
        ...d,
        status: 'rejected',
        reason: code,
        endpoint,
        http_status: status,
        error_code: code,
      },
      now,
    );
  });
}

/**
 * Which refusals a site hears of as event.rejected: every refusal of a request with a known key but
 * rate limiting (429), which would answer a flood with a flood, and a repeated call (a retry whose body
 * changed under a used idempotency key: the first call did its work, and was told to the site then);
 * the chronology has those.
 */
export const notifiesRejection = (code: string | null): code is string =>
  code !== null && code !== 'rate_limited' && code !== REPEAT_ERROR_CODE;

/**
 * What the chronology row of a refusal records: a repeated call names the call it repeats; any other
 * refusal keeps what its answer told the site (reason, missing and invalid members), so the event page
 * says the same in the administrator's words (issue 37).
 */
export function refusalEffects(e: AppError): Record<string, unknown> {
  if (e.code === REPEAT_ERROR_CODE) return { repeat_of: e.extra.original_event_id };
  const refusal = refusalRecord(e);
  return refusal ? { refusal } : {};
}
