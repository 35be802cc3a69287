// Secrets at rest (issue 13): the relay password, the DKIM key and provider webhook secrets are found
// nowhere in clear: not in the database file, not in the logs (debug level), not in any admin answer;
// `secrets rotate` re-encrypts them when SECRET_KEY changes.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { redactDeliveryBody } from '../src/domain/delivery.js';
import { LOG_REDACT } from '../src/http/app.js';
import { start, type Running } from '../src/server.js';
import { cliActor } from '../src/cliAdmin.js';
import { getProviderWebhookCredentials, rotateSecrets } from '../src/services/delivery.js';
import { secretBox } from '../src/services/secrets.js';
import { ADMIN_TOKEN, adminCall, setupProject } from './support/harness.js';
import { startSmtp, until, type TestSmtp } from './fixtures/delivery-support.js';

const PASSWORD = 'Sup3r-secret-relay-pw-7781';
const WEBHOOK_SECRET = 'whk-unisender-api-key-99871';
const OLD_KEY = 'old-installation-secret-key-0123456789abcdef';
const NEW_KEY = 'new-installation-secret-key-fedcba9876543210';

describe('delivery secrets never appear in clear', () => {
  const dir = mkdtempSync(join(tmpdir(), 'egw-secrets-'));
  const lines: string[] = [];
  const pem = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const pemLine = pem.split('\n')[5];
  let relay: TestSmtp;
  let running: Running;
  const answers: string[] = [];
  let siteWebhookSecret = '';
  const env = (key: string) =>
    loadConfig({
      RELAYS_ALLOW_PRIVATE: 'true',
      DATABASE_URL: `sqlite:${join(dir, 'gw.db')}`,
      ADMIN_TOKEN,
      SECRET_KEY: key,
      LOG_LEVEL: 'trace',
      SEND_WAIT_MS: '0',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
    });
  const boot = (key: string) =>
    start(env(key), {
      listen: false,
      logger: pino({ level: 'trace', redact: LOG_REDACT }, { write: (s: string) => void lines.push(s) }),
    });
  const call = async (method: string, url: string, body?: unknown) => {
    const r = await adminCall(running.app!, method, url, body);
    answers.push(JSON.stringify(r.body));
    return r;
  };

  before(async () => {
    relay = await startSmtp({ auth: { user: 'mailer', pass: PASSWORD }, acceptReply: () => 'Ok: queued as Q1' });
    running = await boot(OLD_KEY);
  });
  after(async () => {
    await running?.stop();
    await relay?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('uses them to send, and shows none of them anywhere', async () => {
    await setupProject(running.app!);
    const put = await call('PUT', '/api/admin/projects/site1/delivery', {
      primary: { smtp_url: `smtp://mailer:${PASSWORD}@127.0.0.1:${relay.port}` },
      fallback: { smtp_url: `smtp://mailer:${PASSWORD}x@127.0.0.1:1` },
      dkim: { domain: 'site1.example', selector: 'sel', private_key: pem },
      webhooks: { unisender_go: { api_key: WEBHOOK_SECRET } },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    // A site webhook endpoint: its secret is in this one answer (shown once), kept out of `answers`.
    const hook = await adminCall(running.app!, 'POST', '/api/admin/projects/site1/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['email.sent'],
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    siteWebhookSecret = hook.body.secret;
    await call('GET', '/api/admin/projects/site1/webhooks');
    const sent = await call('POST', '/api/admin/projects/site1/delivery/test', {
      template: 'paid_tpl',
      to: 'a@site1.example',
    });
    const id = sent.body.scheduled_email_id;
    running.worker!.wake();
    await until(async () => (await call('GET', `/api/admin/emails/${id}`)).body.status === 'sent', 10_000, 'sent');
    assert.equal(relay.accepted.length, 1, 'the relay authenticated the decrypted password');
    assert.match(relay.raws[0].toString(), /DKIM-Signature/);
    // A failing relay too: its error must not carry the password.
    await call('PUT', '/api/admin/projects/site1/delivery', {
      primary: {
        smtp_url: `smtp://mailer:${PASSWORD}@127.0.0.1:${relay.port}/`.replace(PASSWORD, `${PASSWORD}-wrong`),
      },
    });
    const failing = await call('POST', '/api/admin/projects/site1/delivery/test', {
      template: 'paid_tpl',
      to: 'b@site1.example',
    });
    running.worker!.wake();
    await until(
      async () => (await call('GET', `/api/admin/emails/${failing.body.scheduled_email_id}`)).body.attempts > 0,
      10_000,
      'attempt',
    );
    await call('POST', '/api/admin/projects/site1/delivery/verify');
    await call('GET', '/api/admin/projects/site1/delivery');
    await call('GET', '/api/admin/emails?site_key=site1');
    await call('GET', '/api/admin/external-events');
    await call('GET', '/metrics');
    await call('GET', '/openapi.json');
    await running.stop();

    const db = readdirSync(dir)
      .map((f) => readFileSync(join(dir, f)).toString('latin1'))
      .join('\n');
    const logs = lines.join('');
    assert.ok(logs.length > 0 && db.length > 0 && answers.length >= 8);
    for (const secret of [PASSWORD, pemLine, WEBHOOK_SECRET, encodeURIComponent(PASSWORD), siteWebhookSecret]) {
      assert.ok(!db.includes(secret), `database file holds ${secret.slice(0, 6)}…`);
      assert.ok(!logs.includes(secret), `logs hold ${secret.slice(0, 6)}…`);
      for (const a of answers)
        assert.ok(!a.includes(secret), `an answer holds ${secret.slice(0, 6)}…: ${a.slice(0, 200)}`);
    }
    // The check above can fail: the relay did receive the password, and the masked form is shown.
    assert.ok(answers.some((a) => a.includes('"password_last4":"')));
  });

  it('secrets rotate re-encrypts under the new SECRET_KEY', async () => {
    running = await boot(NEW_KEY);
    const deps = running.deps;
    const project = await deps.db.db
      .selectFrom('projects')
      .select('id')
      .where('site_key', '=', 'site1')
      .executeTakeFirstOrThrow();
    await assert.rejects(getProviderWebhookCredentials(deps, project.id, 'unisender_go'), /SECRET_KEY changed/);
    const r = await rotateSecrets(deps, cliActor(), OLD_KEY);
    assert.deepEqual(r, { rotated: 1, current: 0, failed: [], webhooks: { rotated: 1, current: 0, failed: [] } });
    // The site webhook's signing secret (sealed in the same box) opens under the new key after rotating.
    const endpoint = await deps.db.db.selectFrom('webhook_endpoints').select('secret_sealed').executeTakeFirstOrThrow();
    assert.equal(secretBox(NEW_KEY).open(endpoint.secret_sealed), siteWebhookSecret);
    assert.deepEqual(await getProviderWebhookCredentials(deps, project.id, 'unisender_go'), {
      api_key: WEBHOOK_SECRET,
    });
    assert.deepEqual(await rotateSecrets(deps, cliActor(), OLD_KEY), {
      rotated: 0,
      current: 1,
      failed: [],
      webhooks: { rotated: 0, current: 1, failed: [] },
    });
  });
});

describe('redactDeliveryBody (for audit logs)', () => {
  it('replaces every secret of a delivery body', () => {
    const body = {
      primary: { smtp_url: `smtp://mailer:${PASSWORD}@relay.example:587` },
      fallback: { smtp_url: 'not a url' },
      dkim: { domain: 'a.example', selector: 's', private_key: '-----BEGIN PRIVATE KEY-----abc' },
      webhooks: { postmark: { username: 'u', password: WEBHOOK_SECRET }, ses: { topic_arn: 'arn:x' } },
    };
    const out = JSON.stringify(redactDeliveryBody(body));
    assert.ok(!out.includes(PASSWORD) && !out.includes(WEBHOOK_SECRET) && !out.includes('BEGIN PRIVATE'));
    assert.match(out, /smtp:\/\/mailer:redacted@relay\.example:587/);
    assert.match(out, /"topic_arn":"arn:x"/);
    assert.match(out, /"username":"u"/);
    assert.match(JSON.stringify(body), new RegExp(PASSWORD), 'the body itself is left as it was');
  });
});
