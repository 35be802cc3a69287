// External gateway routes: thin adapters from HTTP to services/gateway.ts. Bodies are validated by the
// service with the same schemas, because SPEC §1 orders key -> permission -> event type -> rights ->
// fields, which a blanket schema check before the handler would break. The schema here documents the
// body only: req.body is typed `unknown` (unchecked), since nothing has checked it yet, and goes to the
// service, whose assertion (domain/validation.ts assertBody) gives it its type.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { isObject } from '../../domain/validation.js';
import { compileRequestValidator } from '../../schemas/ajv.js';
import { errors, Id } from '../../schemas/common.js';
import {
  CatalogResponse,
  DryRunQuery,
  OrderCreatedBody,
  OrderCreatedResponse,
  PurchaseBody,
  PurchaseResponse,
  ScopedListContactBody,
  ScopedListContactResponse,
  TransactionalBody,
  TransactionalResponse,
} from '../../schemas/gateway.js';
import { logRequest, refusalEffects, type Accepted } from '../../services/accept/accept.js';
import type { Deps } from '../../services/context.js';
import * as gateway from '../../services/gateway.js';
import * as consent from '../../services/consent.js';
import * as erasure from '../../services/erasure.js';
import { ScopedErasureView, ScopedConsentBody, ScopedConsentResponse, ScopedEraseBody } from '../../schemas/consent.js';
import { gatewayAuth, refuseHeldRequest } from '../plugins/auth.js';
import { answerFor } from '../plugins/errors.js';

const DRY_RUN_ENDPOINTS = new Set(['transactional', 'order-created', 'purchase']);
// preParsing: the query string is not validated yet.
const isDryRun = (req: FastifyRequest) => {
  const q = isObject(req.query) ? req.query.dry_run : undefined;
  return q === 'true' || q === '1' || q === true || /\bdry-run\b/i.test(String(req.headers.prefer ?? ''));
};

/** A body's schema for the documentation, typed `unknown`: the service checks the body, not Fastify. */
const unchecked = (schema: TSchema) => Type.Unsafe<unknown>(schema);

const bodyCheckedByService: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) =>
  httpPart === 'body' ? () => true : compileRequestValidator(schema, httpPart);

const security = [{ apiKey: [] }];
const tags = ['gateway'];
const postErrors = errors(400, 401, 403, 404, 413, 415, 422, 429, 500);

function answer<T>(reply: FastifyReply, r: Accepted<T>): T {
  if (r.replayed) reply.header('Idempotent-Replayed', 'true');
  reply.code(r.status);
  // A response stored for an idempotent replay before the plan existed (SPEC §13) answers with an empty one.
  if (r.status === 200 && typeof r.body === 'object' && r.body && !('plan' in r.body)) return { ...r.body, plan: [] };
  return r.body;
}

