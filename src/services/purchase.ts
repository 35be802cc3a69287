// The purchase (SPEC §10): the first payment of an order wins, its cart e-mails stop, the contact joins
// the address books of paid orders, and the purchase is attributed to the e-mail that led to it (SPEC
// §17). Its plan writes the contact and consent items; the rest is the plan's own work, in the same
// transaction (services/accept/execute.ts).
import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { CART_REQUIRED } from '../domain/catalog.js';
import { PURCHASE_FATAL, readPurchase, warningSentences, type MemberWarning } from '../domain/purchase.js';
import type { PlanEntry } from '../domain/plan.js';
import { applyPhpTolerances } from '../domain/tolerances.js';
import { assertNoProblems, bodyProblems, requireObject } from '../domain/validation.js';
import { addToList } from '../repos/contacts.js';
import { stopCartEmails } from '../repos/emails.js';
import { markOrderPaid } from '../repos/orders.js';
import { findCourseCategory, getPaidLists } from '../repos/projectConfig.js';
import { PurchaseBody, type PurchaseResponse } from '../schemas/gateway.js';
import type { Accepted, Answer } from './accept/accept.js';
import type { PlanOutcome } from './accept/acceptPlan.js';
import { executePlan } from './accept/execute.js';
import type { GatewayCall } from './context.js';
import { attributePurchase } from './engagement.js';
import { checkCart, configOf, consentOf, dropConsentProblems, limitsOf } from './gatewayChecks.js';
import { enqueueEmailWebhooks } from './siteWebhooks/enqueue.js';

type PurchaseInput = ReturnType<typeof readPurchase>['input'];

export async function purchase(call: GatewayCall, raw: unknown): Promise<Accepted<PurchaseResponse>> {
  const body = requireObject(raw);
  applyPhpTolerances(body);
  checkCart(call, body);
  const et = typeof body.cart_type === 'string' ? `${body.cart_type}_paid` : 'purchase';
  const problems = bodyProblems(PurchaseBody, body, { required: CART_REQUIRED, limits: limitsOf(call) });
  if ('list_id' in body)
    problems.invalid.list_id = 'must not be passed: the address book comes from fields.course_category_id';
  // Only the members that identify the order refuse a purchase (SPEC §10); the rest become warnings.
  const fatal = Object.fromEntries(Object.entries(problems.invalid).filter(([k]) => PURCHASE_FATAL.has(k)));
  assertNoProblems<Pick<PurchaseBody, 'email' | 'order_id' | 'cart_type'>>(
    body,
    { missing: problems.missing, invalid: fatal },
    { required: CART_REQUIRED, eventType: et, what: 'purchase' },
  );
  // Bad consent items do not refuse a purchase (stopping the cart e-mails matters most): none of them is
  // recorded, and the answer warns.
  const consentProblems: Record<string, string> = {};
  const consent = consentOf(call, body, await (await configOf(call)).topics(call.project.id), consentProblems);
  dropConsentProblems(problems.invalid);
  const { input, warnings: memberWarnings } = readPurchase(body, problems.invalid);
  for (const [member, problem] of Object.entries(consentProblems))
    memberWarnings.push({ member, problem: `${problem}; no consent item of the request was recorded` });
  // A malformed key cannot be honoured; the purchase goes ahead without one (repeats change nothing).
  if (memberWarnings.some((w) => w.member === 'idempotency_key')) delete body.idempotency_key;
  return executePlan<PurchaseResponse>(call, body, {
    contact: { email: body.email, name: input.name },
    consent,
    emails: [],
    work: (trx, o) => pay(trx, call, o, body, input, memberWarnings),
  });
}

/** What a purchase does after its contact and consent items are written, in the same transaction. */
async function pay(
  trx: Transaction<Database>,
  call: GatewayCall,
  { eventId, contact, now }: PlanOutcome,
  body: Pick<PurchaseBody, 'order_id' | 'cart_type'>,
  input: PurchaseInput,
  memberWarnings: MemberWarning[],
): Promise<Answer<PurchaseResponse>> {
  const { project } = call;
  const cartType = body.cart_type;
  const orderId = body.order_id;
  const category = input.category;
  const { alreadyPaid } = await markOrderPaid(
    trx,
    {
      project_id: project.id,
      order_id: orderId,
      cart_type: cartType,
      contact_id: contact.id,
      amount_minor: input.amountMinor,
      currency: input.currency,
      paid_at: input.paidAt ?? new Date(now).toISOString(),
      event_id: eventId,
    },
    now,
  );
  // Stopping the cart chain comes first and never depends on address-book configuration. What a worker
  // had already handed to the relay cannot be stopped: the plan says so (in_flight, issue 30).
  const { stopped, inFlight } = await stopCartEmails(trx, project.id, orderId, now, eventId);
  await enqueueEmailWebhooks(
    trx,
    stopped.map((email) => ({ email, kind: 'email.cancelled' as const, reason: 'cancelled_by_purchase' })),
    now,
  );
  const plan: PlanEntry[] = stopped.map((e) => ({
    scheduled_email_id: e.id,
    template_key: e.template_key,
    step: e.chain_step,
    due_at: new Date(Number(e.due_at)).toISOString(),
    status: 'cancelled',
    reason: 'cancelled_by_purchase',
  }));
  for (const e of inFlight)
    plan.push({
      scheduled_email_id: e.id,
      template_key: e.template_key,
      step: e.chain_step,
      due_at: new Date(Number(e.due_at)).toISOString(),
      status: 'sending',
      reason: 'in_flight',
      send_started_at: new Date(Number(e.send_started_at)).toISOString(),
    });
  const books: number[] = [];
  const details: MemberWarning[] = [...memberWarnings];
  const paidList = (await getPaidLists(trx, project.id))[cartType];
  if (paidList !== undefined) {
    await addToList(trx, paidList, contact.id, now);
    books.push(paidList);
  } else {
    details.push({
      member: 'cart_type',
      problem: `no address book of paid orders is configured for cart type ${cartType}`,
    });
  }
  if (category !== null) {
    if (cartType !== 'course') {
      details.push({
        member: 'fields.course_category_id',
        problem: 'is used only for course purchases and was ignored',
      });
    } else {
      const cat = await findCourseCategory(trx, project.id, category);
      if (cat) {
        await addToList(trx, cat.list_id, contact.id, now);
        if (!books.includes(cat.list_id)) books.push(cat.list_id);
      } else {
        details.push({
          member: 'fields.course_category_id',
          problem: `unknown course category ${category}: the contact was not added to a category address book`,
        });
      }
    }
  }
  const warnings = warningSentences(details);
  // SPEC §17: decided here, in the purchase's own transaction.
  const attributed_to = await attributePurchase(trx, call.deps, {
    projectId: project.id,
    orderId,
    eventId,
    now,
    alreadyPaid,
  });
  const response = {
    ok: true as const,
    site_key: project.site_key,
    event_id: eventId,
    order_id: orderId,
    stopped: stopped.length,
    address_books: books,
    warnings,
    warning_details: details,
    duplicate: alreadyPaid,
    plan,
    attributed_to,
  };
  return {
    response,
    effects: {
      contact_id: contact.id,
      stopped_email_ids: stopped.map((e) => e.id),
      in_flight_email_ids: inFlight.map((e) => e.id),
      address_books: books,
      warnings,
      warning_details: details,
      already_paid: alreadyPaid,
      attributed_to,
    },
  };
}
