// Databases made before the migrations were numbered strictly (issue 23) recorded them under their old
// names, and in the order each database happened to take them (features were merged out of number
// order while unordered migrations were allowed). Before Kysely's migrator, which now requires strict
// order, reads that record, this rewrites it to the new names and order: in one transaction, and
// idempotently (a second run finds nothing to change). The migrations themselves are not run again.
import { sql, type Kysely } from 'kysely';
import type { Db } from './index.js';

/** Old name → new name of every migration the renumbering renamed (001…006_inputs kept their names). */
export const RENAMED_MIGRATIONS: Readonly<Record<string, string>> = {
  '006_project_locale': '007_project_locale',
  '007_delivery_settings': '008_delivery_settings',
  '008_admin_accounts': '009_admin_accounts',
  '009_bounces': '010_bounces',
  '010_site_webhooks': '011_site_webhooks',
  '010b_webhook_outbox': '012_webhook_outbox',
  '012_marketing_pause': '013_marketing_pause',
  '013_audit_token': '014_audit_token',
  '014_template_topic_tracking': '015_template_topic_tracking',
  '015_hand_over': '016_hand_over',
  '016_template_contract': '017_template_contract',
  '017_tracking': '018_tracking',
  '018_consent': '019_consent',
  '019_project_reply_to': '020_project_reply_to',
  '020_project_private_webhooks': '021_project_private_webhooks',
};

/** The last migration of the unordered era: only these may have run out of order. */
export const LAST_UNORDERED = '021_project_private_webhooks';

interface Row {
  name: string;
  timestamp: string;
}

const table = (database: Db) => sql.table(database.schema ? `${database.schema}.kysely_migration` : 'kysely_migration');

async function hasHistory(database: Db): Promise<boolean> {
  const found =
    database.dialect === 'postgres'
      ? await sql`select 1 from information_schema.tables where table_schema = ${database.schema ?? 'public'}
          and table_name = 'kysely_migration'`.execute(database.db)
      : await sql`select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'`.execute(database.db);
  return found.rows.length > 0;
}

/** Kysely reads the record ordered by timestamp, then name. */
const recordedOrder = (rows: Row[]) =>
  [...rows]
    .sort((a, b) => (a.timestamp === b.timestamp ? a.name.localeCompare(b.name) : a.timestamp < b.timestamp ? -1 : 1))
    .map((r) => r.name);

/**
 * Renames old entries and, where migrations of the unordered era were recorded out of name order, gives
 * those entries one timestamp (their latest) so that Kysely reads them in name order. Returns the
 * names recorded afterwards.
 */
export async function normalizeMigrationHistory(database: Db): Promise<string[]> {
  if (!(await hasHistory(database))) return [];
  return database.db.transaction().execute(async (trx: Kysely<any>) => {
    const t = table(database);
    let rows = (await sql<Row>`select name, timestamp from ${t}`.execute(trx)).rows;
    const old = rows.filter((r) => RENAMED_MIGRATIONS[r.name] !== undefined);
    for (const r of old) {
      await sql`update ${t} set name = ${RENAMED_MIGRATIONS[r.name]} where name = ${r.name}`.execute(trx);
    }
    if (old.length) rows = rows.map((r) => ({ ...r, name: RENAMED_MIGRATIONS[r.name] ?? r.name }));
    const early = rows.filter((r) => r.name <= LAST_UNORDERED);
    const order = recordedOrder(early);
    if (order.some((name, i) => name !== [...order].sort()[i])) {
      const latest = early.map((r) => r.timestamp).sort()[early.length - 1];
      await sql`update ${t} set timestamp = ${latest} where name <= ${LAST_UNORDERED}`.execute(trx);
    }
    return rows.map((r) => r.name);
  });
}

/**
 * True when a migration of the unordered era never ran although a later one did (a database made at a
 * commit where the later one had been merged first): that one run is allowed out of order.
 */
export function unorderedGap(recorded: string[], known: string[]): boolean {
  const done = new Set(recorded);
  const last = [...recorded].sort().at(-1);
  if (last === undefined) return false;
  const missing = known.filter((n) => n < last && !done.has(n));
  return missing.length > 0 && missing.every((n) => n <= LAST_UNORDERED);
}

/** The migrations a database has recorded, under their current names; nothing is changed (migrate --check). */
export async function recordedMigrations(database: Db): Promise<string[]> {
  if (!(await hasHistory(database))) return [];
  const rows = (await sql<Row>`select name, timestamp from ${table(database)}`.execute(database.db)).rows;
  return rows.map((r) => RENAMED_MIGRATIONS[r.name] ?? r.name).sort();
}
