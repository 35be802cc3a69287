// Webhook delivery's guarantees (SPEC §13): private and loopback addresses refused when saved and again
// when sent (a name that later resolves elsewhere), no redirects followed, bounded time-outs, secrets
// sealed at rest, deliveries committed only with the change they report, and on PostgreSQL two workers
// on their own pools never sending one delivery twice.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../src/db/index.js';
import { createWebhookWorker } from '../src/workers/siteWebhooks.js';
import { createWorker } from '../src/delivery/worker.js';
import type { OutgoingMessage, Transport } from '../src/delivery/transports.js';
import { enqueueNotices, enqueueSiteWebhooks } from '../src/services/siteWebhooks/enqueue.js';
import { sealingSecret } from '../src/services/delivery.js';
import type { Resolver } from '../src/services/siteWebhooks/send.js';
import { claimDeliveries, expireWebhookLeases } from '../src/repos/siteWebhooks.js';
import { adminCall, createTestApp, DIALECTS, keyCall, PG_URL, setupProject, type TestApp } from './support/harness.js';
import { startReceiver, type Receiver } from './support/webhookReceiver.js';

// Names the tests' resolver knows: there is no outside DNS here.
const names = new Map<string, string[]>();
const resolver: Resolver = async (host) => {
  const a = names.get(host);
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return a;
};

