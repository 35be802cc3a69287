// The PHP example of docs/integration.md (a call without the client), run as it is by php-cli against the gateway listening on a real
// port: what PHP really sends (an integer order_id, a DECIMAL string amount, a null name, Cyrillic and a
// .рф address) is accepted, and the purchase stops the chain with no warnings.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createTestApp, DIALECTS, events, setupProject, type TestApp } from './support/harness.js';

const run = promisify(execFile);
const php = await run('php', ['-r', 'echo function_exists("curl_init") ? "ok" : "no";']).then(
  (r) => (r.stdout === 'ok' ? null : 'php has no curl extension'),
  () => 'php-cli is not installed',
);

// The objects the example reads, as a PHP site would have them (ids are integers, money a DECIMAL string).
const STUBS = `
$user = (object)['email' => 'Иван.Петров@Пример.РФ', 'name' => null];
$order = new class { public $id = 7001; public $amount = '2500.00';
    public function payUrl() { return 'https://site.example/pay/7001'; } };
$course = (object)['title' => 'Педагог дошкольного образования', 'categoryId' => 3];
`;

for (const d of DIALECTS) {
  describe(`the PHP example of the integration guide [${d.name}]`, { skip: d.skip || php || false }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    let url: string;
    const dir = mkdtempSync(join(tmpdir(), 'egw-php-'));
    before(async () => {
      t = await createTestApp(d.name);
      ({ key, site } = await setupProject(t.app, { rights: { allowed_api_events: ['course_paid'] } }));
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    });
    after(async () => {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('runs unchanged: every call accepted, the chain stopped, no warnings', async () => {
      const doc = readFileSync(new URL('../docs/integration.md', import.meta.url), 'utf8');
      const example = /## PHP without the client\n[\s\S]*?```php\n<\?php\n([\s\S]*?)```/.exec(doc)?.[1];
      assert.ok(example, 'the guide has a PHP example');
      const file = join(dir, 'example.php');
      writeFileSync(file, `<?php\n${STUBS}\n${example}\necho json_encode($paid, JSON_UNESCAPED_UNICODE);\n`);
      const out = await run('php', [file], { env: { ...process.env, GATEWAY_URL: url, GATEWAY_API_KEY: key } });
      const paid = JSON.parse(out.stdout);
      assert.equal(paid.ok, true);
      assert.equal(paid.order_id, '7001');
      assert.equal(paid.stopped, 3);
      assert.deepEqual(paid.warnings, []);
      const logged = await events(t.app, `?site_key=${site}&order_id=7001&order=asc`);
      assert.deepEqual(
        logged.map((e) => [e.endpoint, e.http_status, e.email]),
        [
          ['transactional', 200, 'иван.петров@пример.рф'],
          ['order-created', 200, 'иван.петров@пример.рф'],
          ['purchase', 200, 'иван.петров@пример.рф'],
        ],
      );
      const o = await t.deps.db.db
        .selectFrom('orders')
        .selectAll()
        .where('order_id', '=', '7001')
        .executeTakeFirstOrThrow();
      assert.deepEqual([o.status, Number(o.amount_minor), o.currency], ['paid', 250000, 'RUB']);
    });
  });
}
