// Migrations live in code (not discovered on disk) so they run the same under tsx, in tests and from a
// bundle. Each receives the dialect for the few DDL differences.
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Db, Dialect } from './index.js';
import * as m001 from './migrations/001_init.js';
import * as m002 from './migrations/002_sessions.js';
import * as m003 from './migrations/003_campaigns.js';
import * as m004 from './migrations/004_config_version.js';
import * as m005 from './migrations/005_robustness.js';
import * as m006 from './migrations/006_inputs.js';
import * as m007 from './migrations/007_project_locale.js';
import * as m008 from './migrations/008_delivery_settings.js';
import * as m009 from './migrations/009_admin_accounts.js';
import * as m010 from './migrations/010_bounces.js';
import * as m011 from './migrations/011_site_webhooks.js';
import * as m012 from './migrations/012_webhook_outbox.js';
import * as m013 from './migrations/013_marketing_pause.js';
import * as m014 from './migrations/014_audit_token.js';
import * as m015 from './migrations/015_template_topic_tracking.js';
import * as m016 from './migrations/016_hand_over.js';
import * as m017 from './migrations/017_template_contract.js';
import * as m018 from './migrations/018_tracking.js';
import * as m019 from './migrations/019_consent.js';
import * as m020 from './migrations/020_project_reply_to.js';
import * as m021 from './migrations/021_project_private_webhooks.js';
import * as m022 from './migrations/022_relay_outages.js';
import * as m023 from './migrations/023_tenants_apart.js';
import * as m024 from './migrations/024_project_identity.js';
import { normalizeMigrationHistory, recordedMigrations, unorderedGap } from './migrationHistory.js';

export interface MigrationContext {
  dialect: Dialect;
}

type Step = { up(db: Kysely<any>, ctx: MigrationContext): Promise<void> };
/** Numbered strictly, one after another, and run in that order; a new one takes the next number. */
const steps: Record<string, Step> = {
  '001_init': m001,
  '002_sessions': m002,
  '003_campaigns': m003,
  '004_config_version': m004,
  '005_robustness': m005,
  '006_inputs': m006,
  '007_project_locale': m007,
  '008_delivery_settings': m008,
  '009_admin_accounts': m009,
  '010_bounces': m010,
  '011_site_webhooks': m011,
  '012_webhook_outbox': m012,
  '013_marketing_pause': m013,
  '014_audit_token': m014,
  '015_template_topic_tracking': m015,
  '016_hand_over': m016,
  '017_template_contract': m017,
  '018_tracking': m018,
  '019_consent': m019,
  '020_project_reply_to': m020,
  '021_project_private_webhooks': m021,
  '022_relay_outages': m022,
  '023_tenants_apart': m023,
  '024_project_identity': m024,
};

/** Every migration's name, in the order they run. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(steps);

class CodeProvider implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const [name, step] of Object.entries(steps)) {
      out[name] = { up: (db) => step.up(db, { dialect: this.dialect }) };
    }
    return out;
  }
}

function migrator({ db, dialect, schema }: Db, allowUnorderedMigrations = false): Migrator {
  // Name the schema: Kysely's introspection otherwise sees another schema's migration table.
  // Ordered: a migration may rely on every lower-numbered one (docs/decisions.md, "Migrations numbered
  // strictly"); only a database of the unordered era may take a forgotten one late (migrationHistory.ts).
  return new Migrator({
    db,
    provider: new CodeProvider(dialect),
    allowUnorderedMigrations,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
}

/**
 * Kysely's PostgreSQL introspection reads the tables of every schema of the database and looks each
 * schema up by name; one dropped meanwhile by someone else (tests, another tenant) fails it with
 * 3F000 "schema … does not exist". That says nothing about ours: the step is simply read again.
 */
async function retryingDroppedSchema<T>(database: Db, step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (e) {
      const other = (e as { code?: string }).code === '3F000' && !String(e).includes(`"${database.schema}"`);
      if (!other || attempt >= 5) throw e;
    }
  }
}

async function run(database: Db, to?: string) {
  return retryingDroppedSchema(database, async () => {
    const recorded = await normalizeMigrationHistory(database);
    const m = migrator(database, unorderedGap(recorded, Object.keys(steps)));
    const { error, results } = await (to === undefined ? m.migrateToLatest() : m.migrateTo(to));
    if (error) throw error as Error;
    // A late one just recorded after later ones is put back in name order at once.
    if (results?.length) await normalizeMigrationHistory(database);
    return results ?? [];
  });
}

export async function migrateToLatest(database: Db): Promise<string[]> {
  // A newer release has migrated this database (its workers were upgraded first, README "Upgrading"):
  // its migrations only add, so this release runs on the database as it is. Kysely would refuse it
  // ("previously executed migration … is missing"), and an old process restarted mid-upgrade would stop.
  const { pending, unknown } = await migrationPlan(database);
  if (unknown.length) {
    if (pending.length)
      throw new Error(
        `the database was migrated by a newer release (${unknown.join(', ')}) but lacks ${pending.join(', ')}: upgrade this process`,
      );
    return [];
  }
  const results = await run(database).catch((e) => {
    throw e instanceof Error ? e : new Error(String(e));
  });
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Migrates up to and including `name` (tests of a migration's data rules). */
export async function migrateTo(database: Db, name: string): Promise<void> {
  await run(database, name).catch((e) => {
    throw e instanceof Error ? e : new Error(String(e));
  });
}

/** True when every migration in the code has run (readiness check). */
export async function migrationsCurrent(database: Db): Promise<boolean> {
  const all = await retryingDroppedSchema(database, () => migrator(database).getMigrations());
  return all.every((m) => m.executedAt !== undefined);
}

/**
 * What an upgrade to this code would do to the database, read without changing it (migrate --check):
 * the migrations not yet run, in order, and those recorded that this code does not know (the database
 * was migrated by a newer release).
 */
export async function migrationPlan(database: Db): Promise<{ pending: string[]; unknown: string[] }> {
  const recorded = new Set(await retryingDroppedSchema(database, () => recordedMigrations(database)));
  return {
    pending: MIGRATION_NAMES.filter((n) => !recorded.has(n)),
    unknown: [...recorded].filter((n) => !(n in steps)),
  };
}
