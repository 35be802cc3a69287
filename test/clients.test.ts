// The PHP and TypeScript clients against the real gateway: `serve` as a process (SQLite; PostgreSQL too
// when TEST_DATABASE_URL is set), with a proxy that drops or fails chosen requests. The TypeScript client
// is compiled as it is packed (tsc) and imported from the output; the PHP client runs its PHPUnit suite
// (Debian's phpunit) with the gateway's address and keys in the environment, and webhook vectors made by
// the Standard Webhooks reference (test/support/webhookVectors.ts). Also: the committed TypeScript types
// match the served /openapi.json, both clients carry the gateway's version, and the plain-PHP webhook
// page takes a delivery the reference signed.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { GENERATED_FILE, generateTypes, REGENERATE_HINT } from '../scripts/clients-generate.js';
import { freePort, until } from './fixtures/delivery-support.js';
import { DIALECTS } from './support/harness.js';
import {
  LIVE_ADMIN_TOKEN,
  startBreakingProxy,
  startLiveGateway,
  type BreakingProxy,
  type LiveGateway,
} from './support/liveGateway.js';
import { webhookVectors } from './support/webhookVectors.js';

type ClientModule = typeof import('../clients/ts/src/index.js');
const run = promisify(execFile);
const CI = process.env.CI === 'true';
const PHP_DIR = join('clients', 'php');

