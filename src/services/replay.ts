// Replaying an event from the chronology (issue 15): a request the gateway refused (a missing template's
// right, a right the key lacked) or a transactional send that found no template runs again, after the
// administrator fixed the configuration, as a new event linked to the original (`replay_of`). It runs
// with the original key's rights as they are now and under the original's idempotency key: if the site
// has meanwhile sent it again successfully, the stored answer is replayed and nothing goes twice. A
// template-less send already holds its key (with the no_template answer), so its replay runs without the
// key and can be done once only.
import { replayBlocker } from '../domain/refusal.js';
import { AppError, notFound, type ErrorParams, type ErrorReason } from '../errors.js';
import { findKeyById } from '../repos/keys.js';
import { findProjectById } from '../repos/projects.js';
import { findEventRow, replayOf } from '../repos/events.js';
import { parseJson } from '../repos/types.js';
import { lockAuditedChanges } from '../db/index.js';
import { logRequest, refusalEffects } from './accept/accept.js';
import type { Deps, GatewayCall } from './context.js';
import { configSnapshot } from './configCache.js';
import { record, type AuditActor } from './audit.js';
import * as gateway from './gateway.js';

const conflict = (reason: ErrorReason, params?: ErrorParams) => new AppError(409, 'conflict', { reason, params });

/** The event was replayed already (or by a replay that committed first). */
class AlreadyReplayed extends AppError {
  constructor(id: number, by: number) {
    super(409, 'conflict', { reason: 'replay_done', params: { id, by } });
  }
}

export async function replayEvent(deps: Deps, who: AuditActor, id: number) {
  const db = deps.db.db;
  const ev = await findEventRow(db, id);
  if (!ev) throw notFound(`Event ${id}`);
  const effects = parseJson<Record<string, unknown>>(ev.effects, {});
  const accepted = Boolean(ev.accepted);
  const templateLess = accepted && ev.endpoint === 'transactional' && effects.template_key === null;
  // One rule for the page's button and for this check (domain/refusal.ts).
  const blocker = replayBlocker({ ...ev, accepted, effects });
  if (blocker === 'replay_endpoint') throw conflict(blocker, { endpoint: ev.endpoint });
  if (blocker === 'replay_repeat') throw conflict(blocker, { event: Number(effects.repeat_of) });
  if (blocker) throw conflict(blocker);
  const body = parseJson<Record<string, unknown> | null>(ev.payload, null);
  if (!body || typeof body !== 'object' || Array.isArray(body) || '_truncated' in body)
    throw conflict('replay_no_body');
  const done = await replayOf(db, ev);
  if (done) throw new AlreadyReplayed(id, done.id);

  const project = await findProjectById(db, ev.project_id);
  if (!project) throw notFound(`Project of event ${id}`);
  const key = ev.key_id === null ? undefined : await findKeyById(db, ev.key_id);
  if (!key) throw conflict('replay_key_gone');
  if (key.status !== 'active') throw conflict('replay_key_disabled', { last4: key.last4 });
  const call: GatewayCall = {
    deps,
    project,
    key,
    endpoint: ev.endpoint,
    config: await configSnapshot(deps.db),
    replayOf: Number(ev.id),
    // The replay runs through the accept path, which owns its transaction (accept/execute.ts, or logRequest
    // for a refusal, or the repeat row of a stored answer): the audit row is written inside it, so the
    // new chronology row, its effects and the row saying who replayed it commit together.
    alsoInTransaction: async (trx, o) => {
      if (o.accepted && !o.replayed) {
        // Replays of this event made at once all passed the check above: each looks again where its
        // rows commit, after the one before it (PostgreSQL: the audited-changes lock; SQLite: one
        // writer), and only the first keeps its rows (a template-less send has no key to stop a second).
        await lockAuditedChanges(trx, deps.db.dialect);
        const other = await replayOf(trx, ev, o.eventId);
        if (other) throw new AlreadyReplayed(id, other.id);
      }
      await record(
        trx,
        who,
        {
          action: 'event.replay',
          site_key: project.site_key,
          target: `event:${Number(ev.id)}`,
          before: {
            event_id: Number(ev.id),
            accepted: ev.accepted,
            http_status: ev.http_status,
            // Not `error_code`: a member named *code* is redacted as a secret (domain/access.ts).
            error: ev.error_code,
          },
          after: {
            event_id: o.eventId,
            accepted: o.accepted,
            http_status: o.status,
            replayed_stored_answer: o.replayed,
          },
        },
        deps.clock.now(),
      );
    },
  };
  if (templateLess) delete body.idempotency_key;
  try {
    const r =
      ev.endpoint === 'transactional'
        ? await gateway.transactional(call, body, { respondAsync: true })
        : ev.endpoint === 'order-created'
          ? await gateway.orderCreated(call, body)
          : await gateway.purchase(call, body);
    return {
      ok: true as const,
      replay_of: Number(ev.id),
      accepted: true,
      replayed_stored_answer: r.replayed,
      event_id: r.eventId,
      http_status: r.status,
      answer: r.body as Record<string, unknown>,
    };
  } catch (e) {
    if (e instanceof AlreadyReplayed || !(e instanceof AppError) || e.status >= 500) throw e;
    // Refused again: the chronology says so, linked to the original; the administrator reads why.
    await logRequest(call, body, e.status, e.code, { ...refusalEffects(e), replay_of: Number(ev.id) });
    return {
      ok: true as const,
      replay_of: Number(ev.id),
      accepted: false,
      replayed_stored_answer: false,
      event_id: null,
      http_status: e.status,
      answer: e.toBody().detail as unknown as Record<string, unknown>,
    };
  }
}
