// A plan carried out on SQLite with the accept path's own statements (repos/acceptSqlite.ts): the
// contact upsert (which also gives the event's id), the order, the e-mails, then the event row with its
// effects and the idempotency record, in the request's unit of the group commit. Same rows and same
// answer as runPlan (test/accept-batch.test.ts compares them), in fewer and prebuilt statements.
import { inTransaction } from '../../db/groupCommit.js';
import type { Body } from '../../domain/validation.js';
import {
  insertEmailOnce,
  insertEventOnce,
  insertIdempotencyOnce,
  insertUnpaidOrderOnce,
  upsertContactOnce,
} from '../../repos/acceptSqlite.js';
import { normaliseEmail } from '../../repos/contacts.js';
import type { GatewayCall } from '../context.js';
import {
  acceptedEventRow,
  IdempotencyRace,
  idempotencyRow,
  incoming,
  withIdempotency,
  type Accepted,
} from './accept.js';
import { plannedEmailRow, type AcceptPlan, type OrderState } from './acceptPlan.js';

export function acceptOnSqlite<T extends object>(
  call: GatewayCall,
  body: Body,
  plan: AcceptPlan<T>,
  refresh?: (stored: T) => Promise<T>,
): Promise<Accepted<T>> {
  const r = incoming(call, body);
  const projectId = call.project.id;
  const write = () =>
    inTransaction(call.deps.db, async (trx): Promise<Accepted<T>> => {
      const { contact, nextEventId: eventId } = await upsertContactOnce(
        trx,
        projectId,
        normaliseEmail(plan.contact.email),
        plan.contact.name ?? null,
        r.now,
      );
      let order: OrderState = 'created';
      if (plan.order) {
        const o = { project_id: projectId, ...plan.order, contact_id: contact.id, event_id: eventId };
        const stored = await insertUnpaidOrderOnce(trx, o, r.now);
        order = stored === 'created' ? 'created' : stored === 'paid' ? 'paid' : 'duplicate';
      }
      const emailIds: number[] = [];
      if (order === 'created') {
        for (const e of plan.emails)
          emailIds.push(await insertEmailOnce(trx, plannedEmailRow(projectId, e, plan, contact, eventId, r.now)));
      }
      const { response, effects } = plan.result({ eventId, contact, emailIds, order, now: r.now });
      await insertEventOnce(trx, eventId, acceptedEventRow(r, JSON.stringify(effects)));
      const record = idempotencyRow(r, response, eventId);
      if (record && !(await insertIdempotencyOnce(trx, record))) throw new IdempotencyRace();
      return { status: 200, body: response, eventId, replayed: false };
    });
  return withIdempotency(r, write, refresh);
}
