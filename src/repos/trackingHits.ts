// The outbox of hits (SPEC §17): API processes append them in batches (one INSERT per batch); workers
// claim pending ones under a lease and fold them into the per-e-mail counters in one transaction that
// also marks them processed, guarded by the lease, so every hit is counted exactly once however many
// workers run and whichever of them stalls.
import { sql, type Insertable } from 'kysely';
import { fromFlag, toFlag, type WithBooleans } from '../db/flags.js';
import type { Dialect } from '../db/index.js';
import type { EmailRow, TrackingHitsTable } from '../db/schema.js';
import { emailFromRow } from './flagRows.js';
import type { Executor } from './types.js';

export type NewHit = WithBooleans<
  Omit<Insertable<TrackingHitsTable>, 'processed_at' | 'locked_by' | 'locked_until'>,
  'machine'
>;
export type ClaimedHit = WithBooleans<
  Pick<TrackingHitsTable, 'project_id' | 'email_id' | 'kind' | 'position' | 'url' | 'machine' | 'at'>,
  'machine'
> & { id: number };

/** Rows per statement: 10 columns each stays far below SQLite's and PostgreSQL's parameter limits. */
const CHUNK = 1000;

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export async function insertHits(db: Executor, hits: NewHit[]): Promise<void> {
  for (const part of chunks(hits))
    await db
      .insertInto('tracking_hits')
      .values(part.map((h) => ({ ...h, machine: toFlag(h.machine) })))
      .execute();
}

// Literal, so both dialects use the partial index tracking_hits_pending.
const PENDING = sql<boolean>`processed_at is null`;

/** Claims up to `limit` pending hits whose lease is free or expired (SKIP LOCKED on PostgreSQL). */
export async function claimHits(
  db: Executor,
  dialect: Dialect,
  o: { workerId: string; now: number; leaseMs: number; limit: number },
): Promise<ClaimedHit[]> {
  let pick = db
    .selectFrom('tracking_hits')
    .select('id')
    .where(PENDING)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', o.now)]))
    .orderBy('id')
    .limit(o.limit);
  if (dialect === 'postgres') pick = pick.forUpdate().skipLocked();
  const rows = await db
    .updateTable('tracking_hits')
    .set({ locked_by: o.workerId, locked_until: o.now + o.leaseMs })
    .where('id', 'in', pick)
    .where(PENDING)
    .returning(['id', 'project_id', 'email_id', 'kind', 'position', 'url', 'machine', 'at'])
    .execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), machine: fromFlag(r.machine) }));
}

/** Marks claimed hits processed, only those this worker still holds; returns their ids. */
export async function markProcessed(db: Executor, workerId: string, ids: number[], now: number): Promise<Set<number>> {
  const done = new Set<number>();
  for (const part of chunks(ids)) {
    const rows = await db
      .updateTable('tracking_hits')
      .set({ processed_at: now, locked_by: null, locked_until: null })
      .where('id', 'in', part)
      .where('locked_by', '=', workerId)
      .where(PENDING)
      .returning('id')
      .execute();
    for (const r of rows) done.add(Number(r.id));
  }
  return done;
}

interface EmailDelta {
  email_id: number;
  project_id: number;
  opens: number;
  clicks: number;
  machine_opens: number;
  machine_clicks: number;
  first_open_at: number | null;
  first_click_at: number | null;
  last_click_at: number | null;
}

const earlier = (a: number | null, b: number) => (a === null || b < a ? b : a);

/** The counters a set of hits adds, per e-mail and per clicked link. */
export function deltas(hits: ClaimedHit[]) {
  const emails = new Map<number, EmailDelta>();
  const links = new Map<string, { email_id: number; position: number; url: string; clicks: number; last_at: number }>();
  const firstClickUrl = new Map<number, { at: number; url: string }>();
  for (const h of hits) {
    const at = Number(h.at);
    const emailId = Number(h.email_id);
    const d = emails.get(emailId) ?? {
      email_id: emailId,
      project_id: Number(h.project_id),
      opens: 0,
      clicks: 0,
      machine_opens: 0,
      machine_clicks: 0,
      first_open_at: null,
      first_click_at: null,
      last_click_at: null,
    };
    if (h.kind === 'open') {
      if (h.machine) d.machine_opens++;
      else {
        d.opens++;
        d.first_open_at = earlier(d.first_open_at, at);
      }
    } else if (h.machine) d.machine_clicks++;
    else {
      d.clicks++;
      d.first_click_at = earlier(d.first_click_at, at);
      d.last_click_at = d.last_click_at === null || at > d.last_click_at ? at : d.last_click_at;
      const key = `${emailId}:${h.position}`;
      const l = links.get(key) ?? {
        email_id: emailId,
        position: Number(h.position),
        url: h.url ?? '',
        clicks: 0,
        last_at: at,
      };
      l.clicks++;
      l.last_at = Math.max(l.last_at, at);
      links.set(key, l);
      const f = firstClickUrl.get(emailId);
      if (!f || at < f.at) firstClickUrl.set(emailId, { at, url: h.url ?? '' });
    }
    emails.set(emailId, d);
  }
  return { emails: [...emails.values()], links: [...links.values()], firstClickUrl };
}

