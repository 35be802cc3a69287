// Delivery per project (SPEC §11, issue 13): each project's own relays, sender and DKIM; one row per
// send attempt (which transport, what the relay answered); daily quota counters; test e-mails marked so
// statistics leave them out. Secrets (relay passwords, DKIM keys, provider webhook credentials) are
// stored only as AES-256-GCM ciphertext in `secrets` (services/secrets.ts).
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('project_delivery')
    .addColumn('project_id', id as any, (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    // Everything but the secrets, as JSON: transports without their passwords, sender, DKIM domain…
    .addColumn('settings', 'text', (c) => c.notNull())
    // The secrets as one encrypted JSON document; masks (last 4, fingerprints) are kept in `settings`.
    .addColumn('secrets', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('email_attempts')
    .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
      dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('scheduled_email_id', id as any, (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('transport', 'text', (c) => c.notNull())
    .addColumn('ok', 'integer', (c) => c.notNull())
    .addColumn('reply', 'text')
    .addColumn('queue_id', 'text')
    .addColumn('provider_message_id', 'text')
    .addColumn('message_id', 'text')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('email_attempts_email')
    .on('email_attempts')
    .columns(['scheduled_email_id', 'id'])
    .execute();
  // Provider reports name the relay's queue id or the provider's id (issue 14 matches by them).
  await db.schema.createIndex('email_attempts_queue_id').on('email_attempts').column('queue_id').execute();

  await db.schema
    .createTable('delivery_quota_usage')
    .addColumn('project_id', id as any, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('delivery_quota_usage_pk', ['project_id', 'day'])
    .execute();

  await db.schema
    .alterTable('scheduled_emails')
    .addColumn('is_test', 'integer', (c) => c.notNull().defaultTo(sql`0`))
    .execute();
}
