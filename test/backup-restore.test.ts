// `edu-gateway backup` and `restore` of SQLite through the real CLI (SPEC §23): a backup taken while
// `serve` accepts and sends is a consistent database that restores and serves; restore refuses to
// overwrite data without --force. (PostgreSQL: backup-postgres.test.ts; --check: migrate-check.test.ts.)
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { openDatabase } from '../src/db/index.js';
import { MIGRATION_NAMES } from '../src/db/migrate.js';
import { hasExited, runCli } from './support/processes.js';

const CLI = ['--import', 'tsx', 'src/cli.ts'];
const cli = runCli;

async function serve(env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...CLI, 'serve'], {
    env: { ...process.env, LOG_LEVEL: 'warn', PORT: '0', ...env },
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
    child.once('exit', () => reject(new Error(`serve exited early:\n${out}`)));
  });
  return { child, port };
}

async function stop(child: ChildProcess): Promise<number | null> {
  // A child killed by a signal keeps exitCode null: waiting for its 'exit' again would never end.
  if (hasExited(child)) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

const send = (port: number, key: string, email: string) =>
  fetch(`http://127.0.0.1:${port}/api/scoped/send/transactional`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, prefer: 'respond-async' },
    body: JSON.stringify({
      event_type: 'contest_results',
      email,
      name: 'B',
      fields: { event_title: 'E', work_title: 'W' },
    }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as { status?: string } }));

describe('backup and restore of SQLite through the CLI, while serving', () => {
  const dir = mkdtempSync(join(tmpdir(), 'egw-backup-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'live.db')}`, ADMIN_TOKEN: 'backup-test-admin-token' };
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

  it('backs up while sending, refuses to restore over data, restores with --force, and the copy serves', async () => {
    const demo = await cli(env, 'demo');
    assert.equal(demo.code, 0, demo.err);
    const key = /transactional \+ carts: (egw_live_\S+)/.exec(demo.out)![1];
    const live = await serve({ ...env, SMTP_URL: smtpUrl });
    const copy = join(dir, 'copy.db');
    try {
      // Events keep arriving (and e-mails keep going out) while the backup is taken.
      let sending = true;
      let sent = 0;
      const traffic = (async () => {
        while (sending) {
          const r = await send(live.port, key, `load${sent}@example.com`);
          assert.equal(r.body.status, 'queued', JSON.stringify(r.body));
          sent++;
        }
      })();
      while (sent < 5) await new Promise((r) => setTimeout(r, 50));
      const b = await cli(env, 'backup', copy);
      sending = false;
      await traffic;
      assert.equal(b.code, 0, b.err);
      assert.match(
        b.out,
        new RegExp(`backup written: .*copy\\.db \\(\\d+ bytes, ${MIGRATION_NAMES.length} migrations`),
      );
      assert.ok(sent > 5, 'events were accepted during the backup');

      const again = await cli(env, 'backup', copy);
      assert.equal(again.code, 1);
      assert.match(again.err, /exists: choose another name, or --force/);

      // The copy is one consistent moment: every accepted event there has its e-mail, and it is current.
      const db = await openDatabase(`sqlite:${copy}`);
      const emails = await db.db
        .selectFrom('scheduled_emails')
        .select((e) => e.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      await db.close();
      assert.ok(Number(emails.n) >= 5, `the copy holds the e-mails accepted before it (${emails.n})`);
      const check = await cli({ DATABASE_URL: `sqlite:${copy}` }, 'migrate', '--check');
      assert.equal(check.code, 0, check.out + check.err);
      assert.match(check.out, /nothing to migrate/);
    } finally {
      assert.equal(await stop(live.child), 0);
    }

    const refused = await cli(env, 'restore', copy);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /holds data: stop the gateway, then restore with --force/);
    const restored = await cli(env, 'restore', '--force', copy);
    assert.equal(restored.code, 0, restored.err);
    assert.match(restored.out, /restored .*live\.db from .*copy\.db/);

    // The restored database serves: the key stored in it works and an e-mail goes out.
    const again = await serve({ ...env, SMTP_URL: smtpUrl });
    try {
      const r = await send(again.port, key, 'after-restore@example.com');
      assert.equal(r.body.status, 'queued');
      const deadline = Date.now() + 120_000;
      while (!received.includes('after-restore@example.com')) {
        assert.ok(Date.now() < deadline, 'the e-mail accepted after the restore was delivered');
        await new Promise((res) => setTimeout(res, 200));
      }
    } finally {
      assert.equal(await stop(again.child), 0);
    }
  });

  it('restore refuses a file that is not a backup of the gateway', async () => {
    const r = await cli({ DATABASE_URL: `sqlite:${join(dir, 'other.db')}` }, 'restore', join(dir, 'missing.db'));
    assert.equal(r.code, 1);
    assert.match(r.err, /no backup at/);
  });
});
