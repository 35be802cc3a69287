import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ping } from '../../db/index.js';
import { migrationsCurrent } from '../../db/migrate.js';
import { refusedRecently } from '../../db/unavailable.js';
import { redisState } from '../../redis.js';
import { AppError } from '../../errors.js';
import { errors } from '../../schemas/common.js';
import type { Deps } from '../../services/context.js';

export const healthRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'The process accepts requests',
        response: { 200: Type.Object({ ok: Type.Literal(true) }) },
      },
    },
    async () => ({ ok: true as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'The database is reachable and its migrations are current',
        response: {
          200: Type.Object({
            ok: Type.Literal(true),
            database: Type.String(),
            redis: Type.Optional(
              Type.Union([Type.Literal('shared'), Type.Literal('fallback')], {
                description:
                  "With REDIS_URL: `shared` (limits and caps in Redis) or `fallback` (Redis is unreachable; this process's own limits apply, and it stays ready)",
              }),
            ),
          }),
          ...errors(503),
        },
      },
    },
    async () => {
      let current: boolean;
      try {
        await ping(deps.db.db);
        current = await migrationsCurrent(deps.db);
      } catch {
        throw new AppError(503, 'not_ready', 'The database is unreachable');
      }
      if (!current) throw new AppError(503, 'not_ready', 'Database migrations are not current: run migrate');
      // Reads may work while writes fail (a full disk, a locked SQLite file): a recent refusal counts.
      const ago = refusedRecently();
      if (ago !== null)
        throw new AppError(
          503,
          'not_ready',
          `The database refused a write ${ago} s ago (full disk, lock or I/O error)`,
        );
      // Redis away is no reason to take the process out of service (SPEC §20): said, not refused.
      const redis = redisState();
      return { ok: true as const, database: deps.db.dialect, ...(redis ? { redis } : {}) };
    },
  );
};
