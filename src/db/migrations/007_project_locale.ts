// Each project's time zone and language for templates (SPEC §15): the `date` and `money` filters format
// in them. Existing projects take the defaults the contract names (Europe/Moscow, ru).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('projects')
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo(sql`'Europe/Moscow'`))
    .execute();
  await db.schema
    .alterTable('projects')
    .addColumn('locale', 'text', (c) => c.notNull().defaultTo(sql`'ru'`))
    .execute();
}
