// Issue 11, the unlucky client: retries and double clicks arriving at the same moment, and a process
// killed while it held leases. Many identical requests at once through HTTP; every answer and the final
// rows are checked, on SQLite and PostgreSQL (where the requests really run in parallel).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { schemaUrl } from '../src/db/index.js';
import { createSmtpTransport } from '../src/delivery/transports.js';
import { start } from '../src/server.js';
import { addContact, addEmail, openTestDb, seedProject, startSmtp, until } from './fixtures/delivery-support.js';
import {
  ADMIN_TOKEN,
  adminCall,
  createTestApp,
  DIALECTS,
  events,
  keyCall,
  PG_URL,
  setupProject,
  type TestApp,
} from './support/harness.js';

const N = 40;
const all = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

for (const d of DIALECTS) {
  describe(`concurrent identical requests [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    let key: string;
    let lists: { paid: number; cat: number; leads: number };
    before(async () => {
      t = await createTestApp(d.name);
      ({ site, key, lists } = await setupProject(t.app));
    });
    after(() => t.close());

    it('case 2: of 20 simultaneous purchases of one order, exactly the first payment wins', async () => {
      const oc = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: 'payer@example.com',
        order_id: 'race-1',
      });
      assert.equal(oc.body.scheduled_email_ids.length, 3);
      // Retries of one webhook, except for the amount, so the stored amount tells whose write won.
      const answers = await all(20, (i) =>
        keyCall(t.app, key, 'POST', '/api/scoped/events/purchase', {
          cart_type: 'course',
          email: 'payer@example.com',
          order_id: 'race-1',
          amount: 1000 + i,
          currency: 'RUB',
        }),
      );
      assert.ok(
        answers.every((a) => a.status === 200),
        JSON.stringify(answers.map((a) => a.status)),
      );
      const winners = answers.filter((a) => a.body.duplicate === false);
      assert.equal(winners.length, 1, `first payments: ${winners.length}`);
      assert.equal(winners[0].body.stopped, 3);
      assert.ok(
        answers.filter((a) => a !== winners[0]).every((a) => a.body.duplicate === true && a.body.stopped === 0),
      );
      const order = await t.deps.db.db
        .selectFrom('orders')
        .selectAll()
        .where('order_id', '=', 'race-1')
        .executeTakeFirstOrThrow();
      const winnerIndex = answers.indexOf(winners[0]);
      assert.equal(order.status, 'paid');
      assert.equal(Number(order.paid_event_id), winners[0].body.event_id);
      assert.equal(Number(order.amount_minor), (1000 + winnerIndex) * 100, 'the stored amount is the winner’s');
      const cancelled = await t.deps.db.db
        .selectFrom('scheduled_emails')
        .select('status')
        .where('order_id', '=', 'race-1')
        .execute();
      assert.deepEqual(
        cancelled.map((e) => e.status),
        ['cancelled', 'cancelled', 'cancelled'],
      );
      const members = await adminCall(t.app, 'GET', `/api/lists/${lists.paid}/contacts`);
      assert.equal(members.body.items.filter((m: any) => m.email === 'payer@example.com').length, 1);
      const logged = await events(t.app, `?site_key=${site}&order_id=race-1&limit=50`);
      assert.equal(logged.filter((e) => e.endpoint === 'purchase').length, 20);
      assert.equal(logged.filter((e) => e.endpoint === 'purchase' && e.effects.already_paid === false).length, 1);
    });

    it(`case 3: ${N} identical replace-all configuration writes at once all succeed with one result`, async () => {
      const seq = await adminCall(t.app, 'POST', '/api/sequences', {
        site_key: site,
        name: 'race chain',
        steps: [{ template_id: (await templateId('cart_1h'))!, delay_minutes: 30 }],
      });
      const routes = {
        contest_results: 'contest_tpl',
        course_abandoned_cart_1h: 'cart_1h',
        course_abandoned_cart_1d: 'cart_1d',
        course_paid: 'paid_tpl',
      };
      const categories = Array.from({ length: 12 }, (_, i) => ({
        id: String(i + 1),
        list_id: i % 2 ? lists.cat : lists.paid,
        slug: `slug-${i + 1}`,
        title: `title ${i + 1}`,
      }));
      const writes: [string, unknown, (b: any) => void][] = [
        ['routing', { routes }, (b) => assert.deepEqual(b.routes, routes)],
        ['course-categories', { categories }, (b) => assert.equal(b.categories.length, 12)],
        [
          'paid-lists',
          { lists: { course: lists.paid, diploma: lists.cat } },
          (b) => assert.equal(b.lists.diploma, lists.cat),
        ],
        [
          'cart-chains',
          { chains: { diploma: seq.body.sequence_id } },
          (b) => assert.equal(b.chains.diploma, seq.body.sequence_id),
        ],
      ];
      for (const [what, body, check] of writes) {
        const answers = await all(N, () => adminCall(t.app, 'PUT', `/api/admin/projects/${site}/${what}`, body));
        const statuses = answers.map((a) => a.status);
        assert.ok(
          statuses.every((s) => s === 200),
          `${what}: ${JSON.stringify(statuses)} ${JSON.stringify(answers.find((a) => a.status !== 200)?.body)}`,
        );
        answers.forEach((a) => check(a.body));
      }
      const db = t.deps.db.db;
      const count = async (table: 'routes' | 'course_categories' | 'paid_lists' | 'cart_chains') =>
        Number((await db.selectFrom(table).select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      assert.equal(await count('routes'), 4);
      assert.equal(await count('course_categories'), 12);
      assert.equal(await count('paid_lists'), 2);
      assert.equal(await count('cart_chains'), 1);
    });

    it(`case 3: ${N} identical create-or-return writes at once create one row and return it to all`, async () => {
      const creates: [string, Record<string, unknown>, string, 'projects' | 'templates' | 'lists'][] = [
        ['/api/sites', { site_key: 'race-site', name: 'Race', from_email: 'r@example.com' }, 'project_id', 'projects'],
        [
          '/api/templates',
          { site_key: site, name: 'race_tpl', subject: 'Hi {{ name }}', html: '<p>x</p>', text: 'x' },
          'template_id',
          'templates',
        ],
        ['/api/lists', { site_key: site, name: 'race list' }, 'list_id', 'lists'],
      ];
      for (const [url, body, idMember, table] of creates) {
        const answers = await all(N, () => adminCall(t.app, 'POST', url, body));
        assert.ok(
          answers.every((a) => a.status === 200),
          `${url}: ${JSON.stringify(answers.map((a) => a.status))} ${JSON.stringify(answers.find((a) => a.status !== 200)?.body)}`,
        );
        assert.equal(new Set(answers.map((a) => a.body[idMember])).size, 1, `${url}: one id for every answer`);
        assert.equal(answers.filter((a) => a.body.created === true).length, 1, `${url}: created once`);
        const name = (body.site_key === 'race-site' ? 'race-site' : body.name) as string;
        const column = table === 'projects' ? 'site_key' : 'name';
        const rows = await t.deps.db.db
          .selectFrom(table)
          .select('id')
          .where(column as 'id', '=', name as never)
          .execute();
        assert.equal(rows.length, 1, `${table}: one row`);
      }
      // Different fields for one contact at the same moment: every member is kept.
      const answers = await all(N, (i) =>
        adminCall(t.app, 'POST', '/api/contacts/upsert', {
          site_key: site,
          email: 'merge@example.com',
          fields: { [`f${i}`]: i },
        }),
      );
      assert.ok(answers.every((a) => a.status === 200));
      const c = await adminCall(t.app, 'GET', `/api/admin/contacts/${answers[0].body.contact_id}`);
      assert.equal(Object.keys(c.body.contact.fields).length, N, JSON.stringify(c.body.contact.fields));
    });

    async function templateId(name: string): Promise<number | undefined> {
      const r = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`);
      return r.body.items.find((x: any) => x.name === name)?.id;
    }
  });
}

