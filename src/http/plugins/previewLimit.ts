// Previews and test sends limited per account (SPEC §20): each renders a template, which may take up to
// RENDER_BUDGET_MS of a render thread, so one account cannot keep the pool busy for everyone. Counted in
// the installation's rate-limit store (Redis when REDIS_URL is set, so every API process counts the same
// clicks); a process without one (some tests) does not limit.
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { Deps } from '../../services/context.js';

/** A route-level preHandler (it runs after the access check has named the principal). */
export function previewLimit(deps: Deps) {
  return async (req: FastifyRequest): Promise<void> => {
    if (!deps.rateLimiter) return;
    const p = req.principal;
    const account = p?.userId != null ? `user:${p.userId}` : `root`;
    // Installations (or schemas) sharing one Redis never share a bucket: the name is keyed by the secret.
    const bucket = `preview:${createHash('sha256')
      .update(`${deps.secret ?? ''}\u0000${account}`)
      .digest('hex')
      .slice(0, 32)}`;
    const d = await deps.rateLimiter.take(bucket, deps.config.render.previewRate);
    if (d.allowed) return;
    throw new AppError(
      429,
      'rate_limited',
      { reason: 'preview_rate_limited', params: { retry_after: d.retryAfterSeconds } },
      { retry_after: d.retryAfterSeconds },
      { 'Retry-After': String(d.retryAfterSeconds) },
    );
  };
}
