// Migration 019 on a database made by the schema before it (migrations up to 015, as on main then): every
// project gets its topics, and contacts unsubscribed today stay unsubscribed from every topic but
// transactional, as the gateway then shows through HTTP. On each database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { loadConfig } from '../src/config.js';
import { migrateTo, migrateToLatest } from '../src/db/migrate.js';
import { buildApp } from '../src/http/app.js';
import { generateKey, hashKey } from '../src/domain/keys.js';
import { ADMIN_TOKEN, adminCall, DIALECTS, keyCall, ManualClock, testDatabase } from './support/harness.js';

for (const d of DIALECTS) {
  describe(`migration 019 on a database of the previous schema [${d.name}]`, { skip: d.skip }, () => {
    let t: Awaited<ReturnType<typeof testDatabase>>;
    let app: Awaited<ReturnType<typeof buildApp>>;
    const clock = new ManualClock(1_800_000_000_000);
    const KEY = generateKey();

    before(async () => {
      t = await testDatabase(d.name);
      await migrateTo(t.db, '015_template_topic_tracking');
      const db = t.db.db as unknown as Kysely<any>;
      const now = clock.now();
      const project = await db
        .insertInto('projects')
        .values({
          site_key: 'old',
          name: 'Old site',
          from_email: 'noreply@old.example',
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const contact = (email: string, status: string) =>
        db
          .insertInto('contacts')
          .values({ project_id: project.id, email, name: null, fields: '{}', status, created_at: now, updated_at: now })
          .execute();
      await contact('gone@example.com', 'unsubscribed');
      await contact('here@example.com', 'active');
      await db
        .insertInto('api_keys')
        .values({
          project_id: project.id,
          name: 'main',
          key_hash: hashKey(KEY),
          last4: KEY.slice(-4),
          status: 'active',
          rights: JSON.stringify({
            permissions: ['transactional_send', 'cart_events_write'],
            allowed_api_events: ['contest_results'],
            allowed_cart_types: ['course'],
          }),
          created_at: now,
        })
        .execute();
      for (const name of ['cart_1h', 'contest_tpl']) {
        await db
          .insertInto('templates')
          .values({
            project_id: project.id,
            name,
            subject: 's',
            html: '<p>x</p>',
            text: 'x',
            created_at: now,
            updated_at: now,
          })
          .execute();
      }
      const tpl = await db.selectFrom('templates').select(['id', 'name']).execute();
      for (const [key, name] of [
        ['course_abandoned_cart_1h', 'cart_1h'],
        ['contest_results', 'contest_tpl'],
      ])
        await db
          .insertInto('routes')
          .values({ project_id: project.id, routing_key: key, template_id: tpl.find((x) => x.name === name)!.id })
          .execute();

      assert.ok((await migrateToLatest(t.db)).includes('019_consent'));
      app = await buildApp({ db: t.db, config: loadConfig({ ADMIN_TOKEN, SEND_WAIT_MS: '0' }), clock });
    });
    after(async () => {
      await app?.close();
      await t?.cleanup();
    });

    it('gives existing projects their topics and keeps unsubscribed contacts out of every topic but transactional', async () => {
      const topics = await adminCall(app, 'GET', '/api/admin/projects/old/topics');
      assert.deepEqual(
        topics.body.topics.map((x: any) => x.key),
        ['transactional', 'cart_reminders', 'newsletters'],
      );
      const find = async (email: string) => {
        const id = (await adminCall(app, 'GET', `/api/admin/contacts?email=${email}`)).body.items[0].id;
        return (await adminCall(app, 'GET', `/api/admin/contacts/${id}`)).body;
      };
      const gone = await find('gone@example.com');
      assert.equal(gone.contact.status, 'unsubscribed');
      assert.deepEqual(Object.fromEntries(gone.topics.map((x: any) => [x.key, x.subscribed])), {
        transactional: true,
        cart_reminders: false,
        newsletters: false,
      });
      const here = await find('here@example.com');
      assert.ok(here.topics.every((x: any) => x.subscribed));

      const cart = await keyCall(app, KEY, 'POST', '/api/scoped/events/order-created', {
        email: 'gone@example.com',
        order_id: 'M-1',
        cart_type: 'course',
      });
      assert.equal(cart.status, 200, JSON.stringify(cart.body));
      assert.deepEqual(
        cart.body.plan.filter((p: any) => p.step === '1h').map((p: any) => [p.status, p.reason]),
        [['suppressed', 'contact_unsubscribed']],
      );
      const tx = await keyCall(app, KEY, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
        email: 'gone@example.com',
        fields: { event_title: 'A', work_title: 'B' },
      });
      assert.equal(tx.body.plan[0].status, 'queued', 'transactional e-mails still go');
      // A grant for one topic brings the contact back to that topic only.
      const back = await keyCall(app, KEY, 'POST', '/api/scoped/contacts/consent', {
        email: 'gone@example.com',
        topic: 'newsletters',
        granted: true,
      });
      assert.equal(back.status, 200);
      const after = await find('gone@example.com');
      assert.deepEqual(Object.fromEntries(after.topics.map((x: any) => [x.key, x.subscribed])), {
        transactional: true,
        cart_reminders: false,
        newsletters: true,
      });
    });
  });
}
