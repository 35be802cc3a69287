// What a gateway request writes, described once as data (an AcceptPlan) and carried out by the one
// executor (execute.ts): the contact, the body's consent items, an unpaid order, the e-mails to
// schedule, the request's own work when it has some (a purchase's payment, a consent change, an
// erasure), the chronology row and the idempotency record. Every service of services/gateway.ts,
// purchase.ts, consent.ts and erasure.ts builds one; none writes by itself.
import type { Transaction } from 'kysely';
import type { Database, EmailKind, NewEmail, TemplateRow } from '../../db/schema.js';
import { topicStopSentence, type ConsentItem, type TopicStop } from '../../domain/consent.js';
import type { ContactRef } from '../../repos/contacts.js';
import type { Answer } from './accept.js';

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

export interface PlannedContact {
  /** As the request gave it: trimmed and lower-cased by the executor (normaliseEmail). */
  email: string;
  /** By NAME_RULE (repos/contacts.ts): a non-empty name replaces the stored one. */
  name?: string | null;
  /** Merged into the stored fields (repos/contacts.ts mergeContactFields). */
  fields?: Record<string, unknown>;
  /** The contact must exist already (404 otherwise) and is not written: an erasure. */
  existing?: boolean;
}

interface PlanSteps {
  contact: PlannedContact;
  /** Consent items of the body, recorded before the e-mails (whose `stop` already counts them). */
  consent?: ConsentItem[];
  /** An unpaid order to record; when it already exists the e-mails are not scheduled. */
  order?: { order_id: string; cart_type: string; course_name: string | null };
  emails: PlannedEmail[];
  /** The chronology row keeps neither the address nor the body (an erasure erases them with the rest). */
  forget?: boolean;
}

/**
 * The plan and how its answer is made: from what the steps wrote (`result`), or by the request's own
 * work in the same transaction, after the steps (`work`: a purchase, a consent change, an erasure). A
 * plan with work of its own is written in a batch of its own (the work may touch any row).
 */
export type AcceptPlan<T> = PlanSteps &
  ({ result(o: PlanOutcome): Answer<T> } | { work(trx: Transaction<Database>, o: PlanOutcome): Promise<Answer<T>> });

/** The outbox row of one planned e-mail. */
export function plannedEmailRow(
  projectId: number,
  e: PlannedEmail,
  plan: { contact: PlannedContact },
  contact: ContactRef,
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
