// `edu-gateway backup FILE`, `restore FILE` and `migrate --check` (SPEC §23): what an operator runs
// around an upgrade. None of them migrates: a backup is taken before the new release touches the
// database, and --check only reads.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Config } from './config.js';
import { isPostgresUrl, openDatabase } from './db/index.js';
import { MIGRATION_NAMES, migrationPlan } from './db/migrate.js';

export const BACKUP_USAGE = `  backup FILE [--force] [--run]
                             SQLite: a consistent copy while the gateway runs (VACUUM INTO);
                             PostgreSQL: prints the pg_dump command (--run runs it)
  restore FILE [--force] [--run]
                             SQLite: the database replaced by FILE (stop the gateway first; a database
                             that holds data needs --force); PostgreSQL: prints (or --run runs) pg_restore
  migrate --check            list the migrations an upgrade to this release would run (exit 2 when any)`;

/** `sqlite:PATH` → PATH (the same rule as openDatabase). */
const sqlitePath = (url: string) => url.replace(/^sqlite:/, '');

/** PostgreSQL connection as the libpq tools take it: the URL without its password, which goes in PGPASSWORD. */
function pgTarget(url: string): { url: string; password: string | null; schema: string | null } {
  const u = new URL(url);
  const password = u.password ? decodeURIComponent(u.password) : null;
  u.password = '';
  // A schema given as search_path in the URL's options (how the tests and a shared server separate data).
  const schema = /search_path=("?)([^"\s&]+)\1/.exec(u.searchParams.get('options') ?? '')?.[2] ?? null;
  return { url: u.toString(), password, schema };
}

const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

function runOrPrint(tool: string, args: string[], password: string | null, run: boolean): number {
  const line = [tool, ...args].map(quote).join(' ');
  if (!run) {
    console.log(
      `${password ? 'PGPASSWORD=… ' : ''}${line}\n(the password is DATABASE_URL's; add --run to run it here, or run it where ${tool} is installed, e.g. the postgres container)`,
    );
    return 0;
  }
  console.error(`running: ${line}`);
  const r = spawnSync(tool, args, {
    stdio: 'inherit',
    env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) },
  });
  if (r.error) throw new Error(`${tool} could not be started: ${r.error.message}`);
  return r.status ?? 1;
}

async function openSqlite(path: string, options: { readonly?: boolean } = {}) {
  const { default: SQLite } = await import('better-sqlite3');
  return new SQLite(path, { fileMustExist: true, ...options });
}

/** Tables in a SQLite file, and whether it is a gateway's (it has the migration record). */
async function sqliteContents(path: string): Promise<{ tables: number; migrations: number }> {
  const conn = await openSqlite(path, { readonly: true });
  try {
    const tables = (conn.prepare(`select count(*) n from sqlite_master where type = 'table'`).get() as { n: number }).n;
    const hasRecord = conn
      .prepare(`select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'`)
      .get();
    const migrations = hasRecord
      ? (conn.prepare('select count(*) n from kysely_migration').get() as { n: number }).n
      : 0;
    return { tables, migrations };
  } finally {
    conn.close();
  }
}

async function backup(config: Config, file: string, flags: { force: boolean; run: boolean }): Promise<number> {
  if (isPostgresUrl(config.databaseUrl)) {
    const t = pgTarget(config.databaseUrl);
    const args = ['--format=custom', '--no-owner', `--file=${file}`];
    if (t.schema) args.push(`--schema=${t.schema}`);
    return runOrPrint('pg_dump', [...args, `--dbname=${t.url}`], t.password, flags.run);
  }
  const source = sqlitePath(config.databaseUrl);
  if (!existsSync(source)) throw new Error(`no database at ${source} (DATABASE_URL)`);
  if (existsSync(file) && !flags.force) throw new Error(`${file} exists: choose another name, or --force`);
  // VACUUM INTO reads the database in one read transaction (a WAL snapshot) while the gateway goes on
  // writing, so the copy is one consistent moment. SQLite's page-by-page backup API starts over whenever
  // another connection writes, and under steady traffic it never finished (seen in CI).
  if (existsSync(file)) rmSync(file);
  const conn = await openSqlite(source, { readonly: true });
  try {
    conn.pragma('busy_timeout = 10000');
    conn.prepare('VACUUM INTO ?').run(file);
  } finally {
    conn.close();
  }
  const check = await openSqlite(file, { readonly: true });
  const ok = (check.pragma('quick_check', { simple: true }) as string) === 'ok';
  check.close();
  if (!ok) throw new Error(`the copy at ${file} failed SQLite's quick_check`);
  const { migrations } = await sqliteContents(file);
  console.log(`backup written: ${file} (${statSync(file).size} bytes, ${migrations} migrations recorded)`);
  return 0;
}

