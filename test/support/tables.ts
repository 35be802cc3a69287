// The test database's own tables, on either engine. Kysely's PostgreSQL introspection reads every schema
// of the shared database and fails with 3F000 when another test file drops its schema meanwhile, so the
// tests that compare whole databases list only their own schema's tables.
import { sql } from 'kysely';
import type { Db } from '../../src/db/index.js';

export async function ownTableNames(db: Db): Promise<string[]> {
  const rows =
    db.dialect === 'postgres'
      ? (
          await sql<{ name: string }>`select table_name as name from information_schema.tables
            where table_schema = ${db.schema!} and table_type = 'BASE TABLE'`.execute(db.db)
        ).rows
      : (
          await sql<{ name: string }>`select name from sqlite_master
            where type = 'table' and name not like 'sqlite_%'`.execute(db.db)
        ).rows;
  return rows.map((r) => r.name).sort();
}
