// The API document's sequences (admin token).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as automation from '../../../services/campaigns.js';
import { auditActor } from '../../plugins/access.js';
import { Id, Ok } from '../../../schemas/admin.js';
import { SiteKey } from '../../../schemas/common.js';
import type { Deps } from '../../../services/context.js';
import { Type } from 'typebox';
import { LEGACY, legacyErrors } from '../schemaParts.js';

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

export const sequencesApiRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/sequences',
    {
      config: { access: { project: 'body.site_key', write: true } },
      schema: {
        ...LEGACY,
        summary: 'Create an automatic chain of templates with delays',
        body: SequenceBody,
        response: {
          200: Type.Object({ ok: Ok, site_key: Type.String(), sequence_id: Type.Integer() }),
          ...legacyErrors,
        },
      },
    },
    async (req) => automation.createSequence(deps, auditActor(req), req.body),
  );
};
