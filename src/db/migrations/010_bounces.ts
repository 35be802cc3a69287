// Bounces and complaints (SPEC §12): the reports that come back after the relay said 250, the cause of a
// contact's status, and a lookup of e-mails by their Message-ID (reports name the message that way).
import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const ref = dialect === 'postgres' ? 'bigint' : 'integer';
  // Not foreign keys: a report of an unknown message has neither, and retention may prune e-mails.
  await db.schema
    .createTable('email_reports')
    .addColumn('id', idType as any, (c) => c.primaryKey().$call((b) => (dialect === 'sqlite' ? b.autoIncrement() : b)))
    .addColumn('project_id', ref as any)
    .addColumn('email_id', ref as any)
    .addColumn('contact_id', ref as any)
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status_code', 'text')
    .addColumn('diagnostic', 'text')
    .addColumn('recipient', 'text')
    .addColumn('message_id', 'text')
    .addColumn('provider_message_id', 'text')
    .addColumn('matched_by', 'text')
    // Replays change nothing twice: one row per source and report identity (provider event id or hash).
    .addColumn('dedupe_key', 'text', (c) => c.notNull())
    .addColumn('effects', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('raw', 'text', (c) => c.notNull())
    .addUniqueConstraint('email_reports_dedupe', ['source', 'dedupe_key'])
    .execute();
  await db.schema.createIndex('email_reports_email').on('email_reports').columns(['email_id', 'id']).execute();
  await db.schema
    .createIndex('email_reports_contact')
    .on('email_reports')
    .columns(['contact_id', 'kind', 'received_at'])
    .execute();
  await db.schema
    .createIndex('email_reports_project')
    .on('email_reports')
    .columns(['project_id', 'received_at'])
    .execute();
  await db.schema.createIndex('emails_message_id').on('scheduled_emails').column('message_id').execute();

  for (const [name, type] of [
    ['status_reason', 'text'],
    ['status_email_id', ref],
    ['status_report_id', ref],
    ['status_changed_at', 'bigint'],
  ] as const) {
    await db.schema
      .alterTable('contacts')
      .addColumn(name, type as any)
      .execute();
  }
}
