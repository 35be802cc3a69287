import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ping } from '../../db/index.js';
import { migrationsCurrent } from '../../db/migrate.js';
import { refusedRecently } from '../../db/unavailable.js';
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
        response: { 200: Type.Object({ ok: Type.Literal(true), database: Type.String() }), ...errors(503) },
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
      return { ok: true as const, database: deps.db.dialect };
    },
  );
};
