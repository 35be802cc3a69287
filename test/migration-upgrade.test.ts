// An upgrade from a database made by main before the migrations were renumbered (fixtures in
// test/fixtures/upgrade/, README there): no migration runs again, the recorded names become the new
// ones, every row is kept, and the gateway serves the old data and takes new requests. Also the record
// of a database that took two migrations out of number order, as main's merges allowed. On each database.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { dropSchema, openDatabase, type Db } from '../src/db/index.js';
import { MIGRATION_NAMES, migrateToLatest, migrationsCurrent } from '../src/db/migrate.js';
import { RENAMED_MIGRATIONS } from '../src/db/migrationHistory.js';
import { buildApp } from '../src/http/app.js';
import { ADMIN_TOKEN, REPLAY_RIGHTS, adminCall, DIALECTS, keyCall, ManualClock, PG_URL } from './support/harness.js';
import { ownTableNames } from './support/tables.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'upgrade');
/** The schema name the PostgreSQL dump was taken from (README). */
const DUMPED_SCHEMA = 'upgrade_fixture';
/** The SECRET_KEY the fixtures were made with: stored secrets must still open. */
const SECRET_KEY = 'upgrade-fixture-secret-key-0123456789';

async function loadFixture(dialect: 'sqlite' | 'postgres'): Promise<{ db: Db; cleanup(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'egw-upgrade-'));
    copyFileSync(join(FIXTURES, 'main-85fdca6.sqlite'), join(dir, 'old.db'));
    const db = await openDatabase(`sqlite:${join(dir, 'old.db')}`);
    return { db, cleanup: async () => (await db.close(), rmSync(dir, { recursive: true, force: true })) };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  // A plain pg_dump: psql's meta-commands (\restrict) are not SQL; the schema takes this test's name.
  const dump = readFileSync(join(FIXTURES, 'main-85fdca6.pg.sql'), 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('\\'))
    .join('\n')
    .replaceAll(DUMPED_SCHEMA, schema);
  const client = new pg.Client({ connectionString: PG_URL! });
  await client.connect();
  await client.query(dump);
  await client.end();
  const db = await openDatabase(PG_URL!, { schema });
  return { db, cleanup: async () => (await db.close(), await dropSchema(PG_URL!, schema)) };
}

