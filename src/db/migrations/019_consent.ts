// Consent, preferences and a person's data (SPEC §18): topics per project, a contact's subscription to
// each, the append-only consent records, the keyed hashes that keep an erased address suppressed, and
// the erasures that run in batches. Existing projects get the three built-in topics, and contacts that
// are unsubscribed today stay unsubscribed from every topic but `transactional`.
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

/** The topics of a project before anyone edits them; repeated in domain/consent.ts (a migration is frozen). */
const BUILT_IN = [
  { key: 'transactional', title: 'Письма о заказах и документах', advertising: 0, position: 0 },
  { key: 'cart_reminders', title: 'Напоминания о неоплаченных заказах', advertising: 1, position: 1 },
  { key: 'newsletters', title: 'Новости и рассылки', advertising: 1, position: 2 },
];

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const ref = dialect === 'postgres' ? 'bigint' : 'integer';
  const autoId = (c: any) => c.primaryKey().$call((b: any) => (dialect === 'sqlite' ? b.autoIncrement() : b));

  await db.schema
    .createTable('topics')
    .addColumn('project_id', ref as any, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('advertising', 'integer', (c) => c.notNull())
    .addColumn('require_consent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('topics_pk', ['project_id', 'key'])
    .execute();

  // A missing row means subscribed: only a change is stored.
  await db.schema
    .createTable('contact_topics')
    .addColumn('contact_id', ref as any, (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('subscribed', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_topics_pk', ['contact_id', 'topic'])
    .execute();

  await db.schema
    .createTable('consent_records')
    .addColumn('id', idType as any, autoId)
    .addColumn('project_id', ref as any, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('contact_id', ref as any, (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('granted', 'integer', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('text_version', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('consent_records_contact')
    .on('consent_records')
    .columns(['contact_id', 'topic', 'at', 'id'])
    .execute();

  // HMAC-SHA256 (installation secret) of an erased address that had unsubscribed, bounced or complained.
  await db.schema
    .createTable('suppressed_hashes')
    .addColumn('project_id', ref as any, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('email_hash', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('suppressed_hashes_pk', ['project_id', 'email_hash'])
    .execute();

  // The address is sealed (AES-GCM) only while an erasure runs: the event log is found by it.
  await db.schema
    .createTable('erasures')
    .addColumn('id', idType as any, autoId)
    .addColumn('project_id', ref as any, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('contact_id', ref as any, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('sealed_email', 'text')
    .addColumn('erased', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('erasures_contact').on('erasures').column('contact_id').execute();
  await db.schema.createIndex('erasures_status').on('erasures').columns(['status', 'locked_until']).execute();

  await db.schema.alterTable('contacts').addColumn('erased_at', 'bigint').execute();
  // The preference page is shown in the project's colour.
  await db.schema.alterTable('projects').addColumn('brand_color', 'text').execute();
  // The topic an e-mail was scheduled under: an unsubscribe from that topic stops it.
  await db.schema.alterTable('scheduled_emails').addColumn('topic', 'text').execute();
  // Erasure finds a person's events by address.
  await db.schema.createIndex('events_project_email').on('events').columns(['project_id', 'email']).execute();

  // The topics are configuration the request path caches (migration 004): a change moves the version.
  if (dialect === 'postgres') {
    await sql`create trigger topics_config_version after insert or update or delete or truncate on topics
      for each statement execute function egw_bump_config_version()`.execute(db);
  } else {
    for (const op of ['insert', 'update', 'delete'])
      await sql`create trigger ${sql.id(`topics_config_version_${op}`)} after ${sql.raw(op)} on topics
        begin update config_version set version = version + 1; end`.execute(db);
  }

  const now = Date.now();
  for (const t of BUILT_IN) {
    await sql`insert into topics (project_id, key, title, advertising, require_consent, position, created_at, updated_at)
      select id, ${t.key}, ${t.title}, ${t.advertising}, 0, ${t.position}, ${now}, ${now} from projects`.execute(db);
  }
  for (const topic of ['cart_reminders', 'newsletters']) {
    await sql`insert into contact_topics (contact_id, topic, subscribed, updated_at)
      select id, ${topic}, 0, ${now} from contacts where status = 'unsubscribed'`.execute(db);
  }
}