/** The smaller of two nullable times in the dialect's SQL (PostgreSQL least() ignores nulls, SQLite min() does not). */
function least(dialect: Dialect, a: string, b: string) {
  return dialect === 'postgres'
    ? sql<number>`least(${sql.raw(a)}, ${sql.raw(b)})`
    : sql<number>`coalesce(min(${sql.raw(a)}, ${sql.raw(b)}), ${sql.raw(a)}, ${sql.raw(b)})`;
}
function greatest(dialect: Dialect, a: string, b: string) {
  return dialect === 'postgres'
    ? sql<number>`greatest(${sql.raw(a)}, ${sql.raw(b)})`
    : sql<number>`coalesce(max(${sql.raw(a)}, ${sql.raw(b)}), ${sql.raw(a)}, ${sql.raw(b)})`;
}

/** Adds the deltas to the counters (one upsert per chunk); rows stay locked until the caller commits. */
export async function addEngagement(db: Executor, dialect: Dialect, rows: EmailDelta[]): Promise<void> {
  const e = (c: string) => `email_engagement.${c}`;
  const x = (c: string) => `excluded.${c}`;
  for (const part of chunks(rows)) {
    await db
      .insertInto('email_engagement')
      .values(part)
      .onConflict((oc) =>
        oc.column('email_id').doUpdateSet({
          opens: sql`${sql.raw(e('opens'))} + ${sql.raw(x('opens'))}`,
          clicks: sql`${sql.raw(e('clicks'))} + ${sql.raw(x('clicks'))}`,
          machine_opens: sql`${sql.raw(e('machine_opens'))} + ${sql.raw(x('machine_opens'))}`,
          machine_clicks: sql`${sql.raw(e('machine_clicks'))} + ${sql.raw(x('machine_clicks'))}`,
          first_open_at: least(dialect, e('first_open_at'), x('first_open_at')),
          first_click_at: least(dialect, e('first_click_at'), x('first_click_at')),
          last_click_at: greatest(dialect, e('last_click_at'), x('last_click_at')),
        }),
      )
      .execute();
  }
}

export async function addLinkClicks(
  db: Executor,
  dialect: Dialect,
  rows: { email_id: number; position: number; url: string; clicks: number; last_at: number }[],
): Promise<void> {
  for (const part of chunks(rows)) {
    await db
      .insertInto('email_link_clicks')
      .values(part)
      .onConflict((oc) =>
        oc.columns(['email_id', 'position']).doUpdateSet({
          clicks: sql`email_link_clicks.clicks + excluded.clicks`,
          last_at: greatest(dialect, 'email_link_clicks.last_at', 'excluded.last_at'),
        }),
      )
      .execute();
  }
}

/**
 * Claims the right to tell the site about the first human open (or click) of these e-mails: exactly
 * one transaction wins per e-mail (on PostgreSQL a second one waits on the row lock, then finds the
 * flag set). Returns the e-mails won, with the first time.
 */
export async function claimFirstNotices(
  db: Executor,
  kind: 'open' | 'click',
  emailIds: number[],
): Promise<Map<number, number>> {
  const won = new Map<number, number>();
  if (emailIds.length === 0) return won;
  const flag = kind === 'open' ? 'open_notified' : 'click_notified';
  const first = kind === 'open' ? 'first_open_at' : 'first_click_at';
  for (const part of chunks(emailIds)) {
    const rows = await db
      .updateTable('email_engagement')
      .set({ [flag]: toFlag(true) })
      .where('email_id', 'in', part)
      .where(flag, '=', toFlag(false))
      .where(first, 'is not', null)
      .returning(['email_id', first])
      .execute();
    for (const r of rows) won.set(Number(r.email_id), Number((r as Record<string, unknown>)[first]));
  }
  return won;
}

export async function emailsByIds(db: Executor, ids: number[]): Promise<EmailRow[]> {
  if (ids.length === 0) return [];
  const out: EmailRow[] = [];
  for (const part of chunks(ids))
    out.push(
      ...(await db.selectFrom('scheduled_emails').selectAll().where('id', 'in', part).execute()).map(emailFromRow),
    );
  return out;
}

export async function existingEmailIds(db: Executor, ids: number[]): Promise<number[]> {
  const out: number[] = [];
  for (const part of chunks(ids))
    for (const r of await db.selectFrom('scheduled_emails').select('id').where('id', 'in', part).execute())
      out.push(Number(r.id));
  return out;
}

/** Releases the leases a stopping worker holds, so another takes its hits at once. */
export async function releaseHits(db: Executor, workerId: string): Promise<void> {
  await db
    .updateTable('tracking_hits')
    .set({ locked_by: null, locked_until: null })
    .where('locked_by', '=', workerId)
    .where(PENDING)
    .execute();
}

/** Retention: hits (and per-link URLs) older than the e-mail bodies' retention go, in chunks; counters stay. */
export async function purgeTrackingHits(db: Executor, cutoff: number, limit = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await db
      .deleteFrom('tracking_hits')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('tracking_hits')
          .select('id')
          .where('at', '<', cutoff)
          .where('processed_at', 'is not', null)
          .limit(limit),
      )
      .executeTakeFirst();
    const l = await db
      .deleteFrom('email_link_clicks')
      .where(({ eb, refTuple, selectFrom }) =>
        eb(
          refTuple('email_id', 'position'),
          'in',
          selectFrom('email_link_clicks')
            .select(['email_id', 'position'])
            .where('last_at', '<', cutoff)
            .limit(limit) as never,
        ),
      )
      .executeTakeFirst();
    const n = Number(r.numDeletedRows ?? 0) + Number(l.numDeletedRows ?? 0);
    total += n;
    if (n < limit) return total;
  }
}
