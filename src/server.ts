// Process wiring for `serve` and `worker`: open and migrate the database, build the app, start the
// delivery worker, and shut both down cleanly on SIGTERM/SIGINT.
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { openDatabase, type Db } from './db/index.js';
import { migrateToLatest } from './db/migrate.js';
import { buildApp } from './http/app.js';
import { systemClock, type Deps } from './services/context.js';

export async function openDeps(config: Config): Promise<Deps> {
  const db: Db = await openDatabase(config.databaseUrl);
  return { db, config, clock: systemClock };
}

export async function serve(config: Config): Promise<{ app: FastifyInstance; stop(): Promise<void> }> {
  const deps = await openDeps(config);
  await migrateToLatest(deps.db);
  const app = await buildApp(deps, { logger: { level: config.logLevel } });
  if (!config.adminToken) app.log.warn('ADMIN_TOKEN is not set: the admin API, legacy endpoints and admin UI refuse every request');
  await app.listen({ port: config.port, host: config.host });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await app.close();
    await deps.db.close();
  };
  return { app, stop };
}