const count = async (t: TestApp, table: 'webhook_deliveries' | 'webhook_attempts') =>
  Number(
    (
      await t.deps.db.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

for (const d of DIALECTS) {
  describe(`webhook safety [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let rx: Receiver;
    let site: string;
    let key: string;
    let projectId: number;
    const hooks = async (allowPrivate: boolean, timeoutMs = 10_000) =>
      createWebhookWorker({
        db: t.deps.db,
        config: { ...t.config.webhooks, allowPrivate, timeoutMs },
        secret: await sealingSecret(t.deps),
        clock: t.clock,
        resolve: resolver,
      });
    const lastAttempt = async () =>
      t.deps.db.db.selectFrom('webhook_attempts').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
    const create = (url: string, events = ['event.rejected']) =>
      adminCall(t.app, 'POST', `/api/admin/projects/${site}/webhooks`, { url, events });

    before(async () => {
      rx = await startReceiver();
      t = await createTestApp(d.name, { WEBHOOK_BACKOFF_BASE_MS: '1000' }, { resolveHost: resolver });
      ({ site, key } = await setupProject(t.app));
      projectId = Number(
        (await t.deps.db.db.selectFrom('projects').select('id').where('site_key', '=', site).executeTakeFirstOrThrow())
          .id,
      );
    });
    after(async () => {
      await t.close();
      await rx.close();
    });

    it('refuses loopback, private and non-http URLs when saved; accepts public and not-yet-resolvable names', async () => {
      names.set('intranet.test', ['192.168.10.5']);
      names.set('mixed.test', ['93.184.216.34', '10.0.0.7']);
      names.set('public.test', ['93.184.216.34']);
      for (const url of [
        rx.url,
        'http://localhost:8080/h',
        'http://10.1.2.3/h',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]:8080/h',
        'http://[::ffff:127.0.0.1]/h',
        'http://intranet.test/h',
        'http://mixed.test/h',
        'ftp://public.test/h',
        'http://user:pw@public.test/h',
        'not a url',
      ]) {
        const r = await create(url);
        assert.equal(r.status, 422, `${url}: ${JSON.stringify(r.body)}`);
        assert.ok(r.body.detail.error.invalid_fields.url, url);
      }
      assert.equal((await create('https://public.test/hook')).status, 201);
      assert.equal((await create('https://not-yet.test/hook')).status, 201);
      assert.equal(await count(t, 'webhook_deliveries'), 0);
    });

    it('keeps the secret sealed: the database never holds it', async () => {
      const r = await create('https://public.test/sealed');
      const row = await t.deps.db.db
        .selectFrom('webhook_endpoints')
        .select('secret_sealed')
        .where('id', '=', r.body.id)
        .executeTakeFirstOrThrow();
      assert.ok(!row.secret_sealed.includes(r.body.secret.slice(6)));
      assert.match(row.secret_sealed, /^v1\./);
    });

    it('checks again at send time: a name now resolving to loopback, or not at all, is a clean failed attempt', async () => {
      names.set('rebind.test', ['93.184.216.34']);
      const r = await create(`http://rebind.test:${rx.port}/h`);
      assert.equal(r.status, 201);
      names.set('rebind.test', ['127.0.0.1']);
      // Only these two endpoints are active now.
      await t.deps.db.db
        .updateTable('webhook_endpoints')
        .set({ status: 'disabled' })
        .where('id', '!=', r.body.id)
        .where('url', '!=', 'https://not-yet.test/hook')
        .execute();
      const refused = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', { email: 'x@example.com' });
      assert.equal(refused.status, 422);
      const w = await hooks(false);
      assert.equal(await w.runOnce(), 2);
      const attempts = await t.deps.db.db.selectFrom('webhook_attempts').selectAll().orderBy('id').execute();
      const errorsSeen = attempts.map((a) => a.error).sort();
      assert.match(errorsSeen[0]!, /host not-yet\.test could not be resolved: ENOTFOUND/);
      assert.match(errorsSeen[1]!, /host rebind\.test is a private or loopback address \(127\.0\.0\.1\)/);
      assert.ok(attempts.every((a) => a.status_code === null));
      assert.equal(rx.received.length, 0, 'nothing reached the loopback receiver');
      await t.deps.db.db.updateTable('webhook_endpoints').set({ status: 'disabled' }).execute();
    });

    it('follows no redirect and bounds an attempt that never answers', async () => {
      const w = await hooks(true, 300);
      // Saved directly: this app refuses loopback URLs, the worker here allows them.
      const r = await t.deps.db.db
        .insertInto('webhook_endpoints')
        .values({
          project_id: projectId,
          url: `${rx.url}/hook`,
          description: null,
          events: JSON.stringify(['event.rejected']),
          secret_sealed: (
            await t.deps.db.db.selectFrom('webhook_endpoints').select('secret_sealed').executeTakeFirstOrThrow()
          ).secret_sealed,
          status: 'active',
          created_at: t.clock.now(),
          updated_at: t.clock.now(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      rx.mode = 'redirect';
      await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', { email: 'y@example.com' });
      assert.equal(await w.runOnce(), 1);
      assert.equal(rx.received.length, 1);
      assert.equal(rx.received[0].path, '/hook', 'the redirect target was not requested');
      let a = await lastAttempt();
      assert.equal(a.status_code, 302);
      assert.match(a.error!, /redirect to .*\/elsewhere not followed/);

      rx.mode = 'hang';
      t.clock.advance(5000);
      assert.equal(await w.runOnce(), 1);
      a = await lastAttempt();
      assert.equal(a.error, 'timed out after 300 ms');
      assert.equal(a.status_code, null);
      const dl = await t.deps.db.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('endpoint_id', '=', Number(r.id))
        .executeTakeFirstOrThrow();
      assert.equal(dl.status, 'pending', 'a time-out is retried');
      rx.mode = 'ok';
    });

    it('a lease of a process that stopped is taken over: at once after expiry (SQLite start), else after the lease', async () => {
      await t.deps.db.db
        .updateTable('webhook_endpoints')
        .set({ status: 'active' })
        .where('url', 'like', `${rx.url}%`)
        .execute();
      await t.deps.db.db
        .transaction()
        .execute((trx) => enqueueSiteWebhooks(trx, projectId, 'event.rejected', { n: 'lease' }, t.clock.now()));
      const claimed = await claimDeliveries(t.deps.db.db, t.deps.db.dialect, {
        workerId: 'gone',
        now: t.clock.now(),
        leaseMs: 60_000,
        limit: 10,
      });
      assert.equal(claimed.length, 1);
      const w = await hooks(true);
      assert.equal(await w.runOnce(), 0, 'held by the stopped process');
      assert.equal(await expireWebhookLeases(t.deps.db.db), 1);
      const before = rx.received.length;
      assert.equal(await w.runOnce(), 1);
      assert.equal(rx.received.length, before + 1);
    });

    it('a delivery exists only if the change it reports committed', async () => {
      const before = await count(t, 'webhook_deliveries');
      await assert.rejects(
        t.deps.db.db.transaction().execute(async (trx) => {
          assert.equal(await enqueueSiteWebhooks(trx, projectId, 'event.rejected', { n: 1 }, t.clock.now()), 1);
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      assert.equal(await count(t, 'webhook_deliveries'), before, 'rolled back with the change');
      await t.deps.db.db
        .transaction()
        .execute((trx) => enqueueSiteWebhooks(trx, projectId, 'event.rejected', { n: 2 }, t.clock.now()));
      assert.equal(await count(t, 'webhook_deliveries'), before + 1);

      // A worker whose lease was taken over while it sent writes no outcome, and so no email.sent.
      await t.deps.db.db
        .updateTable('webhook_endpoints')
        .set({ events: JSON.stringify(['email.sent', 'event.rejected']) })
        .where('status', '=', 'active')
        .execute();
      const stolen: Transport = {
        kind: 'capture',
        async send(_m: OutgoingMessage) {
          await t.deps.db.db.updateTable('scheduled_emails').set({ locked_by: 'someone-else' }).execute();
          return { response: '250 ok' };
        },
        async close() {},
      } as unknown as Transport;
      const sent = await keyCall(
        t.app,
        key,
        'POST',
        '/api/scoped/send/transactional',
        {
          event_type: 'contest_results',
          email: 'z@example.com',
          fields: { event_title: 'a', work_title: 'b', place: '1' },
        },
        { prefer: 'respond-async' },
      );
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      const mail = createWorker({
        db: t.deps.db,
        transport: stolen,
        clock: t.clock,
        publicUrl: 'http://x',
        secret: await sealingSecret(t.deps),
      });
      const n = await count(t, 'webhook_deliveries');
      assert.equal(await mail.runOnce(), 1);
      assert.equal(await count(t, 'webhook_deliveries'), n, 'no email.sent for an outcome that was not written');
    });
  });
}

describe('two webhook workers on PostgreSQL', { skip: PG_URL ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let t: TestApp;
  let rx: Receiver;
  before(async () => {
    rx = await startReceiver();
    t = await createTestApp('postgres', { WEBHOOKS_ALLOW_PRIVATE: 'true' });
  });
  after(async () => {
    await t.close();
    await rx.close();
  });

  it('never send one delivery twice, each on its own connection pool', async () => {
    const { site } = await setupProject(t.app);
    const created = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/webhooks`, {
      url: `${rx.url}/many`,
      events: ['event.rejected'],
    });
    rx.secret = created.body.secret;
    const project = await t.deps.db.db.selectFrom('projects').select('id').executeTakeFirstOrThrow();
    const N = 120;
    await t.deps.db.db.transaction().execute((trx) =>
      enqueueNotices(
        trx,
        Array.from({ length: N }, (_, i) => ({
          projectId: Number(project.id),
          kind: 'event.rejected' as const,
          data: { i },
        })),
        t.clock.now(),
      ),
    );
    const schema = t.deps.db.schema!;
    const second = await openDatabase(PG_URL!, { schema, poolSize: 5 });
    try {
      const secret = await sealingSecret(t.deps);
      const mk = (db: typeof second, workerId: string) =>
        createWebhookWorker({
          db,
          config: t.config.webhooks,
          secret,
          clock: t.clock,
          workerId,
          batchSize: 7,
          concurrency: 4,
        });
      const workers = [mk(t.deps.db, 'w1'), mk(second, 'w2')];
      const claimed = [0, 0];
      await Promise.all(
        workers.map(async (w, i) => {
          for (;;) {
            const n = await w.runOnce();
            if (n === 0) break;
            claimed[i] += n;
          }
        }),
      );
      assert.equal(claimed[0] + claimed[1], N);
      assert.equal(rx.received.length, N, 'each delivery was sent once');
      assert.equal(new Set(rx.received.map((r) => r.headers['webhook-id'])).size, N);
      assert.ok(rx.received.every((r) => r.verified));
      assert.equal(await count(t, 'webhook_attempts'), N);
      assert.deepEqual(new Set(rx.received.map((r) => r.body.data.i)), new Set(Array.from({ length: N }, (_, i) => i)));
    } finally {
      await second.close();
    }
  });
});
