// Issue 25 (SPEC §16): templates with a contract. The `templates` row keeps holding the PUBLISHED
// content (so every reader of templates stays correct) plus what the contract adds: the analysed
// variables (null = saved before this version: unchecked until the next save), the published version
// number, layout and format. Drafts and history live in template_versions, which nothing updates or
// deletes. Layouts are per project; e-mails record the version they were rendered with.
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const ref = dialect === 'postgres' ? 'bigint' : 'integer';
  const id = (c: any) => c.primaryKey().$call((b: any) => (dialect === 'sqlite' ? b.autoIncrement() : b));

  for (const [name, type] of [
    ['variables', 'text'],
    ['version', 'integer'],
    ['layout', 'text'],
    ['compiled_html', 'text'],
  ] as const)
    await db.schema.alterTable('templates').addColumn(name, type).execute();
  await db.schema
    .alterTable('templates')
    .addColumn('format', 'text', (c) => c.notNull().defaultTo('html'))
    .execute();

  await db.schema
    .createTable('template_versions')
    .addColumn('id', idType as any, id)
    .addColumn('template_id', ref as any, (c) => c.notNull().references('templates.id').onDelete('restrict'))
    .addColumn('project_id', ref as any, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('html', 'text', (c) => c.notNull())
    .addColumn('compiled_html', 'text')
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('layout', 'text')
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('topic', 'text')
    .addColumn('tracking', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('variables', 'text')
    .addColumn('actor', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('template_versions_number', ['template_id', 'version'])
    .execute();

  // The templates as they stand become version 1, unchecked (variables null), and published.
  await sql`insert into template_versions
      (template_id, project_id, version, subject, html, compiled_html, text, layout, format, topic, tracking,
       variables, actor, created_at)
    select id, project_id, 1, subject, html, null, text, null, 'html', topic, tracking, null, null, updated_at
    from templates`.execute(db);
  await sql`update templates set version = 1`.execute(db);

  await db.schema
    .createTable('template_layouts')
    .addColumn('id', idType as any, id)
    .addColumn('project_id', ref as any, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('html', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('template_layouts_name', ['project_id', 'name'])
    .execute();

  await db.schema.alterTable('projects').addColumn('fallback_name', 'text').execute();
  await db.schema.alterTable('projects').addColumn('default_layout', 'text').execute();
  await db.schema.alterTable('scheduled_emails').addColumn('template_version', 'integer').execute();

  // The impact check reads one event type's accepted requests of the last 7 days per query.
  await db.schema
    .createIndex('events_project_type_created')
    .on('events')
    .columns(['project_id', 'event_type', 'created_at'])
    .execute();
}
