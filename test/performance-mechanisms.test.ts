// The mechanisms the accept path and the worker got faster with, checked for correctness on both
// databases: the configuration cache (a change made through another connection, by plain SQL, is seen
// on the next request), group commit (a failing request in a shared commit fails alone), and the
// worker's batched outcome writes (only rows the worker still holds).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Db } from '../src/db/index.js';
import { inTransaction } from '../src/db/groupCommit.js';
import { claimDue, finishes, finishMany } from '../src/repos/outbox.js';
import { addContact, addEmail, emailRow, openTestDb, seedProject, type TestDb } from './fixtures/delivery-support.js';
import { ALL_RIGHTS, createTestApp, DIALECTS, keyCall, newKey, setupProject, type TestApp } from './support/harness.js';

const TX = '/api/scoped/send/transactional';
const RIGHTS = { ...ALL_RIGHTS, permissions: ['transactional_send'] };
const body = (i: number, extra: Record<string, unknown> = {}) => ({
  event_type: 'contest_results',
  email: `p${i}@example.com`,
  name: `P ${i}`,
  fields: { event_title: 'E', work_title: `W ${i}` },
  ...extra,
});

for (const d of DIALECTS) {
  describe(`configuration cache and group commit on ${d.name}`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    let other: Db; // another connection (pool) to the same database: stands for another process
    before(async () => {
      t = await createTestApp(d.name);
      ({ site } = await setupProject(t.app));
      other =
        d.name === 'sqlite'
          ? await openDatabase(await sqlitePathOf(t))
          : await openDatabase(process.env.TEST_DATABASE_URL!, { schema: t.deps.db.schema, poolSize: 2 });
    });
    after(async () => {
      await other?.close();
      await t.close();
    });

    it('a key disabled, or a route changed, through another connection is seen on the next request', async () => {
      const k = await newKey(t.app, site, RIGHTS, 'cached');
      assert.equal((await keyCall(t.app, k.key, 'POST', TX, body(1))).status, 200, 'served (and cached)');
      assert.equal((await keyCall(t.app, k.key, 'POST', TX, body(2))).status, 200, 'served from the cache');
      // Another process re-routes contest_results and then disables the key, in plain SQL.
      const tpl = await other.db
        .selectFrom('templates')
        .select('id')
        .where('name', '=', 'paid_tpl')
        .executeTakeFirstOrThrow();
      await other.db
        .updateTable('routes')
        .set({ template_id: tpl.id })
        .where('routing_key', '=', 'contest_results')
        .execute();
      const routed = await keyCall(t.app, k.key, 'POST', TX, body(3));
      assert.equal(routed.status, 200);
      const email = await t.deps.db.db
        .selectFrom('scheduled_emails')
        .select('template_key')
        .where('id', '=', routed.body.scheduled_email_id)
        .executeTakeFirstOrThrow();
      assert.equal(email.template_key, 'paid_tpl', 'the new route applies at once');
      await other.db
        .updateTable('api_keys')
        .set({ status: 'disabled', disabled_at: Date.now() })
        .where('id', '=', k.id)
        .execute();
      const refused = await keyCall(t.app, k.key, 'POST', TX, body(4));
      assert.equal(refused.status, 403);
      assert.equal(refused.body.detail.error.code, 'api_key_disabled');
    });

    it('concurrent requests share commits; one that fails in the batch fails alone', async () => {
      const k = await newKey(t.app, site, RIGHTS, 'batch');
      // 40 at once: 38 new, and two with one idempotency key and different bodies (one wins, one 422).
      const calls = Array.from({ length: 38 }, (_, i) =>
        keyCall(t.app, k.key, 'POST', TX, body(100 + i, { idempotency_key: `gc-${i}` }), { prefer: 'respond-async' }),
      );
      calls.push(
        keyCall(t.app, k.key, 'POST', TX, body(200, { idempotency_key: 'gc-same' }), { prefer: 'respond-async' }),
      );
      calls.push(
        keyCall(t.app, k.key, 'POST', TX, body(201, { idempotency_key: 'gc-same' }), { prefer: 'respond-async' }),
      );
      const res = await Promise.all(calls);
      assert.ok(res.slice(0, 38).every((r) => r.status === 200));
      assert.deepEqual(
        res
          .slice(38)
          .map((r) => r.status)
          .sort(),
        [200, 422],
      );
      const ids = res.filter((r) => r.status === 200).map((r) => r.body.scheduled_email_id as number);
      const rows = await t.deps.db.db.selectFrom('scheduled_emails').select('id').where('id', 'in', ids).execute();
      assert.equal(rows.length, 39, 'every answered 200 is committed');
      const stored = await t.deps.db.db
        .selectFrom('idempotency')
        .select('idempotency_key')
        .where('idempotency_key', '=', 'gc-same')
        .execute();
      assert.equal(stored.length, 1);
    });

    it('orders and sends accepted together have the effects they have one by one', async () => {
      const k = await newKey(
        t.app,
        site,
        { ...ALL_RIGHTS, permissions: ['transactional_send', 'cart_events_write'] },
        'mixed',
      );
      const order = (id: string, email: string, name?: string) => ({
        cart_type: 'course',
        email,
        ...(name ? { name } : {}),
        order_id: id,
        course_name: 'Course',
      });
      const run = `m${Date.now()}`;
      assert.equal(
        (
          await keyCall(
            t.app,
            k.key,
            'POST',
            '/api/scoped/events/order-created',
            order(`${run}-known`, 'known@example.com', 'Known'),
          )
        ).status,
        200,
      );
      assert.equal(
        (
          await keyCall(t.app, k.key, 'POST', '/api/scoped/events/purchase', {
            cart_type: 'course',
            email: 'paid@example.com',
            order_id: `${run}-paid`,
          })
        ).status,
        200,
      );
      const [dup, paid, c1, c2, c3, tx1, tx2] = await Promise.all([
        keyCall(t.app, k.key, 'POST', '/api/scoped/events/order-created', order(`${run}-known`, 'known@example.com')),
        keyCall(t.app, k.key, 'POST', '/api/scoped/events/order-created', order(`${run}-paid`, 'paid@example.com')),
        keyCall(
          t.app,
          k.key,
          'POST',
          '/api/scoped/events/order-created',
          order(`${run}-c1`, ' Same@Example.com ', 'First'),
        ),
        keyCall(
          t.app,
          k.key,
          'POST',
          '/api/scoped/events/order-created',
          order(`${run}-c2`, 'same@example.com', 'Second'),
        ),
        keyCall(t.app, k.key, 'POST', '/api/scoped/events/order-created', order(`${run}-c3`, 'known@example.com')),
        keyCall(t.app, k.key, 'POST', TX, body(900, { email: 'known@example.com', name: undefined }), {
          prefer: 'respond-async',
        }),
        keyCall(t.app, k.key, 'POST', TX, body(901, { email: 'fresh@example.com', name: 'Fresh' }), {
          prefer: 'respond-async',
        }),
      ]);
      for (const r of [dup, paid, c1, c2, c3, tx1, tx2]) assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual([dup.body.duplicate, dup.body.scheduled_email_ids], [true, []]);
      assert.deepEqual([paid.body.duplicate, paid.body.scheduled_email_ids], [false, []]);
      for (const r of [c1, c2, c3]) assert.deepEqual([r.body.duplicate, r.body.scheduled_email_ids.length], [false, 3]);
      const email = async (id: number) =>
        t.deps.db.db.selectFrom('scheduled_emails').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      // A name given is the e-mail's; without one, the contact's.
      assert.equal((await email(c1.body.scheduled_email_ids[0])).to_name, 'First');
      assert.equal((await email(c2.body.scheduled_email_ids[0])).to_name, 'Second');
      assert.equal((await email(c3.body.scheduled_email_ids[0])).to_name, 'Known');
      assert.equal((await email(tx1.body.scheduled_email_id)).to_name, 'Known');
      const fresh = await email(tx2.body.scheduled_email_id);
      assert.deepEqual(
        [fresh.to_email, fresh.to_name, fresh.status, fresh.kind],
        ['fresh@example.com', 'Fresh', 'queued', 'transactional'],
      );
      const same = await t.deps.db.db
        .selectFrom('contacts')
        .select(['id', 'name'])
        .where('email', '=', 'same@example.com')
        .execute();
      assert.equal(same.length, 1, 'one contact for both spellings');
      assert.ok(['First', 'Second'].includes(same[0].name!));
      const ev = async (id: number) =>
        JSON.parse(
          (await t.deps.db.db.selectFrom('events').select('effects').where('id', '=', id).executeTakeFirstOrThrow())
            .effects,
        );
      assert.equal((await ev(dup.body.event_id)).note, 'order already known: nothing scheduled');
      assert.equal((await ev(paid.body.event_id)).note, 'order already paid: no cart e-mails');
      assert.deepEqual((await ev(c1.body.event_id)).scheduled_email_ids, c1.body.scheduled_email_ids);
      assert.deepEqual(await ev(tx2.body.event_id), {
        contact_id: fresh.contact_id,
        scheduled_email_ids: [fresh.id],
        template_key: fresh.template_key,
      });
      const orders = await t.deps.db.db
        .selectFrom('orders')
        .select(['order_id', 'status', 'created_event_id'])
        .where('order_id', 'like', `${run}%`)
        .orderBy('order_id')
        .execute();
      assert.deepEqual(
        orders.map((o) => [o.order_id, o.status]),
        [
          [`${run}-c1`, 'unpaid'],
          [`${run}-c2`, 'unpaid'],
          [`${run}-c3`, 'unpaid'],
          [`${run}-known`, 'unpaid'],
          [`${run}-paid`, 'paid'],
        ],
      );
      assert.equal(orders.find((o) => o.order_id === `${run}-c1`)!.created_event_id, c1.body.event_id);
    });

    it('inTransaction: a unit that throws rolls back alone, the others commit', async () => {
      const db = t.deps.db;
      const mark = `gc-unit-${Date.now()}`;
      const ins = (name: string) => (trx: Parameters<Parameters<typeof inTransaction>[1]>[0]) =>
        trx.insertInto('settings').values({ name, value: 'x' }).execute();
      const results = await Promise.allSettled([
        inTransaction(db, ins(`${mark}-a`)),
        inTransaction(db, async (trx) => {
          await ins(`${mark}-b`)(trx);
          throw new Error('unit b fails');
        }),
        inTransaction(db, ins(`${mark}-c`)),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      const names = (await db.db.selectFrom('settings').select('name').where('name', 'like', `${mark}%`).execute())
        .map((r) => r.name)
        .sort();
      assert.deepEqual(names, [`${mark}-a`, `${mark}-c`]);
    });
  });

  describe(`batched outcome writes on ${d.name}`, { skip: d.skip }, () => {
    let t: TestDb;
    let base: { projectId: number; templateId: number; contactId: number; to: string };
    const now = 1_800_000_000_000;
    before(async () => {
      t = await openTestDb(d.name);
      const s = await seedProject(t.db);
      base = { ...s, contactId: await addContact(t.db, s.projectId, 'anna@example.org'), to: 'anna@example.org' };
    });
    after(async () => t?.cleanup());

    it('finishMany writes each outcome, only for rows this worker holds', async () => {
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push(await addEmail(t.db, { ...base, status: 'queued', dueAt: now - 1000 }));
      const claimed = await claimDue(t.db.db, t.db.dialect, { workerId: 'w1', now, leaseMs: 60_000, limit: 4 });
      assert.equal(claimed.length, 4);
      const [a, b, c, e] = claimed.map((r) => r.id);
      const notMine = ids.find((id) => !claimed.some((r) => r.id === id))!;
      await t.db.db.updateTable('scheduled_emails').set({ last_error: 'earlier' }).where('id', '=', e).execute();
      const written = await finishMany(t.db.db, 'w1', [
        finishes.sent(a, { now: now + 1, rendered: '{"subject":"a"}', messageId: '<a@x>' }),
        finishes.retry(b, {
          now: now + 2,
          dueAt: now + 30_000,
          error: '451 later',
          rendered: '{}',
          messageId: '<b@x>',
        }),
        finishes.failed(c, { now: now + 3, error: '550 no', countAttempt: false }),
        finishes.suppressed(e, { now: now + 4, reason: 'suppressed: the contact unsubscribed' }),
        finishes.sent(notMine, { now: now + 5, rendered: '{}', messageId: '<n@x>' }),
      ]);
      assert.deepEqual(
        [...written].sort((x, y) => x - y),
        [a, b, c, e].sort((x, y) => x - y),
      );
      const ra = await emailRow(t.db, a);
      assert.deepEqual(
        [ra.status, Number(ra.sent_at), ra.attempts, ra.message_id, ra.rendered, ra.locked_until, ra.last_error],
        ['sent', now + 1, 1, '<a@x>', '{"subject":"a"}', null, null],
      );
      const rb = await emailRow(t.db, b);
      assert.deepEqual(
        [rb.status, Number(rb.due_at), rb.attempts, rb.locked_by, rb.last_error, rb.message_id],
        ['scheduled', now + 30_000, 1, null, '451 later', '<b@x>'],
      );
      const rc = await emailRow(t.db, c);
      assert.deepEqual(
        [rc.status, rc.attempts, rc.last_error, rc.locked_by, rc.rendered],
        ['failed', 0, '550 no', 'w1', null],
      );
      const re = await emailRow(t.db, e);
      assert.deepEqual(
        [re.status, re.attempts, re.last_error],
        ['suppressed', 0, 'suppressed: the contact unsubscribed'],
      );
      const rn = await emailRow(t.db, notMine);
      assert.equal(rn.status, 'queued', 'a row this worker does not hold is left alone');
      // Written once: a second write finds nothing in `sending`.
      assert.equal((await finishMany(t.db.db, 'w1', [finishes.sent(a, { now: now + 9 })])).size, 0);
    });
  });
}

/** The file behind the test app's SQLite database. */
async function sqlitePathOf(t: TestApp): Promise<string> {
  const { sql } = await import('kysely');
  const r = await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(
    t.deps.db.db,
  );
  return `sqlite:${r.rows[0].file}`;
}