const CHILD = fileURLToPath(new URL('./fixtures/delivery-crash-worker.ts', import.meta.url));

describe('case 8: leases of a process that is gone', () => {
  it('SQLite: serve releases them at start and sends at once instead of after the lease time', async () => {
    const t = await openTestDb('sqlite');
    const smtp = await startSmtp({ onData: (i) => (i === 1 ? 'hang' : undefined) });
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, t.url, smtp.url, 'killed-worker', '60000'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let running: Awaited<ReturnType<typeof start>> | null = null;
    try {
      const s = await seedProject(t.db);
      const contactId = await addContact(t.db, s.projectId, 'anna@example.org');
      for (let i = 0; i < 3; i++) await addEmail(t.db, { ...s, contactId, to: 'anna@example.org' });
      await smtp.waitForReceived(1, 20_000);
      child.kill('SIGKILL');
      await once(child, 'exit');
      const held = await t.db.db.selectFrom('scheduled_emails').select(['status', 'locked_until']).execute();
      assert.ok(held.every((r) => r.status === 'sending' && Number(r.locked_until) > Date.now() + 50_000));

      const restartedAt = Date.now();
      const config = loadConfig({ RELAYS_ALLOW_PRIVATE: 'true', DATABASE_URL: t.url, ADMIN_TOKEN, SEND_WAIT_MS: '0' });
      running = await start(config, {
        listen: false,
        transport: createSmtpTransport(smtp.url),
        logger: (await import('pino')).default({ level: 'silent' }),
      });
      const app = running.app!;
      await until(
        async () => {
          const r = await app.inject({
            method: 'GET',
            url: '/api/admin/emails',
            headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          });
          return r.json().items.every((e: any) => e.status === 'sent');
        },
        15_000,
        'the restarted process to send what the killed one held',
      );
      assert.ok(Date.now() - restartedAt < 15_000, 'well before the 60 s lease would have expired');
      assert.equal(smtp.accepted.length, 3);
    } finally {
      child.kill('SIGKILL');
      await running?.stop();
      await smtp.close();
      await t.cleanup();
    }
  });

  it(
    'PostgreSQL: a lease another process holds is left alone at start',
    { skip: PG_URL ? false : 'TEST_DATABASE_URL is not set' },
    async () => {
      const t = await openTestDb('postgres');
      let running: Awaited<ReturnType<typeof start>> | null = null;
      try {
        const s = await seedProject(t.db);
        const contactId = await addContact(t.db, s.projectId, 'anna@example.org');
        const id = await addEmail(t.db, { ...s, contactId, to: 'anna@example.org' });
        const lockedUntil = Date.now() + 60_000;
        await t.db.db
          .updateTable('scheduled_emails')
          .set({ status: 'sending', locked_by: 'alive-elsewhere', locked_until: lockedUntil })
          .where('id', '=', id)
          .execute();
        const config = loadConfig({
          RELAYS_ALLOW_PRIVATE: 'true',
          DATABASE_URL: schemaUrl(PG_URL!, t.db.schema!),
          ADMIN_TOKEN,
        });
        running = await start(config, {
          listen: false,
          transport: createSmtpTransport('smtp://127.0.0.1:9'),
          logger: (await import('pino')).default({ level: 'silent' }),
        });
        const row = await t.db.db
          .selectFrom('scheduled_emails')
          .selectAll()
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        assert.equal(row.locked_by, 'alive-elsewhere');
        assert.equal(Number(row.locked_until), lockedUntil);
      } finally {
        await running?.stop();
        await t.cleanup();
      }
    },
  );
});
