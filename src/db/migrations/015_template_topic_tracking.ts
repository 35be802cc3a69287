// Stage three: a template belongs to a consent topic (SPEC §18; null = the default for how it is used:
// `transactional` when routed, `cart_reminders` in a cart chain, `newsletters` in a campaign) and may opt
// out of open/click tracking (SPEC §17: documents, passwords and receipts). Both are template-level
// settings, added here once so the template, tracking and consent work can each build on them.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('templates').addColumn('topic', 'text').execute();
  await db.schema
    .alterTable('templates')
    .addColumn('tracking', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}
