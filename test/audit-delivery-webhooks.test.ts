// SPEC §14 for delivery settings and site webhooks: every change through the admin API (and the CLI)
// writes exactly one audit row in its own transaction, with before/after and no secret in it; a refused
// change writes none.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { userInfo } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { deliveryCommand } from '../src/cliDelivery.js';
import { insertDeliveries } from '../src/repos/siteWebhooks.js';
import { deliveryBox, putDelivery } from '../src/services/delivery.js';
import { DIALECTS, adminCall, createTestApp, setupProject, type TestApp } from './support/harness.js';
import { startSmtp, type TestSmtp } from './fixtures/delivery-support.js';

const PASSWORD = 'audit-relay-pass-Kx93vq';
const FALLBACK_PASSWORD = 'audit-wrong-pass-Lm27';
const POSTMARK_PASSWORD = 'audit-postmark-pw-55120';
const MAILGUN_KEY = 'audit-mailgun-signing-key-9931';
const pem = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const pemLine = pem.split('\n')[1];
// A public address literal: accepted without resolving anything (nothing is sent in these tests).
const HOOK_URL = 'https://93.184.216.34/hook';

type Row = {
  id: number;
  actor: string;
  via: string;
  action: string;
  site_key: string | null;
  target: string | null;
  before: any;
  after: any;
};

/** Runs a CLI command in this process (its output silenced) with the app's database. */
async function cliRun(t: TestApp, cmd: string, sub: string, args: string[], deps = t.deps): Promise<number | null> {
  const log = console.log;
  console.log = () => {};
  try {
    return await deliveryCommand(deps, cmd, sub, args);
  } finally {
    console.log = log;
  }
}

/** The audit rows written since `since` (an id), oldest first, read through the API; raw rows too. */
async function rowsSince(t: TestApp, since: number): Promise<{ rows: Row[]; raw: string }> {
  const res = await adminCall(t.app, 'GET', '/api/admin/audit?limit=500');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const rows = (res.body.items as Row[]).filter((r) => r.id > since).reverse();
  const raw = await t.deps.db.db.selectFrom('audit_log').selectAll().where('id', '>', since).execute();
  return { rows, raw: JSON.stringify(raw) };
}

async function lastId(t: TestApp): Promise<number> {
  const r = await t.deps.db.db
    .selectFrom('audit_log')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(r?.id ?? 0);
}

async function projectIdOf(t: TestApp, site: string): Promise<number> {
  const p = await t.deps.db.db
    .selectFrom('projects')
    .select('id')
    .where('site_key', '=', site)
    .executeTakeFirstOrThrow();
  return Number(p.id);
}

function noSecrets(raw: string, secrets: string[]) {
  for (const s of secrets) assert.ok(!raw.includes(s), `the audit row holds ${s.slice(0, 8)}…: ${raw.slice(0, 400)}`);
}

const SECRETS = [PASSWORD, encodeURIComponent(PASSWORD), FALLBACK_PASSWORD, POSTMARK_PASSWORD, MAILGUN_KEY, pemLine];

