// Authentication of the gateway's scoped API keys (SPEC §2); the admin side is plugins/access.ts.
// It runs as an onRequest hook, before the body is read, so a bad key is refused first (SPEC §1 order).
// A key that is known but may not proceed (disabled, over its rate) is answered only once the body has
// been read (refuseHeldRequest), so the chronology can record the event type, e-mail and order id of the
// refused request (SPEC §10); whatever the body, the answer is the key's refusal.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashKey, isWellFormedKey, sameHash } from '../../domain/keys.js';
import { AppError } from '../../errors.js';
import { configSnapshot } from '../../services/configCache.js';
import type { Deps, GatewayCall } from '../../services/context.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set only for a key that may proceed: a handler that runs without it fails closed. */
    gateway?: GatewayCall;
    /** A known key's refusal, held until the body is read. */
    gatewayRefusal?: { call: GatewayCall; error: AppError };
  }
}

export function gatewayAuth(deps: Deps, endpoint: string) {
  return async function onRequest(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = req.headers['x-api-key'];
    const presented = Array.isArray(header) ? header[0] : header;
    if (!presented || !presented.trim())
      throw new AppError(401, 'missing_api_key', 'Send the project API key in the X-API-Key header');
    const token = presented.trim();
    // The checksum rejects typos and random strings without touching the database.
    if (!isWellFormedKey(token)) {
      // A header's bytes arrive as latin1: a key typed in a Russian layout is UTF-8 Cyrillic underneath,
      // and saying so helps more than "not valid" (issue 37 item 7). Only refused keys are looked at.
      if (/[\u0400-\u04ff]/.test(Buffer.from(token, 'latin1').toString('utf8')))
        throw new AppError(401, 'invalid_api_key', { reason: 'api_key_cyrillic' });
      throw new AppError(401, 'invalid_api_key', 'The API key is not valid');
    }
    const hash = hashKey(token);
    // Cached per process, checked against the configuration version on every request (no stale key).
    const config = await configSnapshot(deps.db);
    const found = await config.keyByHash(hash);
    if (!found || !sameHash(found.key.key_hash, hash))
      throw new AppError(401, 'invalid_api_key', 'The API key is not valid');
    const { key, project } = found;
    const call: GatewayCall = { deps, project, key, endpoint, config };
    if (key.status !== 'active') {
      req.gatewayRefusal = {
        call,
        error: new AppError(403, 'api_key_disabled', 'This API key is disabled', { key_last4: key.last4 }),
      };
      return;
    }
    if (deps.rateLimiter) {
      const limit = key.rate_limit ?? deps.config.rateLimit;
      // Named by the key's hash, not its row id: installations (or schemas) sharing one Redis never
      // share a bucket.
      const d = await deps.rateLimiter.take(`key:${key.key_hash.slice(0, 32)}`, limit);
      const headers = {
        'RateLimit-Limit': String(d.limit),
        'RateLimit-Remaining': String(d.remaining),
        'RateLimit-Reset': String(d.resetSeconds),
      };
      if (!d.allowed) {
        req.gatewayRefusal = {
          call,
          error: new AppError(
            429,
            'rate_limited',
            `Over this key's rate of ${limit.per_second} requests/s (burst ${limit.burst}); retry after ${d.retryAfterSeconds} s`,
            { retry_after: d.retryAfterSeconds },
            { ...headers, 'Retry-After': String(d.retryAfterSeconds) },
          ),
        };
        return;
      }
      reply.headers(headers);
    }
    req.gateway = call;
  };
}

/** preValidation of every gateway route: answers a held refusal now that the body has been read. */
export async function refuseHeldRequest(req: FastifyRequest): Promise<void> {
  if (req.gatewayRefusal) throw req.gatewayRefusal.error;
}