export const gatewayRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', refuseHeldRequest);
  // Marked before the body is read, so a refusal of a dry run is logged as one too (and tells no webhook).
  app.addHook('preParsing', async (req) => {
    if (req.gateway && DRY_RUN_ENDPOINTS.has(req.gateway.endpoint) && isDryRun(req)) req.gateway.dryRun = true;
  });
  // Every refused request of a known key goes into the chronology (SPEC §5), whatever refused it: the
  // service, the key's state (disabled, over its rate: held until the body is read), or Fastify (body
  // size, JSON, parameters). onError runs before the error handler answers, so the row is there when
  // the client sees the refusal; it records the same answer the handler sends (answerFor).
  app.addHook('onError', async (req, _reply, err: FastifyError) => {
    const call = req.gateway ?? req.gatewayRefusal?.call;
    if (!call) return;
    const e = answerFor(req, err);
    // The chronology lives in the database that could not be reached.
    if (e.code === 'service_unavailable') return;
    try {
      await logRequest(call, req.body, e.status, e.code, refusalEffects(e));
    } catch (logErr) {
      // The refusal is still answered as it should be; the lost chronology row is visible to operators.
      deps.metrics?.eventLogFailures.inc();
      req.log.error({ err: logErr, code: e.code }, 'could not log a refused gateway request in the chronology');
    }
  });

  app.get(
    '/api/scoped/events/catalog',
    {
      onRequest: gatewayAuth(deps, 'catalog'),
      schema: {
        tags,
        security,
        summary: 'The shared event catalog and the events the calling key supports',
        response: { 200: CatalogResponse, ...errors(401, 403, 429, 500) },
      },
    },
    async (req) => {
      const catalog = await gateway.catalog(req.gateway!);
      await logRequest(req.gateway!, undefined, 200, null, { supported_events: catalog.supported_events.length });
      return catalog;
    },
  );

  app.post(
    '/api/scoped/send/transactional',
    {
      onRequest: gatewayAuth(deps, 'transactional'),
      validatorCompiler: bodyCheckedByService,
      schema: {
        tags,
        security,
        summary: 'Send or schedule the transactional e-mail routed for event_type',
        description:
          'Waits up to SEND_WAIT_MS for the first delivery attempt unless the request carries `Prefer: respond-async`.',
        headers: Type.Object({
          prefer: Type.Optional(
            Type.String({ description: 'respond-async: answer at once with status queued; dry-run: as ?dry_run=true' }),
          ),
        }),
        querystring: DryRunQuery,
        body: unchecked(TransactionalBody),
        response: { 200: TransactionalResponse, ...postErrors },
      },
    },
    async (req, reply) => {
      const respondAsync = /\brespond-async\b/i.test(String(req.headers.prefer ?? ''));
      if (respondAsync) reply.header('Preference-Applied', 'respond-async');
      return answer(reply, await gateway.transactional(req.gateway!, req.body, { respondAsync }));
    },
  );

  app.post(
    '/api/scoped/events/order-created',
    {
      onRequest: gatewayAuth(deps, 'order-created'),
      validatorCompiler: bodyCheckedByService,
      schema: {
        tags,
        security,
        summary: 'An order or application was created: schedules the abandoned-cart chain',
        querystring: DryRunQuery,
        body: unchecked(OrderCreatedBody),
        response: { 200: OrderCreatedResponse, ...postErrors },
      },
    },
    async (req, reply) => answer(reply, await gateway.orderCreated(req.gateway!, req.body)),
  );

  app.post(
    '/api/scoped/events/purchase',
    {
      onRequest: gatewayAuth(deps, 'purchase'),
      validatorCompiler: bodyCheckedByService,
      schema: {
        tags,
        security,
        summary: 'An order was paid: stops its cart e-mails and fills the address books',
        querystring: DryRunQuery,
        body: unchecked(PurchaseBody),
        response: { 200: PurchaseResponse, ...postErrors },
      },
    },
    async (req, reply) => answer(reply, await gateway.purchase(req.gateway!, req.body)),
  );

  app.post(
    '/api/scoped/lists/:list_id/contacts',
    {
      onRequest: gatewayAuth(deps, 'list-contact'),
      validatorCompiler: bodyCheckedByService,
      schema: {
        tags,
        security,
        summary: 'Upsert a contact into the one address book a list_contacts_write key may write',
        params: Type.Object({ list_id: Id }),
        body: unchecked(ScopedListContactBody),
        response: { 200: ScopedListContactResponse, ...postErrors },
      },
    },
    async (req, reply) => answer(reply, await gateway.scopedListContact(req.gateway!, req.params.list_id, req.body)),
  );

  app.post(
    '/api/scoped/contacts/consent',
    {
      onRequest: gatewayAuth(deps, 'contact-consent'),
      validatorCompiler: bodyCheckedByService,
      schema: {
        tags,
        security,
        summary: 'Record consent given or withdrawn for one topic (any key of the project)',
        body: unchecked(ScopedConsentBody),
        response: { 200: ScopedConsentResponse, ...postErrors },
      },
    },
    async (req, reply) => answer(reply, await consent.scopedConsent(req.gateway!, req.body)),
  );

  app.post(
    '/api/scoped/contacts/erase',
    {
      onRequest: gatewayAuth(deps, 'contact-erase'),
      validatorCompiler: bodyCheckedByService,
      schema: {
        tags,
        security,
        summary: "Pass a person's deletion request on: erase every stored copy of the address (any key of the project)",
        body: unchecked(ScopedEraseBody),
        response: { 200: ScopedErasureView, ...postErrors },
      },
    },
    async (req, reply) => answer(reply, await erasure.scopedErase(req.gateway!, req.body)),
  );
};
