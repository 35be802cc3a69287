import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const ref = dialect === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('campaigns')
    .addColumn('id', idType as any, (c) => c.primaryKey().$call((b) => (dialect === 'sqlite' ? b.autoIncrement() : b)))
    .addColumn('project_id', ref as any, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('template_id', ref as any, (c) => c.notNull())
    .addColumn('list_id', ref as any, (c) => c.notNull())
    .addColumn('send_at', 'bigint', (c) => c.notNull())
    .addColumn('recipients', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('campaigns_project').on('campaigns').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('emails_campaign').on('scheduled_emails').column('campaign_id').execute();
}
