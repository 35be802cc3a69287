// Amounts become exact (SPEC §10, issue 11): integer hundredths of the currency unit instead of a double,
// which took 1e308 and Infinity and made the sums overflow (PostgreSQL) or turn null (SQLite).
// Amounts already stored are kept when they are within the bounds (rounded to hundredths); anything
// else (negative, non-finite, over 1,000,000,000) is dropped to null, since it cannot be a real payment.
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('orders').addColumn('amount_minor', 'bigint').execute();
  await sql`update orders set amount_minor = cast(round(amount * 100) as bigint)
    where amount is not null and amount >= 0 and amount <= 1000000000`.execute(db);
  await db.schema.alterTable('orders').dropColumn('amount').execute();
}
