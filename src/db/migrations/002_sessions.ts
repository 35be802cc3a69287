// Admin UI sessions (SPEC §6): server-side, so logging out or expiring really ends a session, and so
// every process of an installation (several behind a load balancer) sees the same ones.
import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema
    .createTable('sessions')
    // SHA-256 (hex) of the cookie's random token: a leaked database row cannot be replayed as a cookie.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();
}
