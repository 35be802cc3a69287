// SIGTERM to a real `serve` process (SPEC §23, what `docker stop` and `systemctl stop` send): a request in
// flight is answered, the send in flight finishes, e-mails the worker had claimed but not started are
// handed back (no lease left for the next process to wait out), and the process exits 0.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { SMTPServer } from 'smtp-server';
import { dropSchema, openDatabase, schemaUrl } from '../src/db/index.js';
import { DIALECTS, PG_URL } from './support/harness.js';

const run = promisify(execFile);
const CLI = ['--import', 'tsx', 'src/cli.ts'];

// SQLite only: the release of claims is the same statement on PostgreSQL, and two real processes with
// their demos do not fit one test file's time limit on a loaded machine.
for (const d of DIALECTS.filter((c) => c.name === 'sqlite')) {
  describe(`serve on SIGTERM [${d.name}]`, { skip: d.skip }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'egw-sigterm-'));
    const schema = `sigterm_${process.pid}_${Date.now()}`;
    const url = d.name === 'sqlite' ? `sqlite:${join(dir, 'db.sqlite')}` : schemaUrl(PG_URL!, schema);
    const env = { ...process.env, DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'info', SEND_WAIT_MS: '20000' };
    let smtp: SMTPServer;
    let smtpPort = 0;
    let received = 0;
    let firstData: () => void = () => {};
    const dataSeen = new Promise<void>((r) => (firstData = r));

    before(async () => {
      if (d.name === 'postgres') await (await openDatabase(PG_URL!, { schema })).close();
      // Holds every message 2 s before accepting it: the shutdown has to wait for that answer.
      smtp = new SMTPServer({
        logger: false,
        authOptional: true,
        disabledCommands: ['STARTTLS', 'AUTH'],
        onData(stream, _s, cb) {
          stream.resume();
          stream.on('end', () => {
            firstData();
            setTimeout(() => {
              received++;
              cb(null);
            }, 2000);
          });
        },
      });
      await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
      smtpPort = (smtp.server.address() as AddressInfo).port;
    });
    after(async () => {
      await new Promise<void>((r) => smtp.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
      if (d.name === 'postgres') await dropSchema(PG_URL!, schema);
    });

    it('answers the request in flight, finishes the send, hands claimed e-mails back and exits 0', async () => {
      const demo = await run(process.execPath, [...CLI, 'demo'], { env });
      const key = /transactional \+ carts: (egw_live_\S+)/.exec(demo.stdout)![1];
      const child = spawn(process.execPath, [...CLI, 'serve'], {
        env: { ...env, SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, SMTP_POOL_SIZE: '1' },
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
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      const send = (email: string, async: boolean) =>
        fetch(`http://127.0.0.1:${port}/api/scoped/send/transactional`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-api-key': key,
            ...(async ? { prefer: 'respond-async' } : {}),
          },
          body: JSON.stringify({
            event_type: 'contest_results',
            email,
            name: 'T',
            fields: { event_title: 'E', work_title: 'W' },
          }),
        });
      // Several e-mails queued: one is being sent (held by the relay), the others claimed or waiting.
      for (let i = 0; i < 6; i++) assert.equal((await send(`q${i}@example.com`, true)).status, 200);
      await dataSeen;
      // A request that waits for its delivery (SEND_WAIT_MS): in flight when the signal comes.
      const inFlight = send('waiting@example.com', false).then(
        async (r) => ({ status: r.status, body: (await r.json()) as { status: string } }),
        (err: Error) => ({ status: 0, body: { status: `failed: ${err.message}` } }),
      );
      await new Promise((r) => setTimeout(r, 500));
      child.kill('SIGTERM');
      const answer = await inFlight;
      assert.equal(answer.status, 200, `the request in flight was answered: ${JSON.stringify(answer.body)}`);
      assert.equal(await exited, 0, out);
      assert.ok(received >= 1, 'the send in flight was finished, not abandoned');
      assert.match(out, /SIGTERM: finishing in-flight work, then exiting/);

      const db = await openDatabase(url);
      const rows = await db.db.selectFrom('scheduled_emails').select(['status', 'locked_by']).execute();
      await db.close();
      assert.equal(rows.length, 7);
      assert.deepEqual(
        // locked_by stays on sent rows as a record of who sent them; only an unfinished one must be free.
        rows.filter((r) => r.status === 'sending' || (r.status !== 'sent' && r.locked_by !== null)),
        [],
        'no e-mail is left leased to the stopped process',
      );
      assert.equal(rows.filter((r) => r.status === 'sent').length, received);
    });
  });
}
