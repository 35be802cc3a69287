// `edu-gateway migrate --check` through the real CLI (SPEC §23): what an upgrade to this release would
// migrate, read without migrating anything; exit 2 when something is pending, 0 when nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openDatabase } from '../src/db/index.js';
import { MIGRATION_NAMES, migrateTo } from '../src/db/migrate.js';
import { runCli as cli } from './support/processes.js';

describe('migrate --check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'egw-check-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists the migrations an upgrade would run, exits 2 when any, and runs none', async () => {
    const url = `sqlite:${join(dir, 'old.db')}`;
    const last = MIGRATION_NAMES[MIGRATION_NAMES.length - 1];
    const previous = MIGRATION_NAMES[MIGRATION_NAMES.length - 2];
    const db = await openDatabase(url);
    await migrateTo(db, previous);
    await db.close();
    const pending = await cli({ DATABASE_URL: url }, 'migrate', '--check');
    assert.equal(pending.code, 2, pending.err);
    assert.equal(pending.out, `1 migrations pending:\n  ${last}\n`);
    const still = await cli({ DATABASE_URL: url }, 'migrate', '--check');
    assert.equal(still.out, pending.out, '--check migrated nothing');
    assert.equal((await cli({ DATABASE_URL: url }, 'migrate')).code, 0);
    const done = await cli({ DATABASE_URL: url }, 'migrate', '--check');
    assert.equal(done.code, 0);
    assert.equal(done.out, 'nothing to migrate\n');
  });
});
