// The gateway operations and the scoped address-book write, as plain functions over a checked key.
// Checks run in the order of SPEC §1; then each builds its request's plan (accept/acceptPlan.ts), which
// the one executor writes (accept/execute.ts). The purchase is in purchase.ts.
import {
  CART_REQUIRED,
  CART_STEPS,
  CART_TYPES,
  CATALOG,
  EXTRA_EVENT_TYPES,
  isCartType,
  isKnownEventType,
  requiredFieldsFor,
} from '../domain/catalog.js';
import { topicOf, type ConsentItem } from '../domain/consent.js';
import { mergeRequired, templateShortfall } from '../domain/templateContract.js';
import { needsOf, requiredOfNeed } from '../domain/templateNeeds.js';
import { loadNeedsConfig } from './impact.js';
import { contactReason, skipped, type PlanEntry } from '../domain/plan.js';
import {
  requireEventAllowed,
  requireListAllowed,
  requirePermission,
  requireTemplateAllowed,
} from '../domain/rights.js';
import { parseAmount } from '../domain/money.js';
import { SENT_STATUSES } from '../domain/statuses.js';
import { applyPhpTolerances } from '../domain/tolerances.js';
import {
  assertBody,
  assertNoProblems,
  bodyProblems,
  isAbsent,
  requireObject,
  type Body,
} from '../domain/validation.js';
import { AppError, notFound, validationError } from '../errors.js';
import { addToList, findList } from '../repos/contacts.js';
import { findEmail, visibleStatus } from '../repos/emails.js';
import {
  OrderCreatedBody,
  ScopedListContactBody,
  TransactionalBody,
  type CatalogResponse,
  type OrderCreatedResponse,
  type TransactionalResponse,
} from '../schemas/gateway.js';
import type { Accepted } from './accept/accept.js';
import { executePlan } from './accept/execute.js';
import type { AcceptPlan } from './accept/acceptPlan.js';
import { topicStops } from './consent.js';
import type { GatewayCall } from './context.js';
import {
  checkCart,
  configOf,
  consentOf,
  limitsOf,
  rightsOf,
  templateContext,
  withTemplateNeeds,
} from './gatewayChecks.js';

const DEFAULT_STEPS = new Set<string>(CART_STEPS.map((s) => s.step));

export async function catalog(call: GatewayCall): Promise<CatalogResponse> {
  const config = await loadNeedsConfig(call.deps.db.db, call.project.id);
  const { routes } = config;
  const needs = needsOf(config);
  const need = (eventType: string) => requiredOfNeed(needs.get(`transactional ${eventType}`));
  return {
    ok: true,
    site_key: call.project.site_key,
    events: CATALOG.map((e) => ({
      event_type: e.event_type,
      description: e.description,
      required_fields: mergeRequired(requiredFieldsFor(e.event_type), need(e.event_type)),
      template_required_fields: need(e.event_type),
      has_api: true,
      has_template: e.event_type in routes,
      template_key: routes[e.event_type] ?? null,
    })),
    supported_events: (rightsOf(call).allowed_api_events ?? []).filter(isKnownEventType),
    extra_events: EXTRA_EVENT_TYPES.filter((t) => t in routes).map((t) => ({
      event_type: t,
      required_fields: mergeRequired(requiredFieldsFor(t), need(t)),
      template_required_fields: need(t),
      template_key: routes[t],
    })),
    cart_orders: CART_TYPES.flatMap((cart) => {
      const n = needs.get(`order-created ${cart}_order_created`);
      if (!n) return [];
      const req = requiredOfNeed(n);
      return [
        {
          cart_type: cart,
          required_fields: mergeRequired(CART_REQUIRED, req),
          template_required_fields: req,
          template_keys: Object.keys(n.templates),
        },
      ];
    }),
  };
}

