// Provider webhooks (SPEC §12). The signature of most providers covers the exact bytes sent, so this
// plugin takes every body as raw bytes (any content type: SNS posts text/plain) and the provider
// module parses it after the check. Rate limited per project like the gateway.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { WEBHOOK_PROVIDERS } from '../../domain/statuses.js';
import { AppError } from '../../errors.js';
import { errors, literalUnion, SiteKey } from '../../schemas/common.js';
import type { Deps } from '../../services/context.js';
import { receiveProviderWebhook } from '../../services/providerReports.js';

/** A provider batch (SendGrid sends up to thousands of events at once) may exceed the gateway's limit. */
const WEBHOOK_BODY_LIMIT = 1024 * 1024;

const WebhookParams = Type.Object({ provider: literalUnion(WEBHOOK_PROVIDERS), site_key: SiteKey });
const WebhookResponse = Type.Object({
  ok: Type.Literal(true),
  received: Type.Integer({ description: 'reports read from the body' }),
  stored: Type.Integer(),
  duplicates: Type.Integer({ description: 'reports stored before (replays): they changed nothing' }),
  matched: Type.Integer({ description: 'reports matched to an e-mail of the project' }),
  note: Type.Optional(Type.String()),
});

export const providerWebhookRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_req, body, done) =>
    done(null, body),
  );
  app.post(
    '/api/webhooks/:provider/:site_key',
    {
      // Authenticated by each provider's own signature (services/providerReports.ts), not as an admin.
      config: { access: { public: true } },
      bodyLimit: WEBHOOK_BODY_LIMIT,
      schema: {
        tags: ['webhooks'],
        summary: 'Delivery, bounce and complaint reports from an e-mail provider',
        description:
          'ses (SNS, signed), postmark (basic auth), sendgrid (signed event webhook), mailgun (signed), unisender_go (auth hash). A wrong or missing signature is 401 and changes nothing.',
        params: WebhookParams,
        response: { 200: WebhookResponse, ...errors(400, 401, 404, 413, 429, 500) },
      },
    },
    async (req, reply) => {
      const { provider, site_key } = req.params;
      if (deps.rateLimiter) {
        const d = await deps.rateLimiter.take(`webhook:${site_key}`, deps.config.rateLimit);
        if (!d.allowed)
          throw new AppError(
            429,
            'rate_limited',
            'Too many webhook requests for this project',
            {},
            {
              'Retry-After': String(d.retryAfterSeconds),
            },
          );
      }
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      return reply.send(await receiveProviderWebhook(deps, provider, site_key, { headers: req.headers, body }));
    },
  );
};
