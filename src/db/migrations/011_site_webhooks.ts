// Telling sites what happened (SPEC §13): a cart e-mail cancelled by a purchase names that purchase's
// event, so the story of an order links the stop to its cause. Not a foreign key: event rows may be
// pruned by retention before the e-mails they cancelled.
import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('scheduled_emails')
    .addColumn('cancelled_by_event_id', (dialect === 'postgres' ? 'bigint' : 'integer') as any)
    .execute();
}
