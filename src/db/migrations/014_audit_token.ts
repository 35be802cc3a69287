// Issue 16: an audit row says which personal token made a change, not only whose account it belongs to
// (a leaked token's doings can then be listed).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('audit_log').addColumn('token_id', 'bigint').execute();
  await db.schema.alterTable('audit_log').addColumn('token_name', 'text').execute();
}