/** Every row of every table but the migration record, in a stable order. */
async function contents(database: Db): Promise<Record<string, string[]>> {
  const tables = (await ownTableNames(database)).filter((n) => !n.startsWith('kysely_migration'));
  const out: Record<string, string[]> = {};
  for (const name of tables) {
    const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(database.db)).rows;
    out[name] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

/** Migrations newer than the fixture (it holds 21): they run on the upgrade, once. */
const NEWER = MIGRATION_NAMES.slice(21);

/** `now` as far as `before` goes: its tables, and their rows without the columns newer migrations added. */
function asBefore(now: Record<string, string[]>, before: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(
    Object.keys(before).map((name) => {
      const columns = before[name].length ? Object.keys(JSON.parse(before[name][0]) as object) : null;
      const rows = (now[name] ?? []).map((r) =>
        columns
          ? JSON.stringify(Object.fromEntries(columns.map((c) => [c, (JSON.parse(r) as Record<string, unknown>)[c]])))
          : r,
      );
      return [name, rows.sort()];
    }),
  );
}

const history = async (database: Db) =>
  (
    await sql<{ name: string; timestamp: string }>`select name, timestamp from kysely_migration order by name`.execute(
      database.db,
    )
  ).rows;

for (const d of DIALECTS) {
  describe(`upgrade from a database made by main 85fdca6 [${d.name}]`, { skip: d.skip }, () => {
    let t: Awaited<ReturnType<typeof loadFixture>>;
    let before_: Record<string, string[]>;
    let app: Awaited<ReturnType<typeof buildApp>>;

    before(async () => {
      t = await loadFixture(d.name);
      before_ = await contents(t.db);
    });
    after(async () => {
      await app?.close();
      await t?.cleanup();
    });

    it('the fixture is what main made: old names, 010b and two 006s among them', async () => {
      const names = (await history(t.db)).map((r) => r.name);
      assert.equal(names.length, 21);
      for (const old of ['006_inputs', '006_project_locale', '010b_webhook_outbox', '020_project_private_webhooks'])
        assert.ok(names.includes(old), old);
      assert.equal(await migrationsCurrent(t.db), false, 'under the old names the record is not current');
      assert.ok(before_.contacts.length >= 3 && before_.projects.length === 2 && before_.admin_users.length === 1);
    });

    it('runs no migration again, records the new names, keeps every row; a second start changes nothing', async () => {
      const old = await history(t.db);
      assert.deepEqual(await migrateToLatest(t.db), NEWER, 'no migration ran again, the newer ones once');
      const now = await history(t.db);
      assert.deepEqual(
        now.map((r) => r.name),
        [...MIGRATION_NAMES],
      );
      const renamedFrom = (name: string) => Object.keys(RENAMED_MIGRATIONS).find((o) => RENAMED_MIGRATIONS[o] === name);
      for (const r of now.filter((x) => !NEWER.includes(x.name))) {
        const was = old.find((o) => o.name === (renamedFrom(r.name) ?? r.name));
        assert.ok(was, `${r.name} was recorded before, under its old name`);
      }
      assert.equal(await migrationsCurrent(t.db), true);
      assert.deepEqual(asBefore(await contents(t.db), before_), before_, 'every row of every table is as main left it');
      assert.deepEqual(await migrateToLatest(t.db), []);
      assert.deepEqual(await history(t.db), now, 'idempotent');
    });

    it('the gateway serves the old data and takes new requests', async () => {
      const config = loadConfig({ ADMIN_TOKEN, SEND_WAIT_MS: '0', SECRET_KEY, WEBHOOKS_ALLOW_PRIVATE: '1' });
      app = await buildApp({ db: t.db, config, clock: new ManualClock(Date.UTC(2026, 10, 26)) });
      const projects = (await adminCall(app, 'GET', '/api/admin/projects')).body.items;
      assert.deepEqual(projects.map((p: { site_key: string }) => p.site_key).sort(), ['demo-courses', 'site1']);
      const site1 = projects.find((p: { site_key: string }) => p.site_key === 'site1');
      assert.equal(site1.allow_private_webhooks, true);
      const hooks = await adminCall(app, 'GET', '/api/admin/projects/site1/webhooks');
      assert.equal(hooks.status, 200);
      assert.deepEqual(
        hooks.body.items.map((h: { description: string }) => h.description),
        ['orders'],
      );
      const users = (await adminCall(app, 'GET', '/api/admin/users')).body.items;
      assert.ok(users.some((u: { email: string }) => u.email === 'editor@example.com'));
      const key = await adminCall(app, 'POST', '/api/admin/keys', {
        site_key: 'site1',
        name: 'after',
        rights: REPLAY_RIGHTS,
      });
      assert.equal(key.status, 201, JSON.stringify(key.body));
      const sent = await keyCall(app, key.body.key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
        email: 'anna@example.com',
        order_id: 'K-2',
        idempotency_key: 'k-K-2',
        fields: { event_title: 'Autumn', work_title: 'Essay', place: '2' },
      });
      assert.ok(sent.status < 300, JSON.stringify(sent.body));
      const contacts = (await contents(t.db)).contacts;
      assert.equal(contacts.length, before_.contacts.length, 'anna was a contact already: no second row');
    });
  });

  describe(`a database that took migrations out of number order [${d.name}]`, { skip: d.skip }, () => {
    let t: Awaited<ReturnType<typeof loadFixture>>;
    before(async () => (t = await loadFixture(d.name)));
    after(async () => await t?.cleanup());

    it('is read in number order after the upgrade and starts again and again', async () => {
      // Main merged 016_template_contract before 015_hand_over: a database of that day took them so.
      const [contract] = (await history(t.db)).filter((r) => r.name === '016_template_contract');
      const later = new Date(Date.parse(contract.timestamp) + 60_000).toISOString();
      await sql`update kysely_migration set timestamp = ${later} where name = '015_hand_over'`.execute(t.db.db);
      assert.deepEqual(await migrateToLatest(t.db), NEWER);
      assert.deepEqual(
        (await history(t.db)).map((r) => r.name),
        [...MIGRATION_NAMES],
      );
      assert.deepEqual(await migrateToLatest(t.db), []);
      assert.equal(await migrationsCurrent(t.db), true);
    });
  });
}