for (const d of DIALECTS) {
  describe(`audit of delivery settings and site webhooks [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    let url: string;
    const relays: TestSmtp[] = [];

    /** Runs `change`, then expects exactly one row (returned) or, with `none`, no row at all. */
    async function one(change: () => Promise<{ status: number; body: any }>, status: number, secrets: string[] = []) {
      const since = await lastId(t);
      const res = await change();
      assert.equal(res.status, status, JSON.stringify(res.body));
      const { rows, raw } = await rowsSince(t, since);
      assert.equal(rows.length, 1, JSON.stringify(rows));
      noSecrets(raw, [...SECRETS, ...secrets]);
      return { res, row: rows[0] };
    }
    async function none(change: () => Promise<{ status: number; body: any }>, status: number) {
      const since = await lastId(t);
      const res = await change();
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.deepEqual((await rowsSince(t, since)).rows, []);
    }

    before(async () => {
      t = await createTestApp(d.name);
      site = (await setupProject(t.app)).site;
      url = `/api/admin/projects/${site}/delivery`;
    });
    after(async () => {
      for (const r of relays) await r.close();
      await t?.close();
    });

    it('PUT delivery: delivery.set with the masked settings before and after, no secret', async () => {
      const projectId = await projectIdOf(t, site);
      const body = {
        primary: { smtp_url: `smtp://mailer:${PASSWORD}@relay.example:587` },
        from_email: 'news@site1.example',
        dkim: { domain: 'site1.example', selector: 's2026', private_key: pem },
        webhooks: {
          postmark: { username: 'pm-user', password: POSTMARK_PASSWORD },
          mailgun: { signing_key: MAILGUN_KEY },
        },
      };
      const { row } = await one(() => adminCall(t.app, 'PUT', url, body), 200);
      assert.equal(row.action, 'delivery.set');
      assert.equal(row.actor, 'root');
      assert.equal(row.site_key, site);
      assert.equal(row.target, `delivery:${projectId}`);
      assert.equal(row.before.configured, false);
      assert.equal(row.before.primary, null);
      assert.equal(row.after.configured, true);
      assert.equal(row.after.primary.host, 'relay.example');
      assert.equal(row.after.primary.username, 'mailer');
      assert.equal(row.after.from_email, 'news@site1.example');
      assert.equal(row.after.dkim.selector, 's2026');
      assert.equal(row.after.dkim.private_key_set, true);
      assert.equal(row.after.webhooks.postmark.username, 'pm-user');
      assert.ok(!('ok' in row.after) && !('breaker' in row.after));

      // A second save: before is the first one's settings.
      const again = await one(
        () => adminCall(t.app, 'PUT', url, { primary: { smtp_url: 'smtp://mailer@relay.example:2525' } }),
        200,
      );
      assert.equal(again.row.before.primary.port, 587);
      assert.equal(again.row.after.primary.port, 2525);
      assert.equal(again.row.after.dkim, null);
    });

    it('PUT delivery refused (422, 404): no row', async () => {
      await none(() => adminCall(t.app, 'PUT', url, { primary: { smtp_url: 'http://relay.example' } }), 422);
      await none(
        () =>
          adminCall(t.app, 'PUT', url, {
            primary: { smtp_url: 'smtp://ok.example' },
            dkim: { domain: 'a.example', selector: 's', private_key: 'nope' },
          }),
        422,
      );
      await none(
        () =>
          adminCall(t.app, 'PUT', '/api/admin/projects/nope/delivery', { primary: { smtp_url: 'smtp://a.example' } }),
        404,
      );
    });

    it('POST delivery/verify: delivery.verify with the outcome per relay, no password', async () => {
      const good = await startSmtp({ auth: { user: 'mailer', pass: PASSWORD } });
      relays.push(good);
      const set = await adminCall(t.app, 'PUT', url, {
        primary: { smtp_url: `smtp://mailer:${PASSWORD}@127.0.0.1:${good.port}` },
        fallback: { smtp_url: `smtp://mailer:${FALLBACK_PASSWORD}@127.0.0.1:${good.port}` },
        dkim: { domain: 'site1.example', selector: 's2026', private_key: pem },
      });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      const { res, row } = await one(() => adminCall(t.app, 'POST', `${url}/verify`), 200);
      assert.equal(res.body.ok, false);
      assert.equal(row.action, 'delivery.verify');
      assert.equal(row.actor, 'root');
      assert.equal(row.site_key, site);
      assert.match(row.target ?? '', /^delivery:\d+$/);
      assert.equal(row.before, null);
      assert.equal(row.after.ok, false);
      assert.deepEqual(row.after.primary, { ok: true, reply: res.body.primary.reply });
      assert.equal(row.after.fallback.ok, false);
      assert.match(row.after.fallback.reply, /535/);
      assert.equal(row.after.dkim.ok, false);

      await none(() => adminCall(t.app, 'POST', '/api/admin/projects/nope/delivery/verify'), 404);
    });

    it('POST delivery/test: delivery.test_send with the queued e-mail; an unknown template writes nothing', async () => {
      const { res, row } = await one(
        () => adminCall(t.app, 'POST', `${url}/test`, { template: 'paid_tpl', to: 'Admin@Site1.example' }),
        200,
      );
      const id = res.body.scheduled_email_id;
      assert.equal(row.action, 'delivery.test_send');
      assert.equal(row.actor, 'root');
      assert.equal(row.site_key, site);
      assert.equal(row.target, `email:${id}`);
      assert.equal(row.before, null);
      assert.equal(row.after.scheduled_email_id, id);
      assert.equal(row.after.template, 'paid_tpl');
      assert.equal(row.after.to.toLowerCase(), 'admin@site1.example');
      assert.equal((await adminCall(t.app, 'GET', `/api/admin/emails/${id}`)).body.test, true);

      const contacts = async () =>
        (await t.deps.db.db.selectFrom('contacts').select('id').where('email', '=', 'nobody@site1.example').execute())
          .length;
      await none(() => adminCall(t.app, 'POST', `${url}/test`, { template: 'nope', to: 'nobody@site1.example' }), 422);
      assert.equal(await contacts(), 0, 'the refused test send left no contact');
    });

    it('DELETE delivery: delivery.clear with the settings before; an unknown project writes nothing', async () => {
      const { row } = await one(() => adminCall(t.app, 'DELETE', url), 200);
      assert.equal(row.action, 'delivery.clear');
      assert.equal(row.actor, 'root');
      assert.equal(row.site_key, site);
      assert.equal(row.before.configured, true);
      assert.equal(row.before.primary.host, '127.0.0.1');
      assert.equal(row.before.dkim.selector, 's2026');
      assert.equal(row.after.configured, false);
      assert.equal(row.after.primary, null);
      await none(() => adminCall(t.app, 'DELETE', '/api/admin/projects/nope/delivery'), 404);
    });

    it('site webhooks: create, update, delete and resend each write one row; refusals none', async () => {
      const base = `/api/admin/projects/${site}/webhooks`;
      await none(() => adminCall(t.app, 'POST', base, { url: 'http://127.0.0.1/hook', events: ['email.sent'] }), 422);
      await none(
        () => adminCall(t.app, 'POST', '/api/admin/projects/nope/webhooks', { url: HOOK_URL, events: ['email.sent'] }),
        404,
      );

      const since = await lastId(t);
      const created = await adminCall(t.app, 'POST', base, {
        url: HOOK_URL,
        events: ['email.sent', 'email.failed'],
        description: 'orders',
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const secret: string = created.body.secret;
      assert.match(secret, /^whsec_/);
      const id: number = created.body.id;
      {
        const { rows, raw } = await rowsSince(t, since);
        assert.equal(rows.length, 1, JSON.stringify(rows));
        noSecrets(raw, [secret, secret.slice('whsec_'.length)]);
        const row = rows[0];
        assert.equal(row.action, 'webhook.create');
        assert.equal(row.actor, 'root');
        assert.equal(row.site_key, site);
        assert.equal(row.target, `webhook:${id}`);
        assert.equal(row.before, null);
        assert.equal(row.after.url, HOOK_URL);
        assert.deepEqual(row.after.events, ['email.sent', 'email.failed']);
        assert.equal(row.after.status, 'active');
      }
      const hidden = [secret, secret.slice('whsec_'.length)];

      const patched = await one(
        () => adminCall(t.app, 'PATCH', `${base}/${id}`, { description: 'invoices', enabled: false }),
        200,
        hidden,
      );
      assert.equal(patched.row.action, 'webhook.update');
      assert.equal(patched.row.target, `webhook:${id}`);
      assert.equal(patched.row.site_key, site);
      assert.equal(patched.row.before.description, 'orders');
      assert.equal(patched.row.before.status, 'active');
      assert.equal(patched.row.after.description, 'invoices');
      assert.equal(patched.row.after.status, 'disabled');
      await none(() => adminCall(t.app, 'PATCH', `${base}/999999`, { description: 'x' }), 404);
      await none(() => adminCall(t.app, 'PATCH', `${base}/${id}`, { url: 'http://10.0.0.1/hook' }), 422);

      // A delivery that failed, re-sent.
      const projectId = await projectIdOf(t, site);
      await insertDeliveries(
        t.deps.db.db,
        [{ project_id: projectId, endpoint_id: id, msg_id: 'msg_audit_1', kind: 'email.sent', data: '{}' }],
        t.clock.now(),
      );
      const delivery = await t.deps.db.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('msg_id', '=', 'msg_audit_1')
        .executeTakeFirstOrThrow();
      const deliveryId = Number(delivery.id);
      await t.deps.db.db
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', attempts: 3 })
        .where('id', '=', deliveryId)
        .execute();
      const resent = await one(
        () => adminCall(t.app, 'POST', `${base}/${id}/deliveries/${deliveryId}/resend`),
        200,
        hidden,
      );
      assert.equal(resent.row.action, 'webhook.resend');
      assert.equal(resent.row.actor, 'root');
      assert.equal(resent.row.site_key, site);
      assert.equal(resent.row.target, `webhook_delivery:${deliveryId}`);
      assert.equal(resent.row.before.status, 'failed');
      assert.equal(resent.row.after.status, 'pending');
      await none(() => adminCall(t.app, 'POST', `${base}/${id}/deliveries/999999/resend`), 404);
      await t.deps.db.db
        .updateTable('webhook_deliveries')
        .set({ status: 'sending' })
        .where('id', '=', deliveryId)
        .execute();
      await none(() => adminCall(t.app, 'POST', `${base}/${id}/deliveries/${deliveryId}/resend`), 409);

      const removed = await one(() => adminCall(t.app, 'DELETE', `${base}/${id}`), 200, hidden);
      assert.equal(removed.row.action, 'webhook.delete');
      assert.equal(removed.row.target, `webhook:${id}`);
      assert.equal(removed.row.site_key, site);
      assert.equal(removed.row.before.description, 'invoices');
      assert.equal(removed.row.after, null);
      await none(() => adminCall(t.app, 'DELETE', `${base}/${id}`), 404);
    });
  });

  describe(`audit of the delivery CLI [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    const cliName = `cli:${userInfo().username}`;
    before(async () => {
      t = await createTestApp(d.name);
      site = (await setupProject(t.app)).site;
    });
    after(async () => {
      await t?.close();
    });

    it('delivery set, clear and test write their rows as the CLI user', async () => {
      const since = await lastId(t);
      const body = JSON.stringify({ primary: { smtp_url: `smtp://mailer:${PASSWORD}@relay.example:587` } });
      assert.equal(await cliRun(t, 'delivery', 'set', ['--site', site, '--json', body]), 0);
      const { rows, raw } = await rowsSince(t, since);
      assert.equal(rows.length, 1, JSON.stringify(rows));
      noSecrets(raw, SECRETS);
      assert.equal(rows[0].action, 'delivery.set');
      assert.equal(rows[0].actor, cliName);
      assert.equal(rows[0].via, 'cli');
      assert.equal(rows[0].site_key, site);
      assert.equal(rows[0].after.primary.host, 'relay.example');

      const next = await lastId(t);
      const args = ['--site', site, '--template', 'paid_tpl', '--to', 'cli@site1.example'];
      assert.equal(await cliRun(t, 'delivery', 'test', args), 0);
      assert.equal(await cliRun(t, 'delivery', 'clear', ['--site', site]), 0);
      assert.deepEqual(
        (await rowsSince(t, next)).rows.map((r) => [r.action, r.actor, r.site_key]),
        [
          ['delivery.test_send', cliName, site],
          ['delivery.clear', cliName, site],
        ],
      );
    });

    it('delivery set refuses a body as the API does, without quoting it: no secret in the error', async () => {
      const since = await lastId(t);
      const refused = async (json: string) => {
        await assert.rejects(cliRun(t, 'delivery', 'set', ['--site', site, '--json', json]), (e: Error) => {
          assert.ok(!e.message.includes(PASSWORD), e.message);
          assert.match(e.message, /^invalid body/);
          return true;
        });
      };
      await refused(`{"primary": {"smtp_url": "smtp://mailer:${PASSWORD}@relay.example:587"}`);
      await refused(
        JSON.stringify({ primary: { smtp_url: `smtp://mailer:${PASSWORD}@relay.example:587` }, from_name: 'a\u0000b' }),
      );
      assert.equal((await rowsSince(t, since)).rows.length, 0, 'nothing written');
    });

    it('secrets rotate writes one secrets.rotate row with the counts', async () => {
      const OLD = 'audit-previous-installation-secret-0123';
      // Settings sealed under the previous key, as before SECRET_KEY changed.
      await putDelivery({ ...t.deps, secret: OLD }, { actor: 'test', via: 'cli', address: null }, site, {
        primary: { smtp_url: `smtp://mailer:${PASSWORD}@relay.example:587` },
      });
      const created = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/webhooks`, {
        url: HOOK_URL,
        events: ['email.sent'],
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const since = await lastId(t);
      // SECRET_KEY_PREVIOUS, read by the configuration as the CLI's is.
      const config = { ...t.deps.config, secretKeyPrevious: OLD };
      assert.equal(await cliRun(t, 'secrets', 'rotate', [], { ...t.deps, config }), 0);
      const { rows, raw } = await rowsSince(t, since);
      assert.equal(rows.length, 1, JSON.stringify(rows));
      noSecrets(raw, [...SECRETS, OLD, created.body.secret]);
      const row = rows[0];
      assert.equal(row.action, 'secrets.rotate');
      assert.equal(row.actor, cliName);
      assert.equal(row.via, 'cli');
      assert.equal(row.site_key, null);
      assert.deepEqual(row.after.projects, { rotated: 1, current: 0, failed: 0, failed_ids: [] });
      assert.deepEqual(row.after.webhook_endpoints, { rotated: 0, current: 1, failed: 0, failed_ids: [] });
      // Sealed under the current key now.
      const stored = await t.deps.db.db.selectFrom('project_delivery').select('secrets').executeTakeFirstOrThrow();
      assert.equal(stored.secrets.split('.')[1], (await deliveryBox(t.deps)).keyId);
    });
  });
}
