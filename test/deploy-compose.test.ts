// deploy/compose.yaml as an operator runs it (SPEC §23): `podman-compose up` with deploy/.env.example
// copied (the api's /healthz, the setup link in its log), then SMTP_URL and ADMIN_TOKEN added and the
// stack started again (the admin token, the image's HEALTHCHECK in both roles, one e-mail reaching a
// real SMTP listener on this host through the worker). Needs podman and podman-compose
// (../shared/tools/containers-setup.sh installs them with stand-ins for the official images); without
// them it is skipped with a line saying so. The image: GATEWAY_TEST_IMAGE when set (.ci/run builds it
// first, so this file's time is the stack's alone), otherwise built here from the Containerfile.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { SMTPServer } from 'smtp-server';

const run = promisify(execFile);
const has = (cmd: string) => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status === 0;
const missing = ['podman', 'podman-compose'].filter((c) => !has(c));
const skip = missing.length
  ? `${missing.join(' and ')} not installed: the compose test needs them (run ../shared/tools/containers-setup.sh)`
  : false;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await probe();
      if (v !== null) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

describe('deploy/compose.yaml under podman-compose', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'egw-compose-'));
  const project = `egwtest${process.pid}`;
  const prebuilt = process.env.GATEWAY_TEST_IMAGE?.trim();
  const image = prebuilt || `localhost/edu-gateway:test-${process.pid}`;
  const adminToken = 'compose-test-admin-token-0123456789';
  const compose = (...args: string[]) =>
    run('podman-compose', ['-p', project, '-f', join(dir, 'compose.yaml'), ...args], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    });
  const received: { to: string[]; data: string }[] = [];
  let smtp: SMTPServer;
  let apiPort = 0;
  let smtpPort = 0;
  let example = '';

  before(async () => {
    // The SMTP sink the worker's relay points at: on this host, reached from the containers' network.
    smtp = new SMTPServer({
      logger: false,
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData(stream, session, cb) {
        let data = '';
        stream.on('data', (c) => (data += String(c)));
        stream.on('end', () => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), data });
          cb(null);
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '0.0.0.0', r));
    smtpPort = (smtp.server.address() as AddressInfo).port;
    apiPort = await freePort();
    const bouncePort = await freePort();

    if (!prebuilt)
      await run('podman', ['build', '-q', '--format', 'docker', '-t', image, '-f', 'Containerfile', '.'], {
        maxBuffer: 64 * 1024 * 1024,
      });
    copyFileSync('deploy/compose.yaml', join(dir, 'compose.yaml'));
    // What the README tells an operator to do first: copy the example. The ports, PUBLIC_URL and the
    // image tag only keep this run apart from anything else on the machine.
    example = [
      readFileSync('deploy/.env.example', 'utf8'),
      `API_PORT=${apiPort}`,
      `BOUNCE_PORT=${bouncePort}`,
      `PUBLIC_URL=http://127.0.0.1:${apiPort}`,
      `GATEWAY_IMAGE=${image}`,
      '',
    ].join('\n');
    writeFileSync(join(dir, '.env'), example);
    await compose('up', '-d');
  });

  after(async () => {
    await compose('down', '-v').catch((err: Error) => console.error(`compose down: ${err.message}`));
    if (!prebuilt) await run('podman', ['rmi', '-f', image]).catch(() => {});
    await new Promise<void>((r) => smtp.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts from the copied example with the setup link in the api log; with SMTP_URL and ADMIN_TOKEN it sends', async () => {
    const base = `http://127.0.0.1:${apiPort}`;
    const ready = async () => {
      await until('the api /healthz', 240_000, async () => ((await fetch(`${base}/healthz`)).ok ? true : null));
      await until('the api /readyz', 120_000, async () => ((await fetch(`${base}/readyz`)).ok ? true : null));
    };
    await ready();

    const logs = await until('the setup link in the api log', 60_000, async () => {
      const { stdout, stderr } = await run('podman', ['logs', `${project}_api_1`]);
      return /\/ui\/setup\?code=\S+/.test(stdout + stderr) ? stdout + stderr : null;
    });
    assert.match(logs, new RegExp(`http://127\\.0\\.0\\.1:${apiPort}/ui/setup\\?code=`), 'the link uses PUBLIC_URL');

    // The operator adds the relay and a root token, and starts the stack again (the data volume stays).
    writeFileSync(
      join(dir, '.env'),
      `${example}SMTP_URL=smtp://host.containers.internal:${smtpPort}\nADMIN_TOKEN=${adminToken}\n`,
    );
    await compose('down');
    await compose('up', '-d');
    await ready();

    // The image's own HEALTHCHECK, in both roles (the worker's /healthz is on METRICS_PORT).
    for (const svc of ['api', 'worker']) {
      const r = spawnSync('podman', ['healthcheck', 'run', `${project}_${svc}_1`], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${svc} HEALTHCHECK: ${r.stdout}${r.stderr}`);
    }

    const admin = await fetch(`${base}/api/admin/projects`, { headers: { authorization: `Bearer ${adminToken}` } });
    assert.equal(admin.status, 200, 'ADMIN_TOKEN from deploy/.env reaches the api');
    const anonymous = await fetch(`${base}/api/admin/projects`);
    assert.equal(anonymous.status, 401);

    // A project and its keys, made with the CLI inside the api container as an operator would.
    const demo = await run('podman', ['exec', `${project}_api_1`, 'edu-gateway', 'demo']);
    const key = /transactional \+ carts: (egw_live_\S+)/.exec(demo.stdout)?.[1];
    assert.ok(key, `demo printed a key:\n${demo.stdout}`);
    const res = await fetch(`${base}/api/scoped/send/transactional`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, prefer: 'respond-async' },
      body: JSON.stringify({
        event_type: 'contest_results',
        email: 'compose@example.com',
        name: 'C',
        fields: { event_title: 'E', work_title: 'W' },
      }),
    });
    const queued = (await res.json()) as { status?: string };
    assert.equal(queued.status, 'queued', JSON.stringify(queued));
    const mail = await until('the e-mail at the SMTP listener', 180_000, async () =>
      Promise.resolve(received.find((m) => m.to.includes('compose@example.com')) ?? null),
    );
    assert.match(mail.data, /^Subject: /m);
  });
});
