// Administrators (SPEC §14): accounts with a role and the projects they may see, personal API tokens,
// sessions bound to an account, and the audit log of every change.
import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const ref = (dialect === 'postgres' ? 'bigint' : 'integer') as any;
  const withId = (name: string) =>
    db.schema
      .createTable(name)
      .addColumn('id', idType as any, (c) =>
        c.primaryKey().$call((b) => (dialect === 'sqlite' ? b.autoIncrement() : b)),
      );

  await withId('admin_users')
    // Lower-cased; unique so a login names one account.
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    // scrypt$N$r$p$salt$hash (docs/decisions.md): parameters travel with the hash so they can grow.
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('admin_user_projects')
    .addColumn('user_id', ref, (c) => c.notNull().references('admin_users.id').onDelete('cascade'))
    .addColumn('project_id', ref, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('admin_user_projects_pk', ['user_id', 'project_id'])
    .execute();

  await withId('admin_tokens')
    .addColumn('user_id', ref, (c) => c.notNull().references('admin_users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // SHA-256 (hex) of the token: looked up by hash, never stored in clear.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('last4', 'text', (c) => c.notNull())
    .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('admin_tokens_user').on('admin_tokens').column('user_id').execute();

  // Null: a session opened with the root ADMIN_TOKEN.
  await db.schema.alterTable('sessions').addColumn('user_id', ref).execute();

  await withId('audit_log')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('site_key', 'text')
    .addColumn('target', 'text')
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .execute();
  await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
  await db.schema.createIndex('audit_log_site').on('audit_log').columns(['site_key', 'id']).execute();
}
