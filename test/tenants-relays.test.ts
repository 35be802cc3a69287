// SPEC §21 "relay addresses": a project administrator cannot use the relay settings as a port scanner of
// the gateway's network. Loopback, private, link-local and metadata addresses (also behind a name) are
// 422 naming the member unless an owner allowed them for the project (audited); a query string is 422;
// the connection check calls a service that is not SMTP `not_smtp` and never echoes its bytes. The
// installation does not allow private relays here (RELAYS_ALLOW_PRIVATE=false). Both databases.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { bearerCall, createUser, login, personalToken } from './support/accounts.js';
import { adminCall, createTestApp, DIALECTS, setupProject, type TestApp } from './support/harness.js';

const BANNER = 'SSH-2.0-OpenSSH_9.6p1 internal-build-host-db01';

/** A service that is not SMTP: it greets like an SSH server. Counts its connections. */
async function fakeSsh(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let n = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    n++;
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
    s.write(`${BANNER}\r\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    connections: () => n,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

for (const d of DIALECTS) {
  describe(`relay addresses [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let ssh: Awaited<ReturnType<typeof fakeSsh>>;
    let adminToken: string;
    const url = '/api/admin/projects/proja/delivery';

    before(async () => {
      ssh = await fakeSsh();
      t = await createTestApp(
        d.name,
        { RELAYS_ALLOW_PRIVATE: 'false', SMTP_TIMEOUT_MS: '3000' },
        {
          // A name that resolves inside the network, and one outside it.
          resolveHost: async (host) => {
            if (host === 'db01.corp.example') return ['10.20.30.40'];
            if (host === 'metadata.corp.example') return ['169.254.169.254'];
            return ['93.184.216.34'];
          },
        },
      );
      await setupProject(t.app, { site: 'proja' });
      await createUser(t.app, { email: 'pa@x.example', role: 'project_admin', projects: ['proja'] });
      adminToken = (await personalToken(t.app, await login(t.app, 'pa@x.example'))).token;
    });
    after(async () => {
      await t?.close();
      await ssh?.close();
    });

    it('refuses loopback, private, link-local and metadata relays, naming the member', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ primary: { smtp_url: `smtp://127.0.0.1:${ssh.port}` } }, 'primary.smtp_url'],
        [{ primary: { smtp_url: 'smtp://localhost:25' } }, 'primary.smtp_url'],
        [{ primary: { smtp_url: 'smtp://[::1]:25' } }, 'primary.smtp_url'],
        [{ primary: { smtp_url: 'smtp://[::ffff:127.0.0.1]:25' } }, 'primary.smtp_url'],
        [{ primary: { smtp_url: 'smtp://u:p@10.0.0.5:587' } }, 'primary.smtp_url'],
        [{ primary: { smtp_url: 'smtp://192.168.1.1:25' } }, 'primary.smtp_url'],
        [{ primary: { smtp_url: 'smtps://db01.corp.example:465' } }, 'primary.smtp_url'],
        [
          {
            primary: { smtp_url: 'smtp://u:p@relay.example:587' },
            fallback: { smtp_url: 'smtp://169.254.169.254:80' },
          },
          'fallback.smtp_url',
        ],
        [
          {
            primary: { smtp_url: 'smtp://u:p@relay.example:587' },
            fallback: { smtp_url: 'smtp://metadata.corp.example:25' },
          },
          'fallback.smtp_url',
        ],
      ];
      for (const [body, member] of cases) {
        const r = await bearerCall(t.app, adminToken, 'PUT', url, body);
        assert.equal(r.status, 422, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.detail.error.code, 'validation_error');
        assert.equal(r.body.detail.error.reason, 'smtp_url_private');
        assert.deepEqual(Object.keys(r.body.detail.error.invalid_fields), [member]);
      }
      assert.equal(ssh.connections(), 0, 'nothing connected while saving');
      assert.equal((await adminCall(t.app, 'GET', url)).body.configured, false);
    });

    it('accepts only smtp:// and smtps:// with user, password, host and port; a query string is 422', async () => {
      for (const [smtpUrl, reason] of [
        ['smtp://u:p@relay.example:587?proxy=socks5://10.0.0.1:1080', 'smtp_url_query'],
        ['smtp://relay.example:587/?localAddress=10.0.0.2', 'smtp_url_query'],
        ['http://relay.example:587', 'smtp_url_scheme'],
        ['smtp://relay.example:587/path', 'smtp_url_path'],
      ]) {
        const r = await bearerCall(t.app, adminToken, 'PUT', url, { primary: { smtp_url: smtpUrl } });
        assert.equal(r.status, 422, smtpUrl);
        assert.equal(r.body.detail.error.reason, reason, smtpUrl);
        assert.deepEqual(Object.keys(r.body.detail.error.invalid_fields), ['primary.smtp_url']);
      }
      const ok = await bearerCall(t.app, adminToken, 'PUT', url, {
        primary: { smtp_url: 'smtp://u:p@relay.example:587' },
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    });

    it('only an owner allows private relays, audited; the check then calls an SSH server not_smtp, echoing nothing', async () => {
      const denied = await bearerCall(t.app, adminToken, 'PATCH', '/api/admin/projects/proja', {
        allow_private_relays: true,
      });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.detail.error.code, 'permission_denied');
      const allowed = await adminCall(t.app, 'PATCH', '/api/admin/projects/proja', { allow_private_relays: true });
      assert.equal(allowed.status, 200);
      assert.equal(allowed.body.project.allow_private_relays, true);
      const audit = (await adminCall(t.app, 'GET', '/api/admin/audit?site_key=proja&action=project.update')).body
        .items as any[];
      assert.ok(
        audit.some((a) => a.before?.allow_private_relays === false && a.after?.allow_private_relays === true),
        'the audit log has the change',
      );

      const saved = await bearerCall(t.app, adminToken, 'PUT', url, {
        primary: { smtp_url: `smtp://127.0.0.1:${ssh.port}` },
      });
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      const check = await bearerCall(t.app, adminToken, 'POST', `${url}/verify`);
      assert.equal(check.status, 200, JSON.stringify(check.body));
      assert.equal(check.body.ok, false);
      assert.equal(check.body.primary.reason, 'not_smtp');
      assert.ok(ssh.connections() >= 1, 'the check did connect');
      const everything =
        JSON.stringify(check.body) + JSON.stringify((await adminCall(t.app, 'GET', '/api/admin/audit')).body);
      assert.ok(!everything.includes('SSH-2.0') && !everything.includes('db01'), 'the banner is never echoed');
    });

    it('once the owner withdraws the permission, the check connects to nothing', async () => {
      assert.equal(
        (await adminCall(t.app, 'PATCH', '/api/admin/projects/proja', { allow_private_relays: false })).status,
        200,
      );
      const before = ssh.connections();
      const check = await bearerCall(t.app, adminToken, 'POST', `${url}/verify`);
      assert.equal(check.status, 200);
      assert.equal(check.body.primary.reason, 'address_private');
      assert.equal(ssh.connections(), before);
    });
  });
}
