// Issue 24: a project's Reply-To (the address customers' answers go to) belongs to the project, not only
// to its own relay settings: a project on the installation's transport (the demo) has one too. The
// relay settings' reply_to, when set, still wins for that project's e-mails.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('reply_to', 'text').execute();
}
