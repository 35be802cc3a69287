// Issue 39 (SPEC §22): the default layout says who sends the e-mail. A project's logo above and its
// postal address below (Russian advertising law and the bulk senders' rules ask for a sender one can
// find); both optional, shown only when set.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('logo_url', 'text').execute();
  await db.schema.alterTable('projects').addColumn('postal_address', 'text').execute();
}
