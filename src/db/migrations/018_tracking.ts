// Opens, clicks and attribution (SPEC §17, issue 26).
// - projects.tracking: the project's settings as JSON ({opens, clicks, utm}); null = both on, no UTM.
// - tracking_hits: every hit as /c/ and /o/ recorded it, written in batches by the API processes and
//   drained under a lease by the workers (processed_at set when folded into the counters below). Holds a
//   truncated IP and a User-Agent category only; deleted with the e-mail's body (retention.ts).
// - email_engagement: per e-mail counters and first/last times, which outlive the hits (statistics stay).
// - email_link_clicks: human clicks per link position of an e-mail.
// - purchase_attributions: the cart e-mail a paid order is attributed to, decided in the purchase's
//   own transaction.
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const ref = dialect === 'postgres' ? 'bigint' : 'integer';

  await db.schema.alterTable('projects').addColumn('tracking', 'text').execute();

  await db.schema
    .createTable('tracking_hits')
    .addColumn('id', idType as any, (c) => c.primaryKey().$call((b) => (dialect === 'sqlite' ? b.autoIncrement() : b)))
    // No foreign keys: an INSERT of a whole batch must not fail because one e-mail was removed since it
    // was sent; the worker skips hits of e-mails that are gone.
    .addColumn('project_id', ref as any, (c) => c.notNull())
    .addColumn('email_id', ref as any, (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('position', 'integer')
    .addColumn('url', 'text')
    .addColumn('machine', 'integer', (c) => c.notNull())
    .addColumn('machine_reason', 'text')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('ip_prefix', 'text')
    .addColumn('ua_category', 'text', (c) => c.notNull())
    .addColumn('processed_at', 'bigint')
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .execute();
  await db.schema
    .createIndex('tracking_hits_pending')
    .on('tracking_hits')
    .column('id')
    .where(sql.ref('processed_at'), 'is', null)
    .execute();
  await db.schema.createIndex('tracking_hits_email').on('tracking_hits').columns(['email_id', 'at']).execute();
  await db.schema.createIndex('tracking_hits_at').on('tracking_hits').column('at').execute();

  // E-mails are referred to by id without a foreign key, as email_attempts and email_reports do: e-mail
  // rows are never deleted (retention blanks their bodies, erasure their contents), and the outbox
  // table stays free of dependants.
  await db.schema
    .createTable('email_engagement')
    .addColumn('email_id', ref as any, (c) => c.primaryKey())
    .addColumn('project_id', ref as any, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('opens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('machine_opens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('machine_clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('first_open_at', 'bigint')
    .addColumn('first_click_at', 'bigint')
    .addColumn('last_click_at', 'bigint')
    .addColumn('open_notified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('click_notified', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('email_engagement_project').on('email_engagement').column('project_id').execute();

  await db.schema
    .createTable('email_link_clicks')
    .addColumn('email_id', ref as any, (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('clicks', 'integer', (c) => c.notNull())
    .addColumn('last_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('email_link_clicks_pk', ['email_id', 'position'])
    .execute();

  await db.schema
    .createTable('purchase_attributions')
    .addColumn('project_id', ref as any, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('email_id', ref as any, (c) => c.notNull())
    .addColumn('event_id', ref as any, (c) => c.notNull())
    .addColumn('clicked_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('purchase_attributions_pk', ['project_id', 'order_id'])
    .execute();
  await db.schema.createIndex('purchase_attributions_email').on('purchase_attributions').column('email_id').execute();
}
