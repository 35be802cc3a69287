// Issue 28: an owner may let one project's webhooks go to loopback and private addresses (a site
// developer testing with `php -S localhost:8000`), without restarting the gateway with
// WEBHOOKS_ALLOW_PRIVATE for every project. Off by default.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('projects')
    .addColumn('allow_private_webhooks', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
