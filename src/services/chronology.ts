// The event chronology and its statistics (SPEC §5), as the admin API shows them.
import { canonicalAddress } from '../domain/email.js';
import { notFound } from '../errors.js';
import { eventStats, findEvent, listEvents } from '../repos/events.js';
import { decodeCursor, encodeCursor } from '../repos/types.js';
import type { EventsQuery, StatsQuery } from '../schemas/chronology.js';
import { PAGE_SIZE } from '../schemas/common.js';
import { projectFilter } from './admin.js';
import type { Deps } from './context.js';

const time = (s?: string) => (s ? Date.parse(s) : undefined);

export async function events(deps: Deps, q: EventsQuery, scope: readonly number[] | null = null) {
  const db = deps.db.db;
  const { items, nextId } = await listEvents(db, {
    projectId: await projectFilter(db, q.site_key, scope),
    orderId: q.order_id,
    eventType: q.event_type,
    endpoint: q.endpoint,
    // Stored in canonical form, as contacts are.
    email: q.email ? canonicalAddress(q.email) : undefined,
    status: q.status,
    since: time(q.since),
    until: time(q.until),
    order: q.order ?? 'desc',
    limit: q.limit ?? PAGE_SIZE,
    cursor: decodeCursor(q.cursor),
  });
  return { ok: true as const, items, next_cursor: nextId === null ? null : encodeCursor(nextId) };
}

export async function statistics(deps: Deps, q: StatsQuery, scope: readonly number[] | null = null) {
  const stats = await eventStats(deps.db.db, deps.db.dialect, {
    projectId: await projectFilter(deps.db.db, q.site_key, scope),
    endpoint: q.endpoint,
    since: time(q.since),
    until: time(q.until),
  });
  return { ok: true as const, site_key: q.site_key ?? null, ...stats };
}

export async function event(deps: Deps, id: number) {
  const ev = await findEvent(deps.db.db, id);
  if (!ev) throw notFound('Event');
  return { ok: true as const, event: ev };
}
