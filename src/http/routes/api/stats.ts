// The API document's statistics overview (admin token); test sends count in none (SPEC §11).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as automation from '../../../services/campaigns.js';
import { Ok } from '../../../schemas/admin.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { LEGACY, legacyErrors } from '../schemaParts.js';

const IntMap = Type.Record(Type.String(), Type.Integer());

export const statsApiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/stats/overview',
    {
      config: { access: { owner: true } },
      schema: {
        ...LEGACY,
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
          ...legacyErrors,
        },
      },
    },
    async () => automation.overview(deps),
  );
};
