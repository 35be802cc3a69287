// The CLI as an operator runs it: demo twice, keys create/list/disable, a bad configuration value.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { DIALECTS, PG_URL } from './support/harness.js';
import { dropSchema, schemaUrl } from '../src/db/index.js';

const run = promisify(execFile);
const CLI = ['--import', 'tsx', 'src/cli.ts'];

async function cli(env: Record<string, string>, ...args: string[]) {
  try {
    const r = await run(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env }, cwd: process.cwd() });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e: any) {
    return { code: e.code as number, out: e.stdout as string, err: e.stderr as string };
  }
}

for (const d of DIALECTS) {
  describe(`CLI [${d.name}]`, { skip: d.skip }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'egw-cli-'));
    const schema = `cli_${process.pid}_${Date.now()}`;
    // For PostgreSQL the CLI gets a search_path through the URL's options parameter.
    const url = d.name === 'sqlite' ? `sqlite:${join(dir, 'cli.db')}` : schemaUrl(PG_URL!, schema);
    const env = { DATABASE_URL: url };
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      if (d.name === 'postgres') await dropSchema(PG_URL!, schema);
    });

    it('demo loads the example project once and changes nothing the second time', async () => {
      if (d.name === 'postgres') {
        const pg = (await import('pg')).default;
        const c = new pg.Client({ connectionString: PG_URL! });
        await c.connect();
        await c.query(`CREATE SCHEMA "${schema}"`);
        await c.end();
      }
      const first = await cli(env, 'demo');
      assert.equal(first.code, 0, first.err);
      const keys = first.out.match(/egw_live_[0-9A-Za-z]{46}/g) ?? [];
      assert.equal(keys.length, 4, first.out);
      const second = await cli(env, 'demo');
      assert.equal(second.code, 0, second.err);
      assert.match(second.out, /already loaded; nothing changed/);
      assert.match(second.out, /^Found: «Педагогические курсы \(демо\)».* 19 routes, 12 course categories/m);
      assert.equal((second.out.match(/egw_live_/g) ?? []).length, 0, 'keys are never printed again');
      const list = await cli(env, 'keys', 'list', '--site', 'demo-courses');
      assert.equal(list.out.trim().split('\n').length, 4);
      assert.ok(!list.out.includes(keys[0]));
    });

    it('keys create prints the key once; keys disable disables it', async () => {
      const c = await cli(
        env,
        'keys',
        'create',
        '--site',
        'demo-courses',
        '--name',
        'ops key',
        '--permissions',
        'transactional_send',
        '--events',
        'contest_results',
      );
      assert.equal(c.code, 0, c.err);
      const id = /created key (\d+)/.exec(c.out)![1];
      assert.match(c.out, /egw_live_[0-9A-Za-z]{46}/);
      const dis = await cli(env, 'keys', 'disable', id);
      assert.equal(dis.code, 0, dis.err);
      const list = await cli(env, 'keys', 'list');
      assert.match(list.out, new RegExp(`^${id}\\t demo-courses\\tdisabled`.replace(' ', ''), 'm'));
      const bad = await cli(
        env,
        'keys',
        'create',
        '--site',
        'demo-courses',
        '--name',
        'x',
        '--permissions',
        'everything',
      );
      assert.equal(bad.code, 1);
      assert.match(bad.err, /unknown permissions: everything/);
    });
  });
}

describe('configuration', () => {
  it('a bad value stops the CLI with a message naming the variable', async () => {
    const r = await cli({ PORT: 'eighty' }, 'migrate');
    assert.equal(r.code, 1);
    assert.match(r.err, /configuration error: PORT must be a whole number/);
    const r2 = await cli({ DATABASE_URL: 'mysql://x' }, 'migrate');
    assert.match(r2.err, /DATABASE_URL must start with sqlite: or postgres:\/\//);
  });
});
