// Set-based data generation for the benches: one statement per table, generate_series on PostgreSQL and
// a recursive CTE on SQLite, so a million rows take seconds, not a million round trips.
import { sql } from 'kysely';
import type { BenchDb } from './lib.js';

/** `g.i` runs 1..n: the row source both dialects select from. */
function series(b: BenchDb, n: number) {
  return b.kind === 'postgres'
    ? sql`select i from generate_series(1, ${n}::int) as s(i)`
    : sql`with recursive s(i) as (select 1 union all select i + 1 from s where i < ${n}) select i from s`;
}

/** n contacts `<prefix><i>@example.com` of a project; returns nothing, ids are read back by prefix. */
export async function seedContacts(b: BenchDb, projectId: number, n: number, prefix: string): Promise<void> {
  const now = Date.now();
  await sql`
    insert into contacts (project_id, email, name, fields, status, created_at, updated_at)
    select ${projectId}, ${prefix} || g.i || '@example.com', 'Reader ' || g.i, '{}', 'active', ${now}, ${now}
    from (${series(b, n)}) as g`.execute(b.db.db);
}

export interface EmailSeed {
  projectId: number;
  templateId: number;
  templateKey: string;
  /** Contacts whose e-mail starts with this prefix get one e-mail each (in id order). */
  contactPrefix: string;
  status: 'queued' | 'scheduled' | 'sent' | 'cancelled';
  dueAt: number;
  /** For sent rows: sent_at = due_at + this. */
  sentAfterMs?: number;
}

/** One e-mail per matching contact, written in one INSERT … SELECT. */
export async function seedEmails(b: BenchDb, e: EmailSeed): Promise<number> {
  const now = Date.now();
  const context = JSON.stringify({
    event_type: 'contest_results',
    fields: { event_title: 'Spring contest', work_title: 'A study of autumn leaves', place: '1' },
    event_title: 'Spring contest',
    work_title: 'A study of autumn leaves',
    place: '1',
  });
  const sentAt = e.status === 'sent' ? e.dueAt + (e.sentAfterMs ?? 500) : null;
  const res = await sql`
    insert into scheduled_emails (project_id, kind, template_id, template_key, contact_id, to_email, to_name, order_id, event_id,
      campaign_id, chain_step, context, status, due_at, attempts, sent_at, created_at, updated_at)
    select ${e.projectId}, 'transactional', ${e.templateId}, ${e.templateKey}, c.id, c.email, c.name, null, null,
      null, null, ${context}, ${e.status}, ${e.dueAt}, ${e.status === 'sent' ? 1 : 0}, ${sentAt}, ${now}, ${now}
    from contacts c where c.project_id = ${e.projectId} and c.email like ${`${e.contactPrefix}%`}`.execute(b.db.db);
  return Number(res.numAffectedRows ?? 0);
}

/** The template the demo project routes contest_results to. */
export async function contestTemplate(b: BenchDb, projectId: number): Promise<{ id: number; name: string }> {
  return b.db.db
    .selectFrom('routes')
    .innerJoin('templates', 'templates.id', 'routes.template_id')
    .select(['templates.id', 'templates.name'])
    .where('routes.project_id', '=', projectId)
    .where('routes.routing_key', '=', 'contest_results')
    .executeTakeFirstOrThrow();
}

export { series };
