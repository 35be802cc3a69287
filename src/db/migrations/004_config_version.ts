// A counter that every change to the configuration the request path reads (projects, API keys,
// templates, routing, cart chains, paid-order and category books) moves forward, in the same transaction
// as the change. Processes cache that configuration and read only this one row per request: a disabled
// key is refused on the next request in every process, whoever changed it (admin API, CLI, plain SQL).
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

export const CONFIG_TABLES = [
  'projects',
  'api_keys',
  'templates',
  'routes',
  'sequences',
  'cart_chains',
  'paid_lists',
  'course_categories',
];

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('config_version')
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into config_version (version) values (1)`.execute(db);

  if (dialect === 'postgres') {
    await sql`create function egw_bump_config_version() returns trigger language plpgsql as $$
      begin update config_version set version = version + 1; return null; end $$`.execute(db);
    for (const t of CONFIG_TABLES) {
      await sql`create trigger ${sql.id(`${t}_config_version`)} after insert or update or delete or truncate on ${sql.id(t)}
        for each statement execute function egw_bump_config_version()`.execute(db);
    }
    return;
  }
  for (const t of CONFIG_TABLES) {
    for (const op of ['insert', 'update', 'delete']) {
      await sql`create trigger ${sql.id(`${t}_config_version_${op}`)} after ${sql.raw(op)} on ${sql.id(t)}
        begin update config_version set version = version + 1; end`.execute(db);
    }
  }
}
