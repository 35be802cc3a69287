// The audit log (SPEC §14): who changed what, from where, with before/after (secrets redacted).
import { redact } from '../domain/access.js';
import type { AuditAction, AuditVia } from '../domain/statuses.js';
import { insertAudit, listAudit, type NewAudit } from '../repos/audit.js';
import { decodeCursor, encodeCursor, iso, parseJson, type Executor } from '../repos/types.js';
import { validationError } from '../errors.js';
import { inTransaction } from '../db/groupCommit.js';
import { lockAuditedChanges } from '../db/index.js';
import type { Deps } from './context.js';

export interface AuditActor {
  actor: string;
  via: AuditVia;
  address: string | null;
  /** The personal token used, when one was. */
  token?: { id: number; name: string };
  /**
   * Set once a row has been written for this actor: the access hook (http/plugins/access.ts) logs a
   * successful admin change that recorded none, which is a bug in its service.
   */
  recorded?: boolean;
}

export interface AuditEntry {
  action: AuditAction;
  site_key?: string | null;
  target?: string | null;
  before?: unknown;
  after?: unknown;
}

const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(redact(v)));

/** The row of one change: who made it and its entry (`action` is a route for recordUnaudited). */
function auditRow(who: AuditActor, e: Omit<AuditEntry, 'action'> & { action: string }, now: number): NewAudit {
  return {
    at: now,
    actor: who.actor,
    via: who.via,
    address: who.address,
    action: e.action,
    site_key: e.site_key ?? null,
    target: e.target ?? null,
    before: json(e.before),
    after: json(e.after),
    token_id: who.token?.id ?? null,
    token_name: who.token?.name ?? null,
  };
}

/** Writes one audit row on `db`: pass the transaction of the change so both commit or neither. */
export async function record(db: Executor, who: AuditActor, e: AuditEntry, now: number): Promise<void> {
  who.recorded = true;
  await insertAudit(db, auditRow(who, e, now));
}

/**
 * The row the access hook writes for a successful change whose service wrote none (a bug, logged as
 * one): after the fact, named by its route, with the answer as `after`.
 */
export async function recordUnaudited(
  db: Executor,
  who: AuditActor,
  e: { route: string; site_key: string | null; target: string | null; after: unknown },
  now: number,
): Promise<void> {
  await insertAudit(
    db,
    auditRow(who, { action: e.route, site_key: e.site_key, target: e.target, after: e.after }, now),
  );
}

/** Notes one audit entry of the change under way; written when the change's own writes are done. */
export type Note = (entry: AuditEntry) => void;

/**
 * Runs a change and writes the audit rows it notes in the same transaction: both commit or neither
 * (SPEC §14). `work` must do all its database work through `trx`; it usually reads the state before,
 * changes it, reads it after and notes both. Audited changes run one at a time (lockAuditedChanges).
 */
export function audited<T>(deps: Deps, who: AuditActor, work: (trx: Executor, note: Note) => Promise<T>): Promise<T> {
  return inTransaction(deps.db, async (trx) => {
    await lockAuditedChanges(trx, deps.db.dialect);
    const entries: AuditEntry[] = [];
    const value = await work(trx, (e) => void entries.push(e));
    const now = deps.clock.now();
    for (const e of entries) await record(trx, who, e, now);
    return value;
  });
}

export interface AuditQuery {
  site_key?: string;
  actor?: string;
  action?: AuditAction;
  target?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

function time(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t))
    throw validationError(
      { reason: 'date_invalid', params: { field: name } },
      { invalid_fields: { [name]: 'is not an ISO 8601 date' } },
    );
  return t;
}

/** `visible`: the site keys the reader may see, null for all (owners). */
export async function auditLog(deps: Deps, q: AuditQuery, visible: readonly string[] | null) {
  const limit = q.limit ?? 50;
  const siteKeys = q.site_key !== undefined ? [q.site_key] : visible;
  const rows = await listAudit(deps.db.db, {
    siteKeys,
    actor: q.actor,
    action: q.action,
    target: q.target,
    since: time('since', q.since),
    until: time('until', q.until),
    beforeId: decodeCursor(q.cursor),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  return {
    ok: true as const,
    items: page.map((r) => ({
      id: r.id,
      at: iso(r.at)!,
      actor: r.actor,
      via: r.via,
      token: r.token_id === null ? null : { id: Number(r.token_id), name: r.token_name ?? '' },
      address: r.address,
      action: r.action,
      site_key: r.site_key,
      target: r.target,
      before: parseJson<unknown>(r.before, null),
      after: parseJson<unknown>(r.after, null),
    })),
    next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].id) : null,
  };
}