export async function transactional(
  call: GatewayCall,
  raw: unknown,
  opts: { respondAsync: boolean },
): Promise<Accepted<TransactionalResponse>> {
  const { deps, project } = call;
  const rights = rightsOf(call);
  const body = requireObject(raw);
  applyPhpTolerances(body);
  requirePermission(rights, 'transactional_send');

  const et = body.event_type;
  if (isAbsent(et)) {
    const missing = ['event_type', ...(isAbsent(body.email) ? ['email'] : [])];
    throw validationError(
      { reason: 'missing_fields', params: { fields: missing.join(', ') } },
      {
        event_type: null,
        missing_fields: missing,
        required_fields: ['event_type', 'email'],
      },
    );
  }
  if (typeof et !== 'string') {
    throw validationError(
      { reason: 'event_type_not_string', params: { field: 'event_type' } },
      {
        event_type: null,
        required_fields: ['event_type', 'email'],
        invalid_fields: { event_type: 'must be a string' },
      },
    );
  }
  if (!isKnownEventType(et)) {
    throw new AppError(
      422,
      'unknown_event_type',
      { reason: 'event_type_unknown', params: { event_type: et } },
      { event_type: et },
    );
  }
  requireEventAllowed(rights, et);
  const required = requiredFieldsFor(et);
  const check = { required, eventType: et, what: `event type ${et}`, limits: limitsOf(call) };
  const problems = bodyProblems(TransactionalBody, body, check);
  // The amount a template prints follows the same bounds as a purchase's.
  if (body.amount !== undefined) {
    const a = parseAmount(body.amount);
    if (!a.ok) problems.invalid.amount = a.problem;
  }
  const config = await configOf(call);
  const projectTopics = await config.topics(project.id);
  const consent = consentOf(call, body, projectTopics, problems.invalid);
  // SPEC §16: what the routed template requires joins the catalog's needs in the same 422.
  const template = await config.routedTemplate(project.id, et);
  const needs = templateShortfall(template ? [template] : [], body);
  assertNoProblems<TransactionalBody>(body, withTemplateNeeds(problems, needs), {
    ...check,
    required: mergeRequired(required, needs.required),
  });
  if (template) requireTemplateAllowed(rights, template.name);
  const topic = topicOf(template?.topic, 'transactional');
  const [stop] = await topicStops(deps, projectTopics, project.id, body.email, [topic], consent);

  const plan: AcceptPlan<TransactionalResponse> = {
    contact: { email: body.email, name: body.name },
    emails: template
      ? [
          {
            template,
            kind: 'transactional',
            chainStep: null,
            status: stop ? 'suppressed' : 'queued',
            topic,
            stop,
            delayMs: 0,
            orderId: body.order_id ?? null,
            context: JSON.stringify(templateContext(body)),
          },
        ]
      : [],
    consent,
    result: ({ eventId, contact, emailIds, now }) => {
      const emailId = emailIds[0] ?? null;
      const plan: PlanEntry[] = template
        ? [
            {
              scheduled_email_id: emailId,
              template_key: template.name,
              step: null,
              due_at: new Date(now).toISOString(),
              status: stop ? 'suppressed' : 'queued',
              reason: stop ?? contactReason('transactional', contact.status),
            },
          ]
        : [skipped(null, null, 'no_template')];
      return {
        response: {
          ok: true,
          site_key: project.site_key,
          event_type: et,
          email: contact.email,
          event_id: eventId,
          scheduled_email_id: emailId,
          sent: 0,
          failed: 0,
          status: !template ? 'no_template' : stop ? 'suppressed' : 'queued',
          plan,
        },
        effects: {
          contact_id: contact.id,
          scheduled_email_ids: emailId ? [emailId] : [],
          template_key: template?.name ?? null,
        },
      };
    },
  };
  const result = await executePlan(call, body, plan, (stored) => currentStatus(call, stored));
  if (result.replayed || result.body.scheduled_email_id === null || stop) return result;

  deps.delivery?.wake();
  if (opts.respondAsync || !deps.delivery || deps.config.sendWaitMs === 0) return result;
  await deps.delivery.waitForOutcome(result.body.scheduled_email_id, deps.config.sendWaitMs);
  return { ...result, body: await currentStatus(call, result.body) };
}

/** Reports the e-mail as it stands now, so waits and replays tell the truth about delivery. */
async function currentStatus(call: GatewayCall, r: TransactionalResponse): Promise<TransactionalResponse> {
  if (r.scheduled_email_id === null) return r;
  const row = await findEmail(call.deps.db.db, r.scheduled_email_id);
  if (!row) return r;
  // A report may already have followed the send (delivered, bounced…): for this answer it was sent.
  const shown = visibleStatus(row.status, Number(row.due_at), call.deps.clock.now());
  const s = (SENT_STATUSES as readonly string[]).includes(shown) ? 'sent' : shown;
  const status = s === 'sent' || s === 'failed' || s === 'suppressed' || s === 'scheduled' ? s : 'queued';
  const plan = r.plan?.map((p): PlanEntry => (p.scheduled_email_id === row.id ? { ...p, status } : p));
  return { ...r, status, sent: s === 'sent' ? 1 : 0, failed: s === 'failed' ? 1 : 0, ...(plan ? { plan } : {}) };
}

