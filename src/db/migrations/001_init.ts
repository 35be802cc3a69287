import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  // Ids: INTEGER PRIMARY KEY is SQLite's rowid alias; bigserial on PostgreSQL (parsed to numbers).
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const ref = dialect === 'postgres' ? 'bigint' : 'integer';
  const ms = 'bigint';
  const text = 'text';

  await db.schema
    .createTable('settings')
    .addColumn('name', text, (c) => c.primaryKey())
    .addColumn('value', text, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('projects')
    .addColumn('id', idType as any, (c) => c.primaryKey().$call((b) => (dialect === 'sqlite' ? b.autoIncrement() : b)))
    .addColumn('site_key', text, (c) => c.notNull().unique())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('from_email', text, (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();

  const withId = (name: string) =>
    db.schema
      .createTable(name)
      .addColumn('id', idType as any, (c) =>
        c.primaryKey().$call((b) => (dialect === 'sqlite' ? b.autoIncrement() : b)),
      );
  const projectRef = (c: any) => c.notNull().references('projects.id').onDelete('cascade');

  await withId('api_keys')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('key_hash', text, (c) => c.notNull().unique())
    .addColumn('last4', text, (c) => c.notNull())
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('rights', text, (c) => c.notNull())
    .addColumn('rate_per_second', 'integer')
    .addColumn('rate_burst', 'integer')
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('disabled_at', ms)
    .execute();
  await db.schema.createIndex('api_keys_project').on('api_keys').column('project_id').execute();

  await withId('contacts')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('email', text, (c) => c.notNull())
    .addColumn('name', text)
    .addColumn('fields', text, (c) => c.notNull().defaultTo('{}'))
    .addColumn('status', text, (c) => c.notNull().defaultTo('active'))
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addUniqueConstraint('contacts_project_email', ['project_id', 'email'])
    .execute();

  await withId('lists')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addUniqueConstraint('lists_project_name', ['project_id', 'name'])
    .execute();

  await db.schema
    .createTable('list_members')
    .addColumn('list_id', ref as any, (c) => c.notNull().references('lists.id').onDelete('cascade'))
    .addColumn('contact_id', ref as any, (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('added_at', ms, (c) => c.notNull())
    .addPrimaryKeyConstraint('list_members_pk', ['list_id', 'contact_id'])
    .execute();
  await db.schema.createIndex('list_members_contact').on('list_members').column('contact_id').execute();

  await withId('templates')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('subject', text, (c) => c.notNull())
    .addColumn('html', text, (c) => c.notNull())
    .addColumn('text', text, (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addUniqueConstraint('templates_project_name', ['project_id', 'name'])
    .execute();

  await db.schema
    .createTable('routes')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('routing_key', text, (c) => c.notNull())
    .addColumn('template_id', ref as any, (c) => c.notNull().references('templates.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('routes_pk', ['project_id', 'routing_key'])
    .execute();

  await db.schema
    .createTable('course_categories')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('category_id', text, (c) => c.notNull())
    .addColumn('list_id', ref as any, (c) => c.notNull().references('lists.id').onDelete('cascade'))
    .addColumn('slug', text, (c) => c.notNull())
    .addColumn('title', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('course_categories_pk', ['project_id', 'category_id'])
    .execute();

  await db.schema
    .createTable('paid_lists')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('cart_type', text, (c) => c.notNull())
    .addColumn('list_id', ref as any, (c) => c.notNull().references('lists.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('paid_lists_pk', ['project_id', 'cart_type'])
    .execute();

  await withId('sequences')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('steps', text, (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('cart_chains')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('cart_type', text, (c) => c.notNull())
    .addColumn('sequence_id', ref as any, (c) => c.notNull().references('sequences.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('cart_chains_pk', ['project_id', 'cart_type'])
    .execute();

  await withId('orders')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('order_id', text, (c) => c.notNull())
    .addColumn('cart_type', text, (c) => c.notNull())
    .addColumn('contact_id', ref as any, (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('course_name', text)
    .addColumn('amount', 'double precision')
    .addColumn('currency', text)
    .addColumn('paid_at', text)
    .addColumn('created_event_id', ref as any)
    .addColumn('paid_event_id', ref as any)
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .addUniqueConstraint('orders_project_order', ['project_id', 'order_id'])
    .execute();

  // The event log is append-only and large; no foreign keys so that deleting a project's config never
  // rewrites history, and inserts stay cheap.
  await withId('events')
    .addColumn('project_id', ref as any, (c) => c.notNull())
    .addColumn('key_id', ref as any)
    .addColumn('key_last4', text)
    .addColumn('endpoint', text, (c) => c.notNull())
    .addColumn('event_type', text)
    .addColumn('email', text)
    .addColumn('order_id', text)
    .addColumn('idempotency_key', text)
    .addColumn('http_status', 'integer', (c) => c.notNull())
    .addColumn('accepted', 'integer', (c) => c.notNull())
    .addColumn('error_code', text)
    .addColumn('payload', text)
    .addColumn('effects', text, (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', ms, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_project_id').on('events').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('events_project_order').on('events').columns(['project_id', 'order_id', 'id']).execute();
  await db.schema.createIndex('events_created').on('events').column('created_at').execute();

  await db.schema
    .createTable('idempotency')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('idempotency_key', text, (c) => c.notNull())
    .addColumn('request_hash', text, (c) => c.notNull())
    .addColumn('endpoint', text, (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_body', text, (c) => c.notNull())
    .addColumn('event_id', ref as any, (c) => c.notNull())
    .addColumn('created_at', ms, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_pk', ['project_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('idempotency_created').on('idempotency').column('created_at').execute();

  await withId('scheduled_emails')
    .addColumn('project_id', ref as any, projectRef)
    .addColumn('kind', text, (c) => c.notNull())
    .addColumn('template_id', ref as any, (c) => c.notNull())
    .addColumn('template_key', text, (c) => c.notNull())
    .addColumn('contact_id', ref as any, (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('to_email', text, (c) => c.notNull())
    .addColumn('to_name', text)
    .addColumn('order_id', text)
    .addColumn('event_id', ref as any)
    .addColumn('campaign_id', ref as any)
    .addColumn('chain_step', text)
    .addColumn('context', text, (c) => c.notNull())
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('due_at', ms, (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', text)
    .addColumn('locked_by', text)
    .addColumn('locked_until', ms)
    .addColumn('sent_at', ms)
    .addColumn('message_id', text)
    .addColumn('rendered', text)
    .addColumn('created_at', ms, (c) => c.notNull())
    .addColumn('updated_at', ms, (c) => c.notNull())
    .execute();
  // The claim query reads only pending rows in due order: a partial index keeps it small however many
  // sent rows pile up. A second one finds expired leases of crashed workers.
  await db.schema
    .createIndex('emails_pending_due')
    .on('scheduled_emails')
    .column('due_at')
    .where(sql.ref('status'), 'in', ['scheduled', 'queued'])
    .execute();
  await db.schema
    .createIndex('emails_sending_lease')
    .on('scheduled_emails')
    .column('locked_until')
    .where(sql.ref('status'), '=', 'sending')
    .execute();
  await db.schema
    .createIndex('emails_project_order')
    .on('scheduled_emails')
    .columns(['project_id', 'order_id'])
    .execute();
  await db.schema.createIndex('emails_project_id').on('scheduled_emails').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('emails_event').on('scheduled_emails').column('event_id').execute();
  await db.schema.createIndex('emails_contact').on('scheduled_emails').column('contact_id').execute();
}
