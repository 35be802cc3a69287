// The receivers of docs/integration.md, run as they are written: the PHP verification function checks a
// real delivery signed by the webhook worker (and refuses a changed body or a stale timestamp), and the
// shell snippet's curl request verifies in the receiver with the standardwebhooks library.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createWebhookWorker } from '../src/workers/siteWebhooks.js';
import { sealingSecret } from '../src/services/delivery.js';
import { adminCall, createTestApp, keyCall, setupProject, type TestApp } from './support/harness.js';
import { startReceiver, type Receiver } from './support/webhookReceiver.js';

const run = promisify(execFile);
const doc = readFileSync(new URL('../docs/integration.md', import.meta.url), 'utf8');
const noPhp = await run('php', ['-v']).then(
  () => false,
  () => 'php-cli is not installed',
);

describe('the webhook receivers of the integration guide', () => {
  let t: TestApp;
  let rx: Receiver;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'egw-hookdoc-'));
    rx = await startReceiver();
    t = await createTestApp('sqlite', { WEBHOOKS_ALLOW_PRIVATE: 'true' });
    const { site, key } = await setupProject(t.app);
    const created = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/webhooks`, {
      url: `${rx.url}/hook`,
      events: ['event.rejected'],
    });
    rx.secret = created.body.secret;
    // A refusal with a Cyrillic order id: the body is UTF-8, as the site receives it.
    await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
      email: 'a@example.com',
      order_id: 'Заказ-1',
    });
    const w = createWebhookWorker({ db: t.deps.db, config: t.config.webhooks, secret: await sealingSecret(t.deps) });
    assert.equal(await w.runOnce(), 1);
    assert.ok(rx.received[0].verified);
  });
  after(async () => {
    await t.close();
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('PHP: the verification function accepts the real delivery and nothing else', { skip: noPhp }, async () => {
    const fn = /\n(function gateway_webhook_verified[\s\S]*?\n\}\n)/.exec(doc)?.[1];
    assert.ok(fn, 'the guide has the PHP verification function');
    const file = join(dir, 'verify.php');
    writeFileSync(
      file,
      `<?php\n${fn}\n$e = getenv();\necho gateway_webhook_verified($e['SECRET'], file_get_contents($e['BODY_FILE']), $e['ID'], $e['TS'], $e['SIGS'], (int)$e['NOW']) ? 'valid' : 'invalid';\n`,
    );
    const got = rx.received[0];
    const bodyFile = join(dir, 'body.json');
    const verify = async (body: string, ts: string, now: number) => {
      writeFileSync(bodyFile, body);
      const env = {
        ...process.env,
        SECRET: rx.secret!,
        BODY_FILE: bodyFile,
        ID: String(got.headers['webhook-id']),
        TS: ts,
        SIGS: String(got.headers['webhook-signature']),
        NOW: String(now),
      };
      return (await run('php', [file], { env })).stdout;
    };
    const ts = String(got.headers['webhook-timestamp']);
    assert.equal(await verify(got.raw, ts, Number(ts) + 10), 'valid');
    assert.equal(await verify(got.raw.replace('Заказ-1', 'Заказ-2'), ts, Number(ts)), 'invalid');
    assert.equal(await verify(got.raw, ts, Number(ts) + 301), 'invalid', 'older than 5 minutes');
  });

  it('shell: the signed curl request of the guide verifies with the standardwebhooks library', async () => {
    const block = /The same check in a shell[\s\S]*?```sh\n([\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(block, 'the guide has the shell snippet');
    const script = block
      .replace('SECRET=whsec_...', `SECRET='${rx.secret}'`)
      .replace('https://site.example/gateway-hook.php', `${rx.url}/from-shell`);
    writeFileSync(join(dir, 'body.json'), rx.received[0].raw);
    await run('bash', ['-c', script], { cwd: dir });
    const last = rx.received.at(-1)!;
    assert.equal(last.path, '/from-shell');
    assert.ok(last.verified, 'verified by the library');
  });
});