export async function orderCreated(call: GatewayCall, raw: unknown): Promise<Accepted<OrderCreatedResponse>> {
  const body = requireObject(raw);
  applyPhpTolerances(body);
  checkCart(call, body);
  const et = typeof body.cart_type === 'string' ? `${body.cart_type}_order_created` : 'order_created';
  const check = { required: [...CART_REQUIRED], eventType: et, what: 'order-created', limits: limitsOf(call) };
  const problems = bodyProblems(OrderCreatedBody, body, check);
  const config = await configOf(call);
  const consent = consentOf(call, body, await config.topics(call.project.id), problems.invalid);
  // SPEC §16: every template of the cart chain this order would start must find its data.
  const cart = body.cart_type;
  const chain = typeof cart === 'string' && isCartType(cart) ? await config.cartChain(call.project.id, cart) : [];
  const needs = templateShortfall(
    chain.map((s) => s.template),
    body,
  );
  assertNoProblems<OrderCreatedBody>(body, withTemplateNeeds(problems, needs), {
    ...check,
    required: mergeRequired(check.required, needs.required),
  });
  return createOrder(call, body, consent);
}

/** The effects of order-created on a validated body (also the legacy unpaid-order intake). */
export async function createOrder(
  call: GatewayCall,
  body: Body & OrderCreatedBody,
  consent: ConsentItem[] = [],
): Promise<Accepted<OrderCreatedResponse>> {
  const { project } = call;
  const cartType = body.cart_type;
  const orderId = body.order_id;
  const fields = body.fields ?? {};
  const courseName = body.course_name ?? (typeof fields.course_name === 'string' ? fields.course_name : null);
  // Read before the transaction (cached): the project's configured sequence, else the routed 1h/1d/3d.
  const config = await configOf(call);
  const chain = await config.cartChain(project.id, cartType);
  const topics = chain.map((s) => topicOf(s.template.topic, 'cart'));
  const stops = await topicStops(call.deps, await config.topics(project.id), project.id, body.email, topics, consent);

  const context = JSON.stringify({ ...templateContext(body), course_name: courseName });
  const plan: AcceptPlan<OrderCreatedResponse> = {
    contact: { email: body.email, name: body.name },
    order: { order_id: orderId, cart_type: cartType, course_name: courseName },
    consent,
    emails: chain.map((s, i) => ({
      template: s.template,
      kind: 'cart' as const,
      chainStep: s.step,
      status: stops[i] ? ('suppressed' as const) : ('scheduled' as const),
      topic: topics[i],
      stop: stops[i],
      delayMs: s.delayMinutes * 60_000,
      orderId,
      context,
    })),
    result: ({ eventId, contact, emailIds, order, now }) => {
      const plan: PlanEntry[] =
        order === 'created'
          ? chain.map((s, i) => ({
              scheduled_email_id: emailIds[i],
              template_key: s.template.name,
              step: s.step,
              due_at: new Date(now + s.delayMinutes * 60_000).toISOString(),
              status: stops[i] ? ('suppressed' as const) : ('scheduled' as const),
              reason: stops[i] ?? contactReason('cart', contact.status),
            }))
          : order === 'paid'
            ? chain.map((s) => skipped(s.template.name, s.step, 'order_already_paid'))
            : [];
      // Default-chain steps without a routed template are skipped (SPEC §3); the answer says so.
      if (order === 'created' && chain.every((s) => DEFAULT_STEPS.has(s.step)))
        for (const s of CART_STEPS)
          if (!chain.some((c) => c.step === s.step)) plan.push(skipped(null, s.step, 'no_template'));
      const response = {
        ok: true as const,
        site_key: project.site_key,
        event_id: eventId,
        order_id: orderId,
        cart_type: cartType,
        scheduled_email_ids: emailIds,
        duplicate: order === 'duplicate',
        plan,
      };
      if (order === 'created') return { response, effects: { contact_id: contact.id, scheduled_email_ids: emailIds } };
      const note = order === 'paid' ? 'order already paid: no cart e-mails' : 'order already known: nothing scheduled';
      return { response, effects: { contact_id: contact.id, scheduled_email_ids: emailIds, note } };
    },
  };
  return executePlan(call, body, plan);
}

export async function scopedListContact(call: GatewayCall, listId: number, raw: unknown) {
  const body = requireObject(raw);
  applyPhpTolerances(body);
  requirePermission(rightsOf(call), 'list_contacts_write');
  requireListAllowed(rightsOf(call), listId);
  const list = await findList(call.deps.db.db, listId);
  if (!list || list.project_id !== call.project.id) throw notFound(`Address book ${listId}`);
  assertBody(ScopedListContactBody, body, {
    required: ['email'],
    eventType: 'list_contact_upsert',
    what: 'the address-book contact',
    limits: limitsOf(call),
  });
  const { project } = call;
  return executePlan(call, body, {
    contact: { email: body.email, name: body.name, fields: body.fields },
    emails: [],
    work: async (trx, { eventId, contact, now }) => {
      const added = await addToList(trx, listId, contact.id, now);
      return {
        response: {
          ok: true as const,
          site_key: project.site_key,
          event_id: eventId,
          list_id: listId,
          contact_id: contact.id,
        },
        effects: { contact_id: contact.id, address_books: [listId], added },
      };
    },
  });
}

export { purchase } from './purchase.js';
