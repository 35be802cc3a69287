// Contact search for the admin UI: by any part of the address, newest first, keyset-paged. The user's
// text is matched literally: LIKE's wildcards in it are escaped, so "anna_b" finds "anna_b@…" only.
import { sql } from 'kysely';
import { normaliseEmail } from './contacts.js';
import type { Executor } from './types.js';

/** The text as a LIKE pattern matching it anywhere, with `!` as the escape character. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

export async function findContacts(
  db: Executor,
  o: { projectId?: number; email?: string; limit: number; afterId: number | null },
) {
  let q = db
    .selectFrom('contacts')
    .innerJoin('projects', 'projects.id', 'contacts.project_id')
    .select([
      'contacts.id',
      'projects.site_key',
      'contacts.email',
      'contacts.name',
      'contacts.status',
      'contacts.created_at',
      'contacts.updated_at',
    ])
    .orderBy('contacts.id', 'desc')
    .limit(o.limit + 1);
  if (o.projectId !== undefined) q = q.where('contacts.project_id', '=', o.projectId);
  // Addresses are stored normalised (trimmed, lower case), so the search text is normalised the same way.
  const text = o.email ? normaliseEmail(o.email) : '';
  if (text) q = q.where(sql<boolean>`${sql.ref('contacts.email')} like ${containsPattern(text)} escape '!'`);
  if (o.afterId !== null) q = q.where('contacts.id', '<', o.afterId);
  return q.execute();
}
