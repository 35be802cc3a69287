// Retention (issue 4): event payloads and the bodies of finished e-mails are personal data kept only as
// long as configured; the rows themselves stay, so the chronology and statistics keep their counts.
// Work is done in bounded chunks so a large backlog never holds a long lock.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { SENT_STATUSES } from '../domain/statuses.js';

export interface RetentionPolicy {
  eventPayloadDays: number;
  messageBodyDays: number;
  idempotencyDays: number;
  /** The audit log (SPEC §14), AUDIT_RETENTION_DAYS; not purged when absent. */
  auditDays?: number;
}

export interface Purged {
  eventPayloads: number;
  messageBodies: number;
  idempotencyKeys: number;
  auditRows?: number;
}

const DAY = 86_400_000;
const CHUNK = 5_000;

async function chunked(run: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await run();
    total += n;
    if (n < CHUNK) return total;
  }
}

export async function purgeExpired(db: Kysely<Database>, policy: RetentionPolicy, now: number): Promise<Purged> {
  const eventCutoff = now - policy.eventPayloadDays * DAY;
  const eventPayloads = await chunked(async () => {
    const r = await db
      .updateTable('events')
      .set({ payload: null })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('events')
          .select('id')
          .where('created_at', '<', eventCutoff)
          .where('payload', 'is not', null)
          .limit(CHUNK),
      )
      .executeTakeFirst();
    return Number(r.numUpdatedRows ?? 0);
  });
  const bodyCutoff = now - policy.messageBodyDays * DAY;
  const messageBodies = await chunked(async () => {
    const r = await db
      .updateTable('scheduled_emails')
      .set({ rendered: null, context: '{}' })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('scheduled_emails')
          .select('id')
          .where('status', 'in', [...SENT_STATUSES, 'failed', 'suppressed', 'cancelled'])
          .where('updated_at', '<', bodyCutoff)
          .where((w) => w.or([w('rendered', 'is not', null), w('context', '!=', '{}')]))
          .limit(CHUNK),
      )
      .executeTakeFirst();
    return Number(r.numUpdatedRows ?? 0);
  });
  const idemCutoff = now - policy.idempotencyDays * DAY;
  const idempotencyKeys = await chunked(async () => {
    const r = await db
      .deleteFrom('idempotency')
      .where(({ eb, refTuple, selectFrom }) =>
        eb(
          refTuple('project_id', 'idempotency_key'),
          'in',
          selectFrom('idempotency')
            .select(['project_id', 'idempotency_key'])
            .where('created_at', '<', idemCutoff)
            .limit(CHUNK) as never,
        ),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows ?? 0);
  });
  if (policy.auditDays === undefined) return { eventPayloads, messageBodies, idempotencyKeys };
  const auditCutoff = now - policy.auditDays * DAY;
  const auditRows = await chunked(async () => {
    const r = await db
      .deleteFrom('audit_log')
      .where('id', 'in', (eb) => eb.selectFrom('audit_log').select('id').where('at', '<', auditCutoff).limit(CHUNK))
      .executeTakeFirst();
    return Number(r.numDeletedRows ?? 0);
  });
  return { eventPayloads, messageBodies, idempotencyKeys, auditRows };
}
