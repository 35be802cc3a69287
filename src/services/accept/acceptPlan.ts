// What accepting a transactional send or an order writes, described once as data (an AcceptPlan) and
// carried out by one of two executors with the same result:
//   - runPlan: statement by statement inside the request's own transaction (acceptAlone: SQLite, where
//     statements are cheap and commits are grouped; and PostgreSQL's fallback);
//   - acceptBatch.ts: many requests' plans in a handful of set-based statements (PostgreSQL, where each
//     round trip costs more than the work it carries).
// test/accept-batch.test.ts checks that both write the same rows.
import type { Transaction } from 'kysely';
import type { Database, EmailKind, NewEmail, TemplateRow } from '../../db/schema.js';
import type { Body } from '../../domain/validation.js';
import { upsertContact, type ContactRef } from '../../repos/contacts.js';
import { insertEmail } from '../../repos/emails.js';
import { findOrder, insertUnpaidOrder } from '../../repos/orders.js';
import type { GatewayCall } from '../context.js';
import { topicStopSentence, type ConsentItem, type TopicStop } from '../../domain/consent.js';
import { recordChoices } from '../consent.js';
import { acceptEvent, type Accepted, type Answer } from './accept.js';

export interface PlannedEmail {
  template: Pick<TemplateRow, 'id' | 'name'>;
  kind: EmailKind;
  chainStep: string | null;
  /** `suppressed` when `stop` says the contact's topics or consent forbid it (recorded, never sent). */
  status: 'queued' | 'scheduled' | 'suppressed';
  /** The consent topic it goes under (SPEC §18). */
  topic: string;
  stop: TopicStop | null;
  /** Milliseconds after the request's time. */
  delayMs: number;
  orderId: string | null;
  /** The template context, as JSON text. */
  context: string;
}

/** How the order of an order-created request turned out. */
export type OrderState = 'created' | 'duplicate' | 'paid';

export interface PlanOutcome {
  eventId: number;
  contact: ContactRef;
  emailIds: number[];
  /** 'created' when the plan has no order. */
  order: OrderState;
  /** The request's time: due times in the answer's plan are counted from it. */
  now: number;
}

export interface AcceptPlan<T> {
  /** As the request gave them; upsertContact's rules apply (trimmed, lower-cased e-mail; a name overwrites). */
  contact: { email: string; name?: string | null };
  /** An unpaid order to record; when it already exists the e-mails are not scheduled. */
  order?: { order_id: string; cart_type: string; course_name: string | null };
  emails: PlannedEmail[];
  /**
   * Consent items of the body, recorded before the e-mails (whose `stop` already counts them). A plan
   * with some is carried out by runPlan alone: they are rare, and one executor writes them.
   */
  consent?: ConsentItem[];
  result(o: PlanOutcome): Answer<T>;
}

/** The outbox row of one planned e-mail. */
export function plannedEmailRow(
  projectId: number,
  e: PlannedEmail,
  plan: AcceptPlan<unknown>,
  contact: PlanOutcome['contact'],
  eventId: number,
  now: number,
): NewEmail {
  return {
    project_id: projectId,
    kind: e.kind,
    template_id: e.template.id,
    template_key: e.template.name,
    contact_id: contact.id,
    to_email: contact.email,
    to_name: plan.contact.name ?? contact.name,
    order_id: e.orderId,
    event_id: eventId,
    campaign_id: null,
    chain_step: e.chainStep,
    context: e.context,
    status: e.status,
    topic: e.topic,
    last_error: e.stop ? topicStopSentence[e.stop] : null,
    due_at: now + e.delayMs,
    attempts: 0,
    created_at: now,
    updated_at: now,
  };
}

/** The plan, one statement at a time, inside the caller's transaction. */
async function runPlan<T>(
  trx: Transaction<Database>,
  projectId: number,
  plan: AcceptPlan<T>,
  eventId: number,
  now: number,
): Promise<Answer<T>> {
  const contact = await upsertContact(
    trx,
    projectId,
    { email: plan.contact.email, name: plan.contact.name ?? undefined },
    now,
  );
  if (plan.consent?.length) await recordChoices(trx, contact, plan.consent, 'api', now);
  let order: OrderState = 'created';
  if (plan.order) {
    const created = await insertUnpaidOrder(
      trx,
      { project_id: projectId, ...plan.order, contact_id: contact.id, event_id: eventId },
      now,
    );
    if (!created)
      order = (await findOrder(trx, projectId, plan.order.order_id))?.status === 'paid' ? 'paid' : 'duplicate';
  }
  const emailIds: number[] = [];
  if (order === 'created') {
    for (const e of plan.emails)
      emailIds.push(await insertEmail(trx, plannedEmailRow(projectId, e, plan, contact, eventId, now)));
  }
  return plan.result({ eventId, contact, emailIds, order, now });
}

/** Accepts one request by its plan in a transaction of its own (replaying a repeated idempotency key). */
export function acceptAlone<T extends object>(
  call: GatewayCall,
  body: Body,
  plan: AcceptPlan<T>,
  refresh?: (stored: T) => Promise<T>,
): Promise<Accepted<T>> {
  return acceptEvent<T>(call, body, (trx, eventId, now) => runPlan(trx, call.project.id, plan, eventId, now), refresh);
}
