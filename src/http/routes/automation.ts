// Legacy automation endpoints of the API document: unpaid-order, sequences, campaigns, statistics.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CART_TYPES } from '../../domain/catalog.js';
import { errors, Email, FieldsObject, ShortString, SiteKey } from '../../schemas/common.js';
import { Id, IdParams, Ok, SiteKeyParams } from '../../schemas/admin.js';
import { OrderCreatedResponse } from '../../schemas/gateway.js';
import * as automation from '../../services/campaigns.js';
import type { Deps } from '../../services/context.js';
import { auditActor } from '../plugins/access.js';
import { unpaidOrder } from '../../services/unpaidOrder.js';

const tags = ['legacy'];
const security = [{ adminToken: [] }];
const errs = errors(400, 401, 403, 404, 413, 415, 422, 500);

const UnpaidOrderBody = Type.Object(
  {
    site_key: SiteKey,
    email: Email,
    order_id: ShortString(200),
    name: Type.Optional(ShortString(500)),
    course_name: Type.Optional(ShortString(1000)),
    fields: Type.Optional(FieldsObject),
  },
  { additionalProperties: false },
);
const Step = Type.Object(
  { template_id: Id, delay_minutes: Type.Integer({ minimum: 0, maximum: 525_600 }) },
  { additionalProperties: false },
);
const SequenceBody = Type.Object(
  {
    site_key: SiteKey,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    steps: Type.Array(Step, { minItems: 1, maxItems: 20 }),
  },
  { additionalProperties: false },
);
const CampaignBody = Type.Object(
  {
    site_key: SiteKey,
    template_id: Id,
    list_id: Id,
    send_at: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);
const CartChainsBody = Type.Object(
  {
    chains: Type.Record(Type.String({ description: CART_TYPES.join(', ') }), Type.Union([Id, Type.Null()]), {
      maxProperties: 10,
    }),
    confirm: Type.Optional(Type.Boolean({ description: 'save although recent requests would fail (SPEC §16)' })),
  },
  { additionalProperties: false },
);
const Counts = {
  recipients: Type.Integer(),
  scheduled: Type.Integer(),
  due: Type.Integer(),
  sent: Type.Integer(),
  failed: Type.Integer(),
  suppressed: Type.Integer(),
  cancelled: Type.Integer(),
  unsubscribed: Type.Integer(),
};
const IntMap = Type.Record(Type.String(), Type.Integer());

export const automationRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/events/unpaid-order',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        tags,
        security,
        summary: 'Legacy: an unpaid course order (same effect as order-created with cart_type course)',
        body: UnpaidOrderBody,
        response: { 200: OrderCreatedResponse, ...errs },
      },
    },
    async (req) => unpaidOrder(deps, auditActor(req), req.body),
  );

  app.post(
    '/api/sequences',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        tags,
        security,
        summary: 'Create an automatic chain of templates with delays',
        body: SequenceBody,
        response: { 200: Type.Object({ ok: Ok, site_key: Type.String(), sequence_id: Type.Integer() }), ...errs },
      },
    },
    async (req) => automation.createSequence(deps, auditActor(req), req.body),
  );

  app.put(
    '/api/admin/projects/:site_key/cart-chains',
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        tags: ['admin'],
        security,
        summary: 'Per cart type, a sequence replacing the default 1 h/1 d/3 d chain (null restores the default)',
        params: SiteKeyParams,
        body: CartChainsBody,
        response: { 200: Type.Object({ ok: Ok, site_key: Type.String(), chains: IntMap }), ...errs, ...errors(409) },
      },
    },
    async (req) =>
      automation.setCartChains(deps, auditActor(req), req.params.site_key, req.body.chains, req.body.confirm),
  );

  app.post(
    '/api/campaigns',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        tags,
        security,
        summary: 'Send a template to the active contacts of an address book, now or at send_at',
        body: CampaignBody,
        response: {
          200: Type.Object({
            ok: Ok,
            site_key: Type.String(),
            campaign_id: Type.Integer(),
            recipients: Type.Integer(),
            send_at: Type.String(),
          }),
          ...errs,
        },
      },
    },
    async (req) => automation.createCampaign(deps, auditActor(req), req.body),
  );

  app.get(
    '/api/campaigns/:id/stats',
    {
      config: { access: { object: { kind: 'campaign', id: 'params.id' } } },
      schema: {
        tags,
        security,
        summary: 'Campaign statistics',
        params: IdParams,
        response: {
          200: Type.Object({
            ok: Ok,
            campaign_id: Type.Integer(),
            site_key: Type.String(),
            template_id: Type.Integer(),
            list_id: Type.Integer(),
            send_at: Type.String(),
            ...Counts,
          }),
          ...errs,
        },
      },
    },
    async (req) => automation.campaignStats(deps, req.params.id),
  );

  app.get(
    '/api/stats/overview',
    {
      config: { access: { owner: true } },
      schema: {
        tags,
        security,
        summary: 'Overall service statistics',
        response: {
          200: Type.Object({
            ok: Ok,
            projects: Type.Integer(),
            api_keys: Type.Integer(),
            campaigns: Type.Integer(),
            contacts_by_status: IntMap,
            emails_by_status: IntMap,
            events: Type.Object({
              total: Type.Integer(),
              accepted: Type.Integer(),
              rejected: Type.Integer(),
              repeated: Type.Integer({
                description: 'retries with a changed body under a used idempotency key: the first call did the work',
              }),
              last_24h: Type.Integer(),
            }),
            orders: Type.Object({
              total: Type.Integer(),
              paid: Type.Integer(),
              paid_amount_by_currency: Type.Record(Type.String(), Type.Number(), {
                description:
                  'paid amounts per ISO 4217 currency, e.g. {"RUB": 2500, "KZT": 12000}; XXX: recorded without a currency',
              }),
            }),
            outbox: Type.Object({ due: Type.Integer(), oldest_due_age_seconds: Type.Number() }),
          }),
          ...errs,
        },
      },
    },
    async () => automation.overview(deps),
  );
};
