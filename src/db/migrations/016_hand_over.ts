// Issue 30: a claimed e-mail is handed to the relay only after a check at hand-over time. The moment of
// hand-over is kept (send_started_at, null while merely claimed), so a purchase can tell an e-mail it may
// still stop (claimed, not handed over) from one already in flight, and name the purchase that found it
// in flight (in_flight_event_id) on the e-mail's record.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('scheduled_emails').addColumn('send_started_at', 'bigint').execute();
  await db.schema.alterTable('scheduled_emails').addColumn('in_flight_event_id', 'bigint').execute();
}
