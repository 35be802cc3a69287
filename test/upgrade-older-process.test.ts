// The upgrade promise (README "Upgrading", SPEC §23): a migration leaves the previous release's
// processes working until they are replaced. Here this release plays the previous one: its database
// was then migrated by a newer release (a migration it does not know, which adds a table and a column,
// as every migration since 006 only adds). A worker of this release started on it, as a restart in the
// middle of an upgrade would, runs without migrating and delivers; migrate --check names the newer one.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { SMTPServer } from 'smtp-server';
import { openDatabase } from '../src/db/index.js';
import { healthy, runCli, stopProcess, type Proc } from './support/processes.js';

describe('a process of the previous release on a database migrated by the next one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'egw-older-'));
  const url = `sqlite:${join(dir, 'db.sqlite')}`;
  const received: string[] = [];
  let smtp: SMTPServer;
  let smtpUrl = '';

  before(async () => {
    smtp = new SMTPServer({
      logger: false,
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, cb) {
        stream.resume();
        stream.on('end', () => {
          received.push(...session.envelope.rcptTo.map((r) => r.address));
          cb(null);
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((r) => smtp.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts without migrating, accepts and delivers; migrate --check names the newer migration', async () => {
    const demo = await runCli({ DATABASE_URL: url }, 'demo');
    assert.equal(demo.code, 0, demo.err);
    const key = /transactional \+ carts: (egw_live_\S+)/.exec(demo.out)![1];
    // The next release's migration, as it would leave the database: additive, and recorded.
    const db = await openDatabase(url);
    await sql`create table next_release_things (id integer primary key, note text)`.execute(db.db);
    await sql`alter table scheduled_emails add column next_release_note text`.execute(db.db);
    await sql`insert into kysely_migration (name, timestamp) values ('999_next_release', ${new Date().toISOString()})`.execute(
      db.db,
    );
    await db.close();

    const check = await runCli({ DATABASE_URL: url }, 'migrate', '--check');
    assert.equal(check.code, 0, check.err);
    assert.match(check.out, /migrated by a newer release \(999_next_release\)/);
    assert.match(check.out, /nothing to migrate/);

    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
      env: { ...process.env, DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'warn', SMTP_URL: smtpUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const port = await new Promise<number>((resolve, reject) => {
      const seen = (c: Buffer) => {
        out += String(c);
        const m = /API\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      };
      child.stdout.on('data', seen);
      child.stderr.on('data', seen);
      child.once('exit', () => reject(new Error(`serve refused the newer database:\n${out}`)));
    });
    const proc: Proc = { name: 'serve', child, port, out: () => out };
    try {
      await healthy(proc);
      const res = await fetch(`http://127.0.0.1:${port}/api/scoped/send/transactional`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key, prefer: 'respond-async' },
        body: JSON.stringify({
          event_type: 'contest_results',
          email: 'older@example.com',
          name: 'O',
          fields: { event_title: 'E', work_title: 'W' },
        }),
      });
      assert.equal(((await res.json()) as { status: string }).status, 'queued');
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(ready.status, 200, 'every migration this release knows has run');
      const deadline = Date.now() + 120_000;
      while (!received.includes('older@example.com')) {
        assert.ok(Date.now() < deadline, `the e-mail was delivered:\n${out}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      await stopProcess(proc);
    }
    const after = await openDatabase(url);
    const recorded = await sql<{
      name: string;
    }>`select name from kysely_migration where name = '999_next_release'`.execute(after.db);
    await after.close();
    assert.equal(recorded.rows.length, 1, 'the newer record is left as it was');
  });
});
