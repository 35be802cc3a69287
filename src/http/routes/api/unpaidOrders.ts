// The API document's legacy unpaid-order event (admin token).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { auditActor } from '../../plugins/access.js';
import { Email, FieldsObject, ShortString, SiteKey } from '../../../schemas/common.js';
import { OrderCreatedResponse } from '../../../schemas/gateway.js';
import type { Deps } from '../../../services/context.js';
import { unpaidOrder } from '../../../services/unpaidOrder.js';
import { Type } from 'typebox';
import { LEGACY, legacyErrors } from '../schemaParts.js';

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

export const unpaidOrdersApiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/events/unpaid-order',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        ...LEGACY,
        summary: 'Legacy: an unpaid course order (same effect as order-created with cart_type course)',
        body: UnpaidOrderBody,
        response: { 200: OrderCreatedResponse, ...legacyErrors },
      },
    },
    async (req) => unpaidOrder(deps, auditActor(req), req.body),
  );
};
