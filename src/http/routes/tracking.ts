// /c/{token} and /o/{token}.gif (SPEC §17). The token alone decides (signed, stateless): a bad one is a
// 404 before anything is read or written, and a good one redirects to the destination inside it. The
// answer never waits for a write: the hit joins an in-memory batch written by one INSERT every
// TRACKING_FLUSH_MS (docs/decisions.md: a process killed after answering loses at most that batch).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { batcher, fulfilled } from '../../batcher.js';
import { notFound } from '../../errors.js';
import { machineReason, truncateIp, uaCategory } from '../../domain/machineHits.js';
import { trackingKeys, verifyClick, verifyOpen } from '../../domain/trackingTokens.js';
import { insertHits, type NewHit } from '../../repos/trackingHits.js';
import type { Deps } from '../../services/context.js';
import { errors } from '../../schemas/common.js';

// The smallest transparent GIF (43 bytes).
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
/** Hits per INSERT: at 10,000 a second and the default 200 ms, every flush is one or two statements. */
const HITS_PER_BATCH = 2000;

// Any length and shape: verifyClick/verifyOpen bound and check it (a schema refusal would be a 422).
const params = Type.Object({ '*': Type.String() });
const schema = { params, hide: true, response: errors(400, 404) };

export interface HitRecorder {
  record(hit: NewHit): void;
  /** Resolves when every hit recorded so far is written (or failed). */
  drain(): Promise<void>;
}

export function hitRecorder(deps: Deps): HitRecorder {
  const write = batcher<NewHit, void>({
    maxBatch: HITS_PER_BATCH,
    lingerMs: deps.config.tracking.flushMs,
    run: async (hits) => {
      await insertHits(deps.db.db, hits);
      return hits.map(() => fulfilled(undefined));
    },
  });
  const inFlight = new Set<Promise<void>>();
  return {
    record(hit) {
      const p = write(hit).catch((err: unknown) => {
        deps.log?.error({ err }, 'could not record tracking hits');
      });
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    },
    async drain() {
      while (inFlight.size) await Promise.all([...inFlight]);
    },
  };
}

export const trackingRoutes: FastifyPluginAsyncTypebox<{ deps: Deps; secret: string }> = async (
  app,
  { deps, secret },
) => {
  const keys = trackingKeys(secret, deps.config.secretKeyPrevious);
  const recorder = hitRecorder(deps);
  app.addHook('onClose', async () => recorder.drain());

  const client = (req: FastifyRequest, sentAtSec: number) => {
    const at = deps.clock.now();
    const category = uaCategory(req.headers['user-agent']);
    const reason = machineReason({
      method: req.method,
      category,
      at,
      sentAt: sentAtSec * 1000,
      minDelayMs: deps.config.tracking.minDelayMs,
    });
    return {
      at,
      ua_category: category,
      machine: reason !== null,
      machine_reason: reason,
      ip_prefix: truncateIp(req.ip),
    };
  };
  const noStore = (reply: FastifyReply) =>
    reply
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-robots-tag', 'noindex');

  app.get('/c/*', { schema }, async (req, reply) => {
    const claims = verifyClick(keys, req.params['*']);
    if (!claims) throw notFound('Link');
    recorder.record({
      project_id: claims.projectId,
      email_id: claims.emailId,
      kind: 'click',
      position: claims.position,
      url: claims.url,
      ...client(req, claims.sentAt),
    });
    return noStore(reply).redirect(claims.url, 302);
  });

  app.get('/o/*', { schema }, async (req, reply) => {
    const token = req.params['*'];
    const claims = token.endsWith('.gif') ? verifyOpen(keys, token.slice(0, -4)) : null;
    if (!claims) throw notFound('Image');
    recorder.record({
      project_id: claims.projectId,
      email_id: claims.emailId,
      kind: 'open',
      position: null,
      url: null,
      ...client(req, claims.sentAt),
    });
    return noStore(reply).header('content-type', 'image/gif').send(PIXEL);
  });
};