/** Compiles clients/ts as `npm pack` does (once for the file) and imports the output. */
const tsOut = mkdtempSync(join(tmpdir(), 'egw-client-ts-'));
let tsBuild: Promise<ClientModule> | null = null;
const buildTsClient = () =>
  (tsBuild ??= run(process.execPath, [
    join('node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    'clients/ts',
    '--outDir',
    tsOut,
  ]).then(async () => (await import(pathToFileURL(join(tsOut, 'index.js')).href)) as ClientModule));
after(() => rmSync(tsOut, { recursive: true, force: true }));

/** The reference's webhook vectors, for the PHP verifier's tests (GATEWAY_WEBHOOK_VECTORS). */
const vectorsFile = join(tsOut, 'webhook-vectors.json');
writeFileSync(vectorsFile, JSON.stringify(webhookVectors()));

/** Whether a command exists; in CI a missing one fails the test instead of skipping it. */
async function have(t: TestContext, command: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${command}`]);
    return true;
  } catch {
    if (CI)
      assert.fail(
        `${command} is not installed: .ci/run installs php-cli, php-curl, php-mbstring, php-xml, composer, phpunit`,
      );
    t.skip(`${command} is not installed (CI=true makes this a failure)`);
    return false;
  }
}

/** examples/webhook.php under `php -S`; its error_log lines go to the server's output, kept in `log`. */
async function startPhpWebhookPage(t: TestContext, secret: string, port: number) {
  const server = spawn('php', ['-S', `127.0.0.1:${port}`, join(PHP_DIR, 'examples', 'webhook.php')], {
    env: { ...process.env, GATEWAY_WEBHOOK_SECRET: secret },
  });
  const page = { url: `http://127.0.0.1:${port}/`, log: '' };
  server.stderr.on('data', (c) => (page.log += c));
  server.stdout.on('data', (c) => (page.log += c));
  t.after(() => server.kill());
  // Up once it answers at all (an unsigned GET is refused with 400).
  await until(
    async () => {
      if (server.exitCode !== null) assert.fail(`php -S exited: ${page.log}`);
      return fetch(page.url).then(
        () => true,
        () => false,
      );
    },
    15_000,
    'php -S listening',
  );
  return page;
}

describe('clients: versions and generated types', () => {
  it('both clients carry the gateway version', () => {
    const version = JSON.parse(readFileSync('package.json', 'utf8')).version;
    assert.equal(
      JSON.parse(readFileSync('clients/ts/package.json', 'utf8')).version,
      version,
      'clients/ts/package.json',
    );
    assert.match(readFileSync('clients/ts/src/client.ts', 'utf8'), new RegExp(`VERSION = '${version}'`));
    assert.match(readFileSync('clients/php/src/Client.php', 'utf8'), new RegExp(`VERSION = '${version}'`));
  });
});

for (const d of DIALECTS) {
  describe(`clients against a running gateway (${d.name})`, { skip: d.skip }, () => {
    let gw: LiveGateway;
    let proxy: BreakingProxy;
    let key = '';
    let slowTs = '';
    let slowPhp = '';
    let listId = 0;
    const ts = { mod: null as unknown as ClientModule };

    before(async () => {
      [gw, ts.mod] = await Promise.all([startLiveGateway(d.name), buildTsClient()]);
      proxy = await startBreakingProxy(gw.url);
      listId = (await gw.admin('POST', '/api/lists', { site_key: gw.siteKey, name: 'client tests' })).list_id;
      const rights = {
        permissions: ['transactional_send', 'cart_events_write', 'list_contacts_write'],
        allowed_api_events: ['contest_results', 'course_paid', 'olympiad_results'],
        allowed_template_keys: [],
        allowed_cart_types: ['course', 'diploma'],
        list_id: listId,
      };
      const create = async (name: string, extra = {}) =>
        (await gw.admin('POST', '/api/admin/keys', { site_key: gw.siteKey, name, rights, ...extra })).key as string;
      key = await create('client tests');
      // SPEC §16: olympiad_results routed to a template that needs fields.score beyond the catalog.
      await gw.admin('POST', '/api/templates', {
        site_key: gw.siteKey,
        name: 'client_olympiad',
        subject: '{{ event_title }}',
        html: '<p>{{ fields.score }}</p>',
        text: '{{ fields.score }}',
      });
      const { routes } = await gw.admin('GET', `/api/admin/projects/${gw.siteKey}/routing`);
      await gw.admin('PUT', `/api/admin/projects/${gw.siteKey}/routing`, {
        routes: { ...routes, olympiad_results: 'client_olympiad' },
        confirm: true,
      });
      // One request per second: the second within a second is a 429 with Retry-After: 1.
      slowTs = await create('client tests, slow (ts)', { rate_limit: { per_second: 1, burst: 1 } });
      slowPhp = await create('client tests, slow (php)', { rate_limit: { per_second: 1, burst: 1 } });
    });
    after(async () => {
      await proxy?.close();
      await gw?.close();
    });

    const emailsOf = async (order: string) =>
      (await gw.admin('GET', `/api/admin/emails?site_key=${gw.siteKey}&order_id=${order}`)).items as any[];
    const eventsOf = async (order: string) =>
      (await gw.admin('GET', `/api/admin/external-events?site_key=${gw.siteKey}&order_id=${order}&order=asc`))
        .items as any[];
    const unique = (prefix: string) => `${prefix}-ts-${Math.random().toString(36).slice(2, 10)}`;

    if (d.name === 'sqlite') {
      it('the committed TypeScript types match the served /openapi.json', async () => {
        const served = await (await fetch(`${gw.url}/openapi.json`)).json();
        const fresh = await generateTypes(served);
        assert.ok(fresh === readFileSync(GENERATED_FILE, 'utf8'), REGENERATE_HINT);
      });
    }

    describe('TypeScript client', () => {
      const retries: any[] = [];
      const client = (opts: Record<string, unknown> = {}) =>
        new ts.mod.GatewayClient({ baseUrl: gw.url, apiKey: key, onRetry: (i) => retries.push(i), ...opts });

      it('catalog, transactional (key derived from order and event type), order-created, purchase, list upsert', async () => {
        retries.length = 0;
        const c = client();
        const catalog = await c.catalog();
        assert.deepEqual(catalog.supported_events, ['contest_results', 'course_paid', 'olympiad_results']);
        const contest = catalog.events.find((e) => e.event_type === 'contest_results')!;
        assert.deepEqual(contest.required_fields, ['event_type', 'email', 'fields.event_title', 'fields.work_title']);

        const order = unique('order');
        const created = await c.orderCreated({
          cart_type: 'course',
          email: 'anna@example.com',
          name: 'Анна',
          order_id: order,
          course_name: 'Инклюзивное образование',
          fields: { pay_url: `https://site.example/pay/${order}` },
        });
        assert.equal(created.scheduled_email_ids.length, 3);
        const paid = await c.purchase({
          cart_type: 'course',
          email: 'anna@example.com',
          order_id: order,
          amount: 2500,
          currency: 'RUB',
          fields: { paid_at: new Date().toISOString(), course_category_id: '3' },
        });
        assert.equal(paid.stopped, 3);
        assert.equal(paid.address_books.length, 2);

        const event = {
          event_type: 'course_paid',
          email: 'anna@example.com',
          name: 'Анна',
          order_id: order,
          fields: { course_name: 'Инклюзивное образование' },
        };
        const sent = await c.sendTransactional(event);
        assert.equal(typeof sent.scheduled_email_id, 'number');
        assert.ok(['sent', 'queued'].includes(sent.status));
        const again = await c.sendTransactional(event);
        assert.equal(again.scheduled_email_id, sent.scheduled_email_id, 'a repeat replays the first answer');
        const keys = (await eventsOf(order)).map((e) => e.idempotency_key);
        assert.match(keys[0], new RegExp(`^${order}:order-created:[0-9a-f]{16}$`));
        assert.match(keys[1], new RegExp(`^${order}:purchase:[0-9a-f]{16}$`));
        assert.deepEqual(keys.slice(2), [`${order}:course_paid`, `${order}:course_paid`]);
        const emails = await emailsOf(order);
        assert.equal(emails.filter((e) => e.status === 'cancelled').length, 3);
        assert.equal(emails.filter((e) => e.status !== 'cancelled').length, 1, 'one payment e-mail');

        const contact = await c.upsertListContact(listId, { email: 'anna@example.com', name: 'Анна' });
        assert.equal(contact.list_id, listId);
        assert.equal(
          (await c.sendTransactional({ ...event, order_id: undefined }, { respondAsync: true })).status,
          'queued',
        );
        assert.equal(retries.length, 0);
      });

      it('consent with an event and alone, then the erasure a site passes on', async () => {
        const c = client();
        const email = `${unique('consent')}@example.com`;
        const created = await c.orderCreated({
          cart_type: 'course',
          email,
          order_id: unique('co'),
          consent: [{ topic: 'cart_reminders', granted: false, ip: '203.0.113.5', text_version: 'v1' }],
        });
        assert.deepEqual(
          created.plan.map((p) => [p.status, p.reason]),
          [
            ['suppressed', 'contact_unsubscribed'],
            ['suppressed', 'contact_unsubscribed'],
            ['suppressed', 'contact_unsubscribed'],
          ],
        );
        const granted = await c.recordConsent({ email, topic: 'newsletters', granted: true, text_version: 'v2' });
        assert.equal(granted.subscribed, true);
        await assert.rejects(
          c.recordConsent({ email, topic: 'nope', granted: true }),
          (e: any) => e instanceof ts.mod.ValidationError && 'topic' in (e.details.invalid_fields as object),
        );
        const erased = await c.eraseContact(email);
        assert.equal(erased.status, 'done');
        await assert.rejects(c.eraseContact(email), (e: any) => e instanceof ts.mod.GatewayError && e.status === 404);
      });

      it('plan in the answers; scoped reads of e-mails and chronology, page by page', async () => {
        retries.length = 0;
        const c = client();
        const order = unique('scoped');
        const created = await c.orderCreated({ cart_type: 'course', email: 'scoped@example.com', order_id: order });
        assert.deepEqual(
          created.plan.map((p) => [p.step, p.status, p.scheduled_email_id]),
          created.scheduled_email_ids.map((id, i) => [['1h', '1d', '3d'][i], 'scheduled', id]),
        );
        const paid = await c.purchase({ cart_type: 'course', email: 'scoped@example.com', order_id: order });
        assert.deepEqual(
          paid.plan.map((p) => [p.scheduled_email_id, p.status, p.reason]),
          created.scheduled_email_ids.map((id) => [id, 'cancelled', 'cancelled_by_purchase']),
        );
        const sent = await c.sendTransactional({
          event_type: 'course_paid',
          email: 'scoped@example.com',
          order_id: order,
        });
        assert.equal(sent.plan.length, 1);
        assert.equal(sent.plan[0].scheduled_email_id, sent.scheduled_email_id);

        const one = await c.email(created.scheduled_email_ids[0]);
        assert.equal(one.id, created.scheduled_email_ids[0]);
        assert.equal(one.status, 'cancelled');
        assert.equal(one.reason, 'cancelled_by_purchase');
        assert.equal(one.order_id, order);
        // SPEC §17: the first human open and click, null for an e-mail nobody opened.
        assert.equal(one.opened_at, null);
        assert.equal(one.clicked_at, null);
        assert.equal(paid.attributed_to, null, 'no click: the purchase is attributed to no e-mail');
        const missing = await c.email(2_000_000_000).catch((e) => e);
        assert.ok(missing instanceof ts.mod.GatewayError && missing.status === 404 && missing.code === 'not_found');

        const first = await c.emails({ order_id: order, limit: 2 });
        assert.equal(first.items.length, 2);
        assert.equal(typeof first.next_cursor, 'string');
        const all: number[] = [];
        for await (const e of c.iterateEmails({ order_id: order, limit: 1 })) all.push(e.id);
        assert.deepEqual(
          [...all].sort((a, b) => a - b),
          [...created.scheduled_email_ids, sent.scheduled_email_id].sort((a, b) => a! - b!),
        );
        const byKey = await c.emails({ idempotency_key: `${order}:course_paid` });
        assert.deepEqual(
          byKey.items.map((e) => e.id),
          [sent.scheduled_email_id],
        );

        const rows: string[] = [];
        for await (const e of c.iterateEvents({ order_id: order, order: 'asc', limit: 1 })) rows.push(e.endpoint);
        assert.equal(rows.length, 3);
        const page = await c.events({ order_id: order, limit: 2 });
        assert.equal(page.items.length, 2);
        assert.ok(page.items[0].id > page.items[1].id, 'newest first');
        assert.equal(page.items[0].idempotency_key, `${order}:course_paid`);
        assert.equal(typeof page.next_cursor, 'string');
        const since = await c.events({ order_id: order, since: new Date(Date.now() + 60_000).toISOString() });
        assert.deepEqual(since.items, []);
        assert.equal(retries.length, 0);
      });

      it('a dry run at the gateway: the plan, nothing kept, and the real call after it still sends', async () => {
        retries.length = 0;
        const c = client();
        const order = unique('dry');
        const created = await c.orderCreated(
          { cart_type: 'course', email: 'dry@example.com', order_id: order },
          { dryRun: true },
        );
        assert.equal(created.dry_run, true);
        assert.deepEqual(created.scheduled_email_ids, []);
        assert.deepEqual(
          created.plan.map((p) => [p.step, p.status]),
          [
            ['1h', 'scheduled'],
            ['1d', 'scheduled'],
            ['3d', 'scheduled'],
          ],
        );
        const event = { event_type: 'course_paid', email: 'dry@example.com', order_id: order };
        const preview = await c.sendTransactional(event, { dryRun: true });
        assert.equal(preview.dry_run, true);
        assert.equal(preview.scheduled_email_id, null);
        assert.equal(preview.plan.length, 1);
        assert.deepEqual((await c.emails({ order_id: order })).items, []);
        const rows = (await c.events({ order_id: order })).items;
        assert.deepEqual(
          rows.map((r) => r.effects.dry_run),
          [true, true],
        );
        // The dry run kept no idempotency record: the same derived key now sends for real.
        const real = await c.sendTransactional(event);
        assert.equal(real.dry_run, undefined);
        assert.equal(typeof real.scheduled_email_id, 'number');
        assert.equal(retries.length, 0);
      });

      it('dryRun sends ?dry_run=true and refuses an answer that was not a dry run', async () => {
        const urls: string[] = [];
        let dryRunAnswer = true;
        const fake: typeof fetch = async (input) => {
          urls.push(input instanceof Request ? input.url : input.toString());
          const body = { ok: true, event_id: 1, plan: [], ...(dryRunAnswer ? { dry_run: true } : {}) };
          return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
        };
        const c = client({ baseUrl: 'http://gateway.invalid', fetch: fake });
        const event = { event_type: 'course_paid', email: 'd@example.com', order_id: 'dry-1' };
        const r = await c.sendTransactional(event, { dryRun: true });
        assert.equal(r.dry_run, true);
        await c.orderCreated({ cart_type: 'course', email: 'd@example.com', order_id: 'dry-1' }, { dryRun: true });
        await c.purchase({ cart_type: 'course', email: 'd@example.com', order_id: 'dry-1' }, { dryRun: true });
        await c.sendTransactional(event);
        assert.deepEqual(urls, [
          'http://gateway.invalid/api/scoped/send/transactional?dry_run=true',
          'http://gateway.invalid/api/scoped/events/order-created?dry_run=true',
          'http://gateway.invalid/api/scoped/events/purchase?dry_run=true',
          'http://gateway.invalid/api/scoped/send/transactional',
        ]);
        dryRunAnswer = false;
        const e = await c.sendTransactional(event, { dryRun: true }).catch((err) => err);
        assert.ok(e instanceof ts.mod.GatewayError);
        assert.equal(e.code, 'dry_run_unsupported');
      });

      it('a 422 is a ValidationError with its fields, never retried', async () => {
        retries.length = 0;
        const c = client();
        const e1 = await c.sendTransactional({ event_type: 'contest_results', email: 'a@example.com' }).catch((e) => e);
        assert.ok(e1 instanceof ts.mod.ValidationError, String(e1));
        assert.equal(e1.status, 422);
        assert.equal(e1.code, 'validation_error');
        assert.equal(e1.eventType, 'contest_results');
        assert.deepEqual(e1.missingFields, ['fields.event_title', 'fields.work_title']);
        assert.deepEqual(e1.requiredFields, ['event_type', 'email', 'fields.event_title', 'fields.work_title']);
        assert.deepEqual(e1.invalidFields, {});
        const e2 = await c
          .sendTransactional({
            event_type: 'contest_results',
            email: 'nope',
            fields: { event_title: 'E', work_title: 'W' },
          })
          .catch((e) => e);
        assert.ok(e2 instanceof ts.mod.ValidationError);
        assert.ok('email' in e2.invalidFields);
        assert.equal(retries.length, 0);
      });

      it('a wrong key is an AuthError; other data for the same order and event is an IdempotencyConflictError', async () => {
        retries.length = 0;
        const bad = await client({ apiKey: `egw_live_${'x'.repeat(46)}` })
          .catalog()
          .catch((e) => e);
        assert.ok(bad instanceof ts.mod.AuthError);
        assert.equal(bad.code, 'invalid_api_key');
        const order = unique('conflict');
        const event = { event_type: 'contest_results', email: 'c@example.com', order_id: order };
        await client().sendTransactional({ ...event, fields: { event_title: 'E', work_title: 'first' } });
        const conflict = await client()
          .sendTransactional({ ...event, fields: { event_title: 'E', work_title: 'second' } })
          .catch((e) => e);
        assert.ok(conflict instanceof ts.mod.IdempotencyConflictError);
        assert.equal(conflict.idempotencyKey, `${order}:contest_results`);
        assert.equal((await emailsOf(order)).length, 1);
        assert.equal(retries.length, 0);
      });

      it('a connection dropped after the gateway got the request is retried with the same key: one e-mail', async () => {
        retries.length = 0;
        const order = unique('cut');
        const r = await client({ baseUrl: proxy.url, retryBaseMs: 20 }).sendTransactional({
          event_type: 'contest_results',
          email: 'dropped@example.com',
          order_id: order,
          fields: { event_title: 'E', work_title: 'W' },
        });
        assert.ok(proxy.broken.includes(order), 'the proxy cut the first answer');
        assert.equal(retries.length, 1);
        assert.ok(retries[0].error instanceof ts.mod.ConnectionError);
        assert.equal(retries[0].idempotencyKey, `${order}:contest_results`);
        const events = await eventsOf(order);
        assert.equal(events.length, 2, 'the gateway got both attempts');
        assert.equal(events[1].effects.replay_of, events[0].id);
        const emails = await emailsOf(order);
        assert.equal(emails.length, 1, 'one e-mail, not two');
        assert.equal(emails[0].id, r.scheduled_email_id);
      });

      it('a 5xx is retried with backoff and the same key', async () => {
        retries.length = 0;
        const order = unique('fail503');
        await client({ baseUrl: proxy.url, retryBaseMs: 20 }).purchase({
          cart_type: 'course',
          email: 'p@example.com',
          order_id: order,
        });
        assert.equal(retries.length, 1);
        assert.ok(retries[0].error instanceof ts.mod.ServerError);
        assert.equal(retries[0].error.status, 503);
        const events = await eventsOf(order);
        assert.deepEqual(
          events.map((e) => e.idempotency_key),
          [retries[0].idempotencyKey],
        );
      });

      it('a 429 is retried after Retry-After', async () => {
        retries.length = 0;
        const c = client({ apiKey: slowTs });
        assert.equal(
          (await fetch(`${gw.url}/api/scoped/events/catalog`, { headers: { 'x-api-key': slowTs } })).status,
          200,
        );
        const started = Date.now();
        const r = await c.sendTransactional(
          { event_type: 'contest_results', email: 'slow@example.com', fields: { event_title: 'E', work_title: 'W' } },
          { respondAsync: true },
        );
        assert.equal(r.ok, true);
        assert.equal(retries.length, 1);
        assert.ok(retries[0].error instanceof ts.mod.RateLimitedError);
        assert.equal(retries[0].error.retryAfter, 1);
        assert.equal(retries[0].delayMs, 1000);
        assert.ok(Date.now() - started >= 1000, 'waited what Retry-After said');

        // The bucket is empty again: a Retry-After longer than the client may wait is thrown at once.
        retries.length = 0;
        const e = await client({ apiKey: slowTs, maxRetryAfterMs: 500 })
          .catalog()
          .catch((err) => err);
        assert.ok(e instanceof ts.mod.RateLimitedError);
        assert.equal(e.retryAfter, 1);
        assert.equal(retries.length, 0);
        assert.equal(ts.mod.parseRetryAfter('Wed, 21 Oct 2026 07:30:00 GMT', Date.parse('2026-10-21T07:28:00Z')), 120);
        assert.equal(ts.mod.parseRetryAfter('soon'), null);
      });
    });

    describe('PHP client', () => {
      const phpEnv = () => ({
        ...process.env,
        GATEWAY_URL: gw.url,
        GATEWAY_PROXY_URL: proxy.url,
        GATEWAY_API_KEY: key,
        GATEWAY_SLOW_KEY: slowPhp,
        GATEWAY_LIST_ID: String(listId),
        GATEWAY_SITE_KEY: gw.siteKey,
        GATEWAY_ADMIN_TOKEN: LIVE_ADMIN_TOKEN,
        GATEWAY_WEBHOOK_VECTORS: vectorsFile,
      });

      it('PHPUnit suite (Debian phpunit) against the gateway', async (t) => {
        if (!(await have(t, 'php')) || !(await have(t, 'phpunit'))) return;
        const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
          const child = spawn('phpunit', ['--do-not-cache-result', '-c', join(PHP_DIR, 'phpunit.xml.dist')], {
            env: phpEnv(),
          });
          let output = '';
          child.stdout.on('data', (c) => (output += c));
          child.stderr.on('data', (c) => (output += c));
          child.on('close', (c) => resolve({ code: c, output }));
        });
        assert.equal(code, 0, output);
        assert.match(output, /^OK \(\d+ tests?, \d+ assertions?\)$/m, output);
      });

      it('the plain-PHP example sends the four events', async (t) => {
        if (!(await have(t, 'php'))) return;
        const order = unique('example');
        const { stdout } = await run('php', [join(PHP_DIR, 'examples', 'plain.php'), order], {
          env: { ...phpEnv(), GATEWAY_LIST_KEY: key },
        });
        assert.match(stdout, /^catalog: \d+ events/m);
        assert.match(stdout, new RegExp(`^order-created: order ${order}, cart e-mails \\d+, \\d+, \\d+$`, 'm'));
        assert.match(stdout, /^purchase: stopped 3, address books \d+, \d+$/m);
        assert.match(stdout, /^transactional: e-mail \d+ (sent|queued)$/m);
        assert.match(stdout, /^list contact: \d+ in address book \d+$/m);
      });

      if (d.name === 'sqlite') {
        it('the plain-PHP webhook page (php -S) takes a delivery the reference signed and refuses a forged one', async (t) => {
          if (!(await have(t, 'php'))) return;
          const secret = `whsec_${randomBytes(24).toString('base64')}`;
          const page = await startPhpWebhookPage(t, secret, await freePort());
          const body = JSON.stringify({
            type: 'email.bounced',
            timestamp: new Date().toISOString(),
            data: { site_key: 's', scheduled_email_id: 7, order_id: '1001', email: 'a@example.com', reason: '550 нет' },
          });
          const deliver = async (signWith: string) => {
            const now = new Date();
            return fetch(page.url, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                'webhook-id': 'msg_php',
                'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
                'webhook-signature': new Webhook(signWith).sign('msg_php', now, body),
              },
              body,
            });
          };
          assert.equal((await deliver(secret)).status, 204);
          assert.equal((await deliver(`whsec_${randomBytes(24).toString('base64')}`)).status, 400);
          // php -S writes the page's error_log after the answer has gone: wait for the lines.
          const logged = (re: RegExp) => until(() => re.test(page.log), 10_000, `${re} in ${page.log}`);
          await logged(/webhook msg_php: email\.bounced a@example\.com order 1001 \(550 нет\)/);
          await logged(/webhook refused: No matching signature/);
        });

        it('webhooks from the gateway: the PHP page and the TypeScript verifier take its real deliveries', async (t) => {
          if (!(await have(t, 'php'))) return;
          // A Node receiver that keeps what arrives, verified below with the TypeScript client.
          const received: { raw: string; headers: IncomingHttpHeaders }[] = [];
          const receiver = createServer((req, res) => {
            let raw = '';
            req.setEncoding('utf8');
            req.on('data', (c: string) => (raw += c));
            req.on('end', () => {
              received.push({ raw, headers: req.headers });
              res.writeHead(204).end();
            });
          });
          await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
          t.after(() => {
            receiver.closeAllConnections();
            receiver.close();
          });
          const hooks = `/api/admin/projects/${gw.siteKey}/webhooks`;
          const tsHook = await gw.admin('POST', hooks, {
            url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`,
            events: ['email.sent'],
          });
          const phpPort = await freePort();
          const phpHook = await gw.admin('POST', hooks, {
            url: `http://127.0.0.1:${phpPort}/`,
            events: ['email.sent'],
          });
          t.after(async () => {
            for (const h of [tsHook, phpHook]) await gw.admin('DELETE', `${hooks}/${h.id}`);
          });
          const page = await startPhpWebhookPage(t, phpHook.secret, phpPort);

          const order = unique('hook');
          const sent = await new ts.mod.GatewayClient({ baseUrl: gw.url, apiKey: key }).sendTransactional({
            event_type: 'course_paid',
            email: 'hook@example.com',
            order_id: order,
          });
          await until(
            () =>
              page.log.includes(`email.sent e-mail ${sent.scheduled_email_id} order ${order}`) &&
              received.some((r) => r.raw.includes(order)),
            60_000,
            'both deliveries',
          );
          const delivery = received.find((r) => r.raw.includes(order))!;
          const event = new ts.mod.WebhookVerifier(tsHook.secret).verify(delivery.raw, delivery.headers);
          assert.equal(event.type, 'email.sent');
          assert.equal(event.id, delivery.headers['webhook-id']);
          assert.equal(event.data.site_key, gw.siteKey);
          assert.equal(event.data.scheduled_email_id, sent.scheduled_email_id);
          assert.equal(event.data.order_id, order);
          assert.equal(event.data.event_type, 'course_paid');
          assert.equal(event.data.idempotency_key, `${order}:course_paid`);
          assert.equal(event.data.status, 'sent');
          assert.throws(
            () => new ts.mod.WebhookVerifier(phpHook.secret).verify(delivery.raw, delivery.headers),
            ts.mod.WebhookVerificationError,
            "another endpoint's secret",
          );
        });

        it('every PHP file parses, and composer.json is valid', async (t) => {
          if (!(await have(t, 'php')) || !(await have(t, 'composer'))) return;
          const files = (readdirSync(PHP_DIR, { recursive: true }) as string[]).filter((f) => f.endsWith('.php'));
          assert.ok(files.length >= 15);
          for (const f of files) await run('php', ['-l', join(PHP_DIR, f)]);
          await run('composer', ['validate', '--strict', '--no-check-publish', '--no-interaction'], { cwd: PHP_DIR });
        });
      }
    });
  });
}