async function restore(config: Config, file: string, flags: { force: boolean; run: boolean }): Promise<number> {
  if (!existsSync(file)) throw new Error(`no backup at ${file}`);
  if (isPostgresUrl(config.databaseUrl)) {
    const t = pgTarget(config.databaseUrl);
    const db = await openDatabase(config.databaseUrl);
    const { pending } = await migrationPlan(db).finally(() => db.close());
    // No migration recorded: no gateway has used this database (or schema) yet.
    const empty = pending.length === MIGRATION_NAMES.length;
    if (!empty && !flags.force)
      throw new Error('the database holds a gateway already: restore into an empty one, or --force (replaces it)');
    const args = ['--no-owner', '--exit-on-error', ...(flags.force ? ['--clean', '--if-exists'] : [])];
    return runOrPrint('pg_restore', [...args, `--dbname=${t.url}`, file], t.password, flags.run);
  }
  const target = sqlitePath(config.databaseUrl);
  const backupContents = await sqliteContents(file).catch(() => null);
  if (!backupContents?.migrations) throw new Error(`${file} is not a backup of this gateway (no migration record)`);
  if (existsSync(target) && statSync(target).size > 0 && (await sqliteContents(target)).tables > 0 && !flags.force)
    throw new Error(`${target} holds data: stop the gateway, then restore with --force (it replaces that database)`);
  // The backup API again, in the other direction: the target is written through SQLite (its -wal and
  // -shm files stay consistent with it), never by copying files over a database.
  const conn = await openSqlite(file, { readonly: true });
  try {
    await conn.backup(target);
  } finally {
    conn.close();
  }
  const db = await openDatabase(config.databaseUrl);
  const { pending } = await migrationPlan(db).finally(() => db.close());
  console.log(
    `restored ${target} from ${file}` +
      (pending.length ? `; ${pending.length} migrations pending (the gateway runs them on start)` : ''),
  );
  return 0;
}

async function check(config: Config): Promise<number> {
  const db = await openDatabase(config.databaseUrl);
  const { pending, unknown } = await migrationPlan(db).finally(() => db.close());
  if (unknown.length)
    console.log(
      `the database was migrated by a newer release (${unknown.join(', ')}): this release does not know them`,
    );
  if (!pending.length) {
    console.log('nothing to migrate');
    return 0;
  }
  console.log(`${pending.length} migrations pending:`);
  for (const name of pending) console.log(`  ${name}`);
  return 2;
}

/** Runs the command; its exit code, or null when it is not one of these. */
export async function backupCommand(config: Config, cmd: string, args: string[]): Promise<number | null> {
  if (cmd !== 'backup' && cmd !== 'restore' && !(cmd === 'migrate' && args.includes('--check'))) return null;
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { force: { type: 'boolean' }, run: { type: 'boolean' }, check: { type: 'boolean' } },
  });
  const flags = { force: values.force ?? false, run: values.run ?? false };
  if (cmd === 'migrate') return check(config);
  const file = positionals[0];
  if (!file || positionals.length > 1) throw new Error(`${cmd} needs one FILE`);
  return cmd === 'backup' ? backup(config, file, flags) : restore(config, file, flags);
}
