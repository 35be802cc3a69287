// Issue 14: above the stop level of complaints (0.3 % over 7 days) a project's campaigns and cart chains
// pause until an administrator resumes them; the pause is kept on the project (when and why).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('marketing_paused_at', 'bigint').execute();
  await db.schema.alterTable('projects').addColumn('marketing_paused_reason', 'text').execute();
}
