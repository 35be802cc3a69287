// `edu-gateway backup` and `restore` on PostgreSQL through the real CLI (SPEC §23): the pg_dump command
// printed without the password, run with --run, and pg_restore refusing to overwrite data without --force.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { dropSchema, openDatabase, schemaUrl } from '../src/db/index.js';
import { PG_URL } from './support/harness.js';
import { runCli as cli } from './support/processes.js';

describe(
  'backup and restore of PostgreSQL through the CLI',
  { skip: PG_URL ? false : 'TEST_DATABASE_URL not set' },
  () => {
    const schema = `backup_${process.pid}_${Date.now()}`;
    const dir = mkdtempSync(join(tmpdir(), 'egw-pgbackup-'));
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await dropSchema(PG_URL!, schema);
    });

    it('prints the pg_dump it would run without the password, runs it with --run, and restores with --force', async () => {
      const db = await openDatabase(PG_URL!, { schema });
      await db.close();
      const env = { DATABASE_URL: schemaUrl(PG_URL!, schema) };
      assert.equal((await cli(env, 'demo')).code, 0);
      const dump = join(dir, 'gateway.dump');
      const printed = await cli(
        { DATABASE_URL: env.DATABASE_URL.replace('postgres://', 'postgres://u:secret-pw@') },
        'backup',
        dump,
      );
      assert.equal(printed.code, 0, printed.err);
      assert.match(
        printed.out,
        /^PGPASSWORD=… pg_dump --format=custom --no-owner --file=\S+gateway\.dump --schema=backup_/,
      );
      assert.ok(!printed.out.includes('secret-pw'), 'the password is never printed');
      assert.ok(!existsSync(dump), 'without --run nothing is dumped');

      const ran = await cli(env, 'backup', '--run', dump);
      assert.equal(ran.code, 0, ran.err);
      assert.ok(existsSync(dump));

      const refused = await cli(env, 'restore', '--run', dump);
      assert.equal(refused.code, 1);
      assert.match(refused.err, /holds a gateway already/);

      // Lose the data, then restore it over what is left.
      const live = await openDatabase(env.DATABASE_URL);
      await live.db.deleteFrom('api_keys').execute();
      await live.close();
      const restored = await cli(env, 'restore', '--force', '--run', dump);
      assert.equal(restored.code, 0, restored.err);
      const back = await openDatabase(env.DATABASE_URL);
      const keys = await back.db.selectFrom('api_keys').select('id').execute();
      await back.close();
      assert.equal(keys.length, 4, 'the keys of the dump are back');
    });
  },
);
