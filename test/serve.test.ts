// The real process: `serve` starts API and worker, delivers through SMTP, and on SIGTERM finishes the
// send in flight before exiting.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { SMTPServer } from 'smtp-server';
import { openDatabase } from '../src/db/index.js';

const run = promisify(execFile);

describe('serve as a process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'egw-serve-'));
  const env = {
    ...process.env,
    DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`,
    ADMIN_TOKEN: 'serve-test-admin-token',
    PORT: '0',
    LOG_LEVEL: 'info',
  };
  let smtp: SMTPServer;
  let smtpPort = 0;
  let received = 0;
  let dataStarted: () => void = () => {};
  const dataSeen = new Promise<void>((r) => (dataStarted = r));

  before(async () => {
    // Holds every message 1.5 s before accepting it: the shutdown has to wait for that answer.
    smtp = new SMTPServer({
      logger: false,
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, _s, cb) {
        stream.resume();
        stream.on('end', () => {
          dataStarted();
          setTimeout(() => {
            received++;
            cb(null);
          }, 1500);
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    smtpPort = (smtp.server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise<void>((r) => smtp.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers, and a SIGTERM during a send lets it finish, then exits 0', async () => {
    const demo = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'demo'], { env });
    const key = /transactional \+ carts: (egw_live_\S+)/.exec(demo.stdout)![1];
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
      env: { ...env, SMTP_URL: `smtp://127.0.0.1:${smtpPort}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.on('data', (c) => {
        out += String(c);
        const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', () => reject(new Error(`serve exited early:\n${out}`)));
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const res = await fetch(`http://127.0.0.1:${port}/api/scoped/send/transactional`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, prefer: 'respond-async' },
      body: JSON.stringify({
        event_type: 'contest_results',
        email: 'term@example.com',
        name: 'T',
        fields: { event_title: 'E', work_title: 'W' },
      }),
    });
    const body = (await res.json()) as { scheduled_email_id: number; status: string };
    assert.equal(body.status, 'queued');
    await dataSeen;
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.equal(received, 1, 'the message in flight was finished, not abandoned');
    assert.ok(!out.includes(key), 'the key never reaches the log');
    const db = await openDatabase(env.DATABASE_URL);
    const row = await db.db
      .selectFrom('scheduled_emails')
      .select(['status', 'attempts'])
      .where('id', '=', body.scheduled_email_id)
      .executeTakeFirstOrThrow();
    await db.close();
    assert.equal(row.status, 'sent');
  });
});
