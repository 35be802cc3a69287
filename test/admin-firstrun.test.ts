// First run (SPEC §14): with no account and no ADMIN_TOKEN, `serve` prints a one-time setup link; the
// first owner is created through it once. Also the CLI's create-owner and reset-password.
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { PASSWORD } from './support/accounts.js';
import { PG_URL } from './support/harness.js';
import { dropSchema, openDatabase, schemaUrl } from '../src/db/index.js';
import { randomBytes } from 'node:crypto';

const CLI = ['--import', 'tsx', 'src/cli.ts'];

async function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json(), headers: r.headers };
}

describe('first run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'egw-firstrun-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('serve prints where things are and a one-time setup link that creates the first owner once', async () => {
    const env = {
      ...process.env,
      DATABASE_URL: `sqlite:${join(dir, 'first.db')}`,
      PORT: '0',
      ADMIN_TOKEN: '',
      LOG_LEVEL: 'info',
    };
    const child = spawn(process.execPath, [...CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let logs = '';
    child.stdout.on('data', (c) => (logs += String(c)));
    try {
      const link = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (c) => {
          out += String(c);
          const m = /(http:\/\/\S+)\/ui\/setup\?code=(\S+)/.exec(out);
          if (m) resolve(m[0]);
        });
        child.once('exit', () => reject(new Error(`serve exited early:\n${out}`)));
      });
      assert.match(out, /API\s+http:\/\/127\.0\.0\.1:\d+\/api\//);
      assert.match(out, /UI\s+http:\/\/127\.0\.0\.1:\d+\/ui\//);
      assert.match(out, /Docs\s+http:\/\/127\.0\.0\.1:\d+\/docs/);
      const url = new URL(link);
      const base = url.origin;
      const code = url.searchParams.get('code')!;
      // The page opens; its request (with the code) is not in the logs.
      assert.equal((await fetch(link)).status, 200);
      // Nothing else gets in before the owner exists.
      assert.equal((await fetch(`${base}/api/admin/projects`)).status, 401);
      const wrong = await post(base, '/api/admin/setup', {
        code: 'x'.repeat(32),
        email: 'owner@school.example',
        password: PASSWORD,
      });
      assert.equal(wrong.status, 404);
      const weak = await post(base, '/api/admin/setup', { code, email: 'owner@school.example', password: 'short' });
      assert.equal(weak.status, 422);
      const made = await post(base, '/api/admin/setup', { code, email: 'Owner@School.example', password: PASSWORD });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      assert.equal(made.body.user.role, 'owner');
      assert.equal(made.body.user.email, 'owner@school.example');
      const again = await post(base, '/api/admin/setup', { code, email: 'second@school.example', password: PASSWORD });
      assert.equal(again.status, 404, 'a setup link works once');
      const login = await post(base, '/api/admin/session', { email: 'owner@school.example', password: PASSWORD });
      assert.equal(login.status, 200);
      assert.equal(login.body.account.role, 'owner');
      assert.ok(!logs.includes(code), 'the setup code is not in the logs');
      assert.ok(!logs.includes(PASSWORD), 'the password is not in the logs');
      assert.ok(logs.includes('"msg"'), 'logs are JSON when not on a terminal');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });

  it('serve with an account already made prints no setup link', async () => {
    const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'first.db')}`, PORT: '0', ADMIN_TOKEN: '' };
    const child = spawn(process.execPath, [...CLI, 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let out = '';
    try {
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (c) => {
          out += String(c);
          if (/Docs\s+http/.test(out)) resolve();
        });
        child.once('exit', () => reject(new Error(`serve exited early:\n${out}`)));
      });
      assert.doesNotMatch(out, /setup\?code=/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(
    `CLI admin commands [${dialect}]`,
    { skip: dialect === 'postgres' && !PG_URL ? 'TEST_DATABASE_URL is not set' : false },
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'egw-cli-admin-'));
      const schema = `t_${randomBytes(6).toString('hex')}`;
      const url = dialect === 'postgres' ? schemaUrl(PG_URL!, schema) : `sqlite:${join(dir, 'cli.db')}`;
      after(async () => {
        rmSync(dir, { recursive: true, force: true });
        if (dialect === 'postgres') await dropSchema(PG_URL!, schema);
      });
      const cli = (args: string[], input?: string) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          const child = execFile(
            process.execPath,
            [...CLI, ...args],
            { env: { ...process.env, DATABASE_URL: url, ADMIN_TOKEN: '' } },
            (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
          );
          child.stdin!.end(input ?? '');
        });

      it('create-owner, reset-password, and the audit rows they leave', async () => {
        if (dialect === 'postgres') {
          const db = await openDatabase(PG_URL!, { schema });
          await db.close();
        }
        const made = await cli(
          ['admin', 'create-owner', '--email', 'root@school.example', '--password-stdin'],
          `${PASSWORD}\n`,
        );
        assert.equal(made.code, 0, made.stderr);
        assert.match(made.stdout, /owner root@school\.example created/);
        const dup = await cli(
          ['admin', 'create-owner', '--email', 'root@school.example', '--password-stdin'],
          `${PASSWORD}\n`,
        );
        assert.notEqual(dup.code, 0);
        assert.match(dup.stderr, /already exists/);
        const weak = await cli(
          ['admin', 'create-owner', '--email', 'b@school.example', '--password-stdin'],
          'password123\n',
        );
        assert.notEqual(weak.code, 0);
        assert.match(weak.stderr, /too common/);
        const reset = await cli(
          ['admin', 'reset-password', '--email', 'root@school.example', '--password-stdin'],
          'another long password\n',
        );
        assert.equal(reset.code, 0, reset.stderr);
        const unknown = await cli(
          ['admin', 'reset-password', '--email', 'nobody@school.example', '--password-stdin'],
          'another long password\n',
        );
        assert.notEqual(unknown.code, 0);
        const noPipe = await cli(['admin', 'create-owner', '--email', 'c@school.example']);
        assert.notEqual(noPipe.code, 0);
        assert.match(noPipe.stderr, /password-stdin/);

        const db = await openDatabase(url);
        try {
          const rows = await db.db.selectFrom('audit_log').selectAll().orderBy('id').execute();
          assert.deepEqual(
            rows.map((r) => [r.via, r.action]),
            [
              ['cli', 'user.create'],
              ['cli', 'user.password'],
            ],
          );
          for (const r of rows) assert.ok(!JSON.stringify(r).includes('another long password'));
          const user = await db.db.selectFrom('admin_users').selectAll().executeTakeFirstOrThrow();
          assert.match(user.password_hash, /^scrypt\$32768\$8\$1\$/);
        } finally {
          await db.close();
        }
      });
    },
  );
}
