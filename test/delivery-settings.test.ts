// The delivery settings API (SPEC §11): save, show with secrets masked, 422 naming the member, keep a
// secret left out, provider webhook credentials, clear; verify against real relays and the DKIM check
// with an injected DNS; test sends marked and left out of statistics; the daily quota.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { installationSecret } from '../src/services/secrets.js';
import { getProviderWebhookCredentials } from '../src/services/delivery.js';
import { DIALECTS, adminCall, createTestApp, setupProject, type TestApp } from './support/harness.js';
import { startSmtp, type TestSmtp } from './fixtures/delivery-support.js';

const PASSWORD = 'relay-pass-Zq81xv';
const rsaPem = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

for (const d of DIALECTS) {
  describe(`delivery settings API (${d.name})`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    const pem = rsaPem();
    const dns = new Map<string, string[][]>();
    const relays: TestSmtp[] = [];

    before(async () => {
      t = await createTestApp(
        d.name,
        {},
        {
          dnsTxt: async (name) => {
            const r = dns.get(name);
            if (!r) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
            return r;
          },
        },
      );
      site = (await setupProject(t.app)).site;
    });
    after(async () => {
      for (const r of relays) await r.close();
      await t?.close();
    });
    const url = `/api/admin/projects/${'site1'}/delivery`;
    /** One pass of a worker sharing the app's installation secret (it decrypts the settings). */
    const runWorker = async () =>
      createWorker({
        db: t.deps.db,
        transport: createCaptureTransport(),
        publicUrl: 'http://x',
        secret: await installationSecret(t.deps),
        clock: t.clock,
      }).runOnce();

    it('saves the settings and shows them with every secret masked', async () => {
      const res = await adminCall(t.app, 'PUT', url, {
        primary: { smtp_url: `smtp://mailer:${PASSWORD}@relay.example:587`, pool_size: 3, rate_per_second: 10 },
        fallback: { smtp_url: 'smtps://backup.example', starttls: 'required' },
        from_name: 'Site One',
        from_email: 'news@site1.example',
        reply_to: 'help@site1.example',
        dkim: { domain: 'site1.example', selector: 's2026', private_key: pem },
        daily_quota: 1000,
        webhooks: {
          postmark: { username: 'pm-user', password: 'pm-password-123456' },
          mailgun: { signing_key: 'key-mailgun-signing-abcdef' },
          ses: { topic_arn: 'arn:aws:sns:eu-west-1:123:bounces' },
        },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const got = await adminCall(t.app, 'GET', url);
      for (const body of [res.body, got.body]) {
        const text = JSON.stringify(body);
        assert.ok(!text.includes(PASSWORD), 'no relay password');
        assert.ok(!text.includes('PRIVATE KEY') && !text.includes(pem.split('\n')[1]), 'no private key');
        assert.ok(!text.includes('pm-password-123456') && !text.includes('key-mailgun-signing-abcdef'));
        assert.equal(body.configured, true);
        assert.equal(body.primary.password_set, true);
        assert.equal(body.primary.password_last4, PASSWORD.slice(-4));
        assert.equal(body.primary.username, 'mailer');
        assert.equal(body.primary.smtp_url, 'smtp://mailer@relay.example:587');
        assert.equal(body.fallback.password_set, false);
        assert.equal(body.fallback.starttls, 'required');
        assert.equal(body.dkim.private_key_set, true);
        assert.match(body.dkim.private_key_fingerprint, /^SHA256:/);
        assert.equal(body.dkim.dns_record.name, 's2026._domainkey.site1.example');
        assert.match(body.dkim.dns_record.value, /^v=DKIM1; k=rsa; p=MII/);
        assert.deepEqual(body.webhooks.postmark, { username: 'pm-user', password_last4: '3456', password_set: true });
        assert.equal(body.webhooks.ses.topic_arn, 'arn:aws:sns:eu-west-1:123:bounces');
        assert.equal(body.daily_quota, 1000);
      }
      const project = await t.deps.db.db
        .selectFrom('projects')
        .select('id')
        .where('site_key', '=', site)
        .executeTakeFirstOrThrow();
      assert.deepEqual(await getProviderWebhookCredentials(t.deps, project.id, 'postmark'), {
        username: 'pm-user',
        password: 'pm-password-123456',
      });
      assert.equal(await getProviderWebhookCredentials(t.deps, project.id, 'unisender_go'), null);
    });

    it('keeps a password and a DKIM key left out; webhooks absent stay as they were', async () => {
      const res = await adminCall(t.app, 'PUT', url, {
        primary: { smtp_url: 'smtp://mailer@relay.example:587' },
        dkim: { domain: 'site1.example', selector: 's2026' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.primary.password_last4, PASSWORD.slice(-4));
      assert.equal(res.body.dkim.private_key_set, true);
      assert.equal(res.body.fallback, null);
      assert.equal(res.body.webhooks.postmark.username, 'pm-user');
      // Another relay account: the old password does not travel to it.
      const moved = await adminCall(t.app, 'PUT', url, { primary: { smtp_url: 'smtp://mailer@other.example:587' } });
      assert.equal(moved.body.primary.password_set, false);
    });

    it('refuses a bad URL or key with 422 naming the member', async () => {
      const cases: [unknown, string][] = [
        [{ primary: { smtp_url: 'not a url' } }, 'primary.smtp_url'],
        [{ primary: { smtp_url: 'http://relay.example' } }, 'primary.smtp_url'],
        [{ primary: { smtp_url: 'smtp://ok.example' }, fallback: { smtp_url: 'smtp://' } }, 'fallback.smtp_url'],
        [
          {
            primary: { smtp_url: 'smtp://ok.example' },
            dkim: { domain: 'a.example', selector: 's', private_key: 'nope' },
          },
          'dkim.private_key',
        ],
        [
          {
            primary: { smtp_url: 'smtp://ok.example' },
            dkim: {
              domain: 'a.example',
              selector: 's',
              private_key: generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
                .privateKey.export({ type: 'pkcs8', format: 'pem' })
                .toString(),
            },
          },
          'dkim.private_key',
        ],
        [
          {
            primary: { smtp_url: 'smtp://ok.example' },
            dkim: {
              domain: 'a.example',
              selector: 's',
              private_key: generateKeyPairSync('rsa', { modulusLength: 1024 })
                .publicKey.export({ type: 'spki', format: 'pem' })
                .toString(),
            },
          },
          'dkim.private_key',
        ],
      ];
      for (const [body, member] of cases) {
        const res = await adminCall(t.app, 'PUT', url, body);
        assert.equal(res.status, 422, `${JSON.stringify(body).slice(0, 80)}: ${res.status}`);
        assert.equal(res.body.detail.error.code, 'validation_error');
        assert.ok(member in res.body.detail.error.invalid_fields, JSON.stringify(res.body.detail.error));
      }
      const missing = await adminCall(t.app, 'PUT', url, { fallback: { smtp_url: 'smtp://x.example' } });
      assert.equal(missing.status, 422);
      assert.equal(
        (
          await adminCall(t.app, 'PUT', '/api/admin/projects/nope/delivery', {
            primary: { smtp_url: 'smtp://a.example' },
          })
        ).status,
        404,
      );
    });

    it('verifies the relays (AUTH accepted or the reply in full) and looks the DKIM record up', async () => {
      const good = await startSmtp({ auth: { user: 'mailer', pass: PASSWORD } });
      relays.push(good);
      await adminCall(t.app, 'PUT', url, {
        primary: { smtp_url: `smtp://mailer:${PASSWORD}@127.0.0.1:${good.port}` },
        fallback: { smtp_url: `smtp://mailer:wrong-password@127.0.0.1:${good.port}` },
        dkim: { domain: 'site1.example', selector: 's2026', private_key: pem },
      });
      const res = await adminCall(t.app, 'POST', `${url}/verify`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.primary.ok, true);
      assert.equal(res.body.fallback.ok, false);
      assert.match(res.body.fallback.reply, /535/);
      assert.ok(!JSON.stringify(res.body).includes(PASSWORD));
      assert.equal(res.body.ok, false);
      assert.equal(res.body.dkim.ok, false);
      assert.match(res.body.dkim.reply, /^not found/);
      const record = (await adminCall(t.app, 'GET', url)).body.dkim.dns_record;
      dns.set(record.name, [[record.value.slice(0, 100), record.value.slice(100)]]);
      const again = await adminCall(t.app, 'POST', `${url}/verify`);
      assert.equal(again.body.dkim.ok, true, again.body.dkim.reply);
    });

    it('sends a test e-mail marked as a test, recorded with its transport, outside statistics', async () => {
      await adminCall(t.app, 'DELETE', url);
      const res = await adminCall(t.app, 'POST', `${url}/test`, { template: 'paid_tpl', to: 'admin@site1.example' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const id = res.body.scheduled_email_id;
      await runWorker();
      const e = await adminCall(t.app, 'GET', `/api/admin/emails/${id}`);
      assert.equal(e.body.status, 'sent');
      assert.equal(e.body.test, true);
      assert.equal(e.body.attempts_log.length, 1);
      assert.equal(e.body.attempts_log[0].transport, 'capture');
      const list = await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}`);
      assert.equal(list.body.items.find((i: { id: number }) => i.id === id).test, true);
      const unknown = await adminCall(t.app, 'POST', `${url}/test`, { template: 'nope', to: 'admin@site1.example' });
      assert.equal(unknown.status, 422);
      assert.ok('template' in unknown.body.detail.error.invalid_fields);
    });

    it('holds e-mails over the daily quota as queued with the reason, until the next day', async () => {
      const relay = await startSmtp();
      relays.push(relay);
      await adminCall(t.app, 'PUT', url, { primary: { smtp_url: relay.url }, daily_quota: 1 });
      const project = await t.deps.db.db
        .selectFrom('projects')
        .select('id')
        .where('site_key', '=', site)
        .executeTakeFirstOrThrow();
      const day = new Date(t.clock.now()).toISOString().slice(0, 10);
      await t.deps.db.db.insertInto('delivery_quota_usage').values({ project_id: project.id, day, used: 1 }).execute();
      // A test send is outside the quota: it goes although the day's quota is used up.
      const test = await adminCall(t.app, 'POST', `${url}/test`, { template: 'paid_tpl', to: 'q@site1.example' });
      await runWorker();
      assert.equal(
        (await adminCall(t.app, 'GET', `/api/admin/emails/${test.body.scheduled_email_id}`)).body.status,
        'sent',
      );
      assert.equal(relay.accepted.length, 1);
      // An ordinary e-mail waits.
      const res = await adminCall(t.app, 'POST', `${url}/test`, { template: 'paid_tpl', to: 'q2@site1.example' });
      const row = { id: res.body.scheduled_email_id as number };
      await t.deps.db.db.updateTable('scheduled_emails').set({ is_test: 0 }).where('id', '=', row.id).execute();
      await runWorker();
      assert.equal(relay.accepted.length, 1, 'the relay saw nothing over the quota');
      const e = await adminCall(t.app, 'GET', `/api/admin/emails/${row.id}`);
      assert.equal(e.body.status, 'queued');
      assert.match(e.body.last_error, /^quota: .*daily quota of 1/);
      assert.equal(e.body.attempts, 0);
      assert.ok(Date.parse(e.body.due_at) > t.clock.now());
      assert.equal(e.body.attempts_log.length, 0);
      const shown = await adminCall(t.app, 'GET', url);
      assert.equal(shown.body.quota_used_today, 1);
      // The project's administrators see it on the dashboard.
      const dash = await adminCall(t.app, 'GET', `/api/admin/dashboard?site_key=${site}`);
      assert.equal(dash.status, 200, JSON.stringify(dash.body));
      assert.equal(dash.body.outbox.over_quota, 1);
    });
  });
}
