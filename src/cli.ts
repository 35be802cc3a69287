// The one CLI: serve, worker, migrate, keys, admin, demo. `npm start` runs `serve`.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { migrateToLatest } from './db/migrate.js';
import { PERMISSIONS } from './domain/catalog.js';
import { listKeys } from './repos/keys.js';
import { openDatabase } from './db/index.js';
import { start } from './server.js';
import { systemClock } from './services/context.js';
import { changeApiKey, createApiKey, requireProject } from './services/admin.js';
import { describeDemo, loadDemo } from './services/demo.js';
import type { Rights } from './schemas/common.js';
import { AppError } from './errors.js';
import { DELIVERY_USAGE, deliveryCommand } from './cliDelivery.js';
import { ADMIN_USAGE, adminCommand, cliActor } from './cliAdmin.js';
import { BACKUP_USAGE, backupCommand } from './cliBackup.js';

const USAGE = `usage: edu-gateway <command>

  serve                      migrate, then serve the API, admin UI and delivery worker
                             (ROLE=api serves without the worker)
  worker                     run only the delivery worker (and the bounce listener when configured)
  bounces                    run only the inbound bounce listener (BOUNCE_DOMAIN, BOUNCE_SMTP_PORT)
  migrate                    apply database migrations and exit
${BACKUP_USAGE}
  demo                       load the example project of the API document (once; never changes it afterwards)
  keys create --site SITE --name NAME [--permissions a,b] [--events a,b] [--templates a,b]
              [--carts course,diploma] [--list-id N]
                             create an API key; the full key is printed once
  keys list [--site SITE]    list keys (never the key itself)
  keys disable ID            disable a key
${DELIVERY_USAGE}
${ADMIN_USAGE}

Configuration comes from the environment (see README).`;

const csv = (v: string | undefined) =>
  v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

async function main(argv: string[]): Promise<number> {
  const [cmd, sub, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === 'help') {
    console.log(USAGE);
    return cmd ? 0 : 1;
  }
  const config = loadConfig();

  if (cmd === 'serve' || cmd === 'worker' || cmd === 'bounces') {
    const running = await start(config, { role: cmd === 'serve' ? config.role : cmd });
    const shutdown = (signal: string) => {
      console.error(`${signal}: finishing in-flight work, then exiting`);
      running.stop().then(
        () => process.exit(0),
        (err) => {
          console.error(err);
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
    return -1;
  }

  // Before the database is opened and migrated: a backup is taken before an upgrade migrates anything.
  const ops = await backupCommand(config, cmd, sub === undefined ? rest : [sub, ...rest]);
  if (ops !== null) return ops;

  const deps = { db: await openDatabase(config.databaseUrl), config, clock: systemClock };
  try {
    await migrateToLatest(deps.db);
    if (cmd === 'migrate') {
      console.log('database is up to date');
      return 0;
    }
    if (cmd === 'demo') {
      for (const line of describeDemo(await loadDemo(deps, cliActor()))) console.log(line);
      return 0;
    }
    if (cmd === 'admin') return await adminCommand(deps, sub, rest);
    if (cmd === 'keys' && sub === 'create') {
      const { values } = parseArgs({
        args: rest,
        options: {
          site: { type: 'string' },
          name: { type: 'string' },
          permissions: { type: 'string' },
          events: { type: 'string' },
          templates: { type: 'string' },
          carts: { type: 'string' },
          'list-id': { type: 'string' },
        },
      });
      if (!values.site || !values.name) throw new Error('keys create needs --site and --name');
      const perms = csv(values.permissions);
      const bad = perms.filter((p) => !(PERMISSIONS as readonly string[]).includes(p));
      if (bad.length) throw new Error(`unknown permissions: ${bad.join(', ')} (known: ${PERMISSIONS.join(', ')})`);
      const rights: Rights = {
        permissions: perms as Rights['permissions'],
        allowed_api_events: csv(values.events),
        allowed_template_keys: csv(values.templates),
        allowed_cart_types: csv(values.carts) as Rights['allowed_cart_types'],
        ...(values['list-id'] ? { list_id: Number(values['list-id']) } : {}),
      };
      const k = await createApiKey(deps, cliActor(), { site_key: values.site, name: values.name, rights });
      console.log(`created key ${k.id} (${k.name}) for ${k.site_key}:\n${k.key}\nStore it now: it is not shown again.`);
      return 0;
    }
    if (cmd === 'keys' && sub === 'list') {
      const { values } = parseArgs({ args: rest, options: { site: { type: 'string' } } });
      const projectId = values.site ? (await requireProject(deps.db.db, values.site)).id : undefined;
      for (const k of await listKeys(deps.db.db, projectId)) {
        console.log(
          `${k.id}\t${k.site_key}\t${k.status}\t…${k.last4}\t${k.name}\t${(k.rights.permissions ?? []).join(',')}`,
        );
      }
      return 0;
    }
    if (cmd === 'keys' && sub === 'disable') {
      const id = Number(rest[0]);
      if (!Number.isInteger(id) || id < 1) throw new Error('keys disable needs a key id');
      await changeApiKey(deps, cliActor(), id, { status: 'disabled' });
      console.log(`key ${id} disabled`);
      return 0;
    }
    const code = cmd === 'delivery' || cmd === 'secrets' ? await deliveryCommand(deps, cmd, sub, rest) : null;
    if (code !== null) return code;
    console.error(USAGE);
    return 1;
  } finally {
    await deps.db.close();
  }
}

main(process.argv.slice(2)).then(
  // A one-shot command ends when its work is done: an idle render thread or a port left open by a
  // library must not keep it running (seen on Node 24 under the test runner). Writes to pipes and files
  // are synchronous on Linux, so nothing printed is lost.
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    if (err instanceof ConfigError) console.error(`configuration error: ${err.message}`);
    else if (err instanceof AppError) console.error(`error: ${err.message}`);
    else console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
