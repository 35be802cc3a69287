// Issue 34 (relay outages, fair delivery). `waiting_since`: when an e-mail first could not go for a
// temporary reason (a relay failure, an open breaker, a full rate cap); it is given up (`expired`)
// SEND_GIVE_UP_AFTER after that, whatever the number of attempts, and the admin sees "waiting for the
// relay since …". Null while nothing has held it up, and again once sent or retried by an administrator.
// The index lets the claim take the oldest due e-mails of each project in turn (fair across projects)
// with one short index probe per project instead of reading every due row.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('scheduled_emails').addColumn('waiting_since', 'bigint').execute();
  await db.schema
    .createIndex('emails_pending_project_due')
    .on('scheduled_emails')
    .columns(['project_id', 'due_at'])
    .where(sql.ref('status'), 'in', ['scheduled', 'queued'])
    .execute();
}
