// Dry runs of the three gateway POSTs (SPEC §13): the same answer and plan as the real request, with
// `dry_run: true`, and every table but the chronology unchanged (each table's rows counted before and
// after); the chronology row is marked. Both databases (PostgreSQL would batch a real request).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ownTableNames } from './support/tables.js';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const P = '/api/scoped/events/purchase';
const contest = (email: string) => ({
  event_type: 'contest_results',
  email,
  order_id: 'D-1',
  idempotency_key: `dry-${email}`,
  fields: { event_title: 'Spring', work_title: 'Poem', place: '1' },
});

/** Rows of every table of the database, by name (whatever other features added). */
async function census(t: TestApp): Promise<Record<string, number>> {
  const db = t.deps.db;
  const names = await ownTableNames(db);
  const out: Record<string, number> = {};
  for (const name of names) {
    const r = await sql<{ n: number }>`select count(*) as n from ${sql.table(name)}`.execute(db.db);
    out[name] = Number(r.rows[0].n);
  }
  return out;
}

for (const d of DIALECTS) {
  describe(`dry run [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    before(async () => {
      t = await createTestApp(d.name, { WEBHOOKS_ALLOW_PRIVATE: 'true' });
      ({ key, site } = await setupProject(t.app));
      await adminCall(t.app, 'POST', `/api/admin/projects/${site}/webhooks`, {
        url: 'http://127.0.0.1:9/h',
        events: ['email.cancelled', 'event.rejected'],
      });
      // A real order whose cart e-mails a dry-run purchase would cancel.
      const oc = await keyCall(t.app, key, 'POST', OC, {
        email: 'cart@example.com',
        order_id: 'O-1',
        cart_type: 'course',
      });
      assert.equal(oc.status, 200);
    });
    after(() => t.close());

    it('answers as the real request would, with dry_run: true, and writes nothing but a marked chronology row', async () => {
      const before = await census(t);
      const tr = await keyCall(t.app, key, 'POST', `${T}?dry_run=true`, contest('new@example.com'));
      assert.equal(tr.status, 200, JSON.stringify(tr.body));
      assert.equal(tr.body.dry_run, true);
      assert.equal(tr.body.status, 'queued');
      assert.equal(tr.body.scheduled_email_id, null, 'no id of a row that was never kept');
      assert.deepEqual(
        tr.body.plan.map((p: any) => [p.scheduled_email_id, p.template_key, p.status, p.reason]),
        [[null, 'contest_tpl', 'queued', null]],
      );
      const oc = await keyCall(
        t.app,
        key,
        'POST',
        OC,
        { email: 'new@example.com', order_id: 'O-2', cart_type: 'course' },
        {
          prefer: 'dry-run',
        },
      );
      assert.equal(oc.status, 200, JSON.stringify(oc.body));
      assert.equal(oc.body.dry_run, true);
      assert.deepEqual(oc.body.scheduled_email_ids, []);
      assert.deepEqual(
        oc.body.plan.map((p: any) => [p.step, p.status]),
        [
          ['1h', 'scheduled'],
          ['1d', 'scheduled'],
          ['3d', 'scheduled'],
        ],
      );
      const p = await keyCall(t.app, key, 'POST', `${P}?dry_run=true`, {
        email: 'cart@example.com',
        order_id: 'O-1',
        cart_type: 'course',
      });
      assert.equal(p.status, 200, JSON.stringify(p.body));
      assert.equal(p.body.stopped, 3, 'the purchase would stop the three cart e-mails');
      assert.ok(p.body.plan.every((e: any) => e.status === 'cancelled' && Number.isInteger(e.scheduled_email_id)));
      const refused = await keyCall(t.app, key, 'POST', `${T}?dry_run=true`, {
        event_type: 'contest_results',
        email: 'x@example.com',
      });
      assert.equal(refused.status, 422);

      const after = await census(t);
      const { events: eventsAfter, ...restAfter } = after;
      const { events: eventsBefore, ...restBefore } = before;
      assert.deepEqual(restAfter, restBefore, 'every table but the chronology is unchanged');
      assert.equal(eventsAfter, eventsBefore + 4, 'one chronology row per dry run');
      const rows = await t.deps.db.db.selectFrom('events').selectAll().orderBy('id', 'desc').limit(4).execute();
      for (const r of rows) assert.equal(JSON.parse(r.effects).dry_run, true, r.endpoint);
      assert.equal(rows.find((r) => r.endpoint === 'transactional' && r.accepted)?.id, tr.body.event_id);

      // Nothing was kept: the real requests still do everything.
      const real = await keyCall(t.app, key, 'POST', T, contest('new@example.com'), { prefer: 'respond-async' });
      assert.equal(real.body.dry_run, undefined);
      assert.ok(Number.isInteger(real.body.scheduled_email_id));
      const paid = await keyCall(t.app, key, 'POST', P, {
        email: 'cart@example.com',
        order_id: 'O-1',
        cart_type: 'course',
      });
      assert.equal(paid.body.stopped, 3);
      // A dry run of an idempotency key already used answers as its repeat would.
      const again = await keyCall(t.app, key, 'POST', `${T}?dry_run=true`, contest('new@example.com'));
      assert.equal(again.status, 200);
      assert.equal(again.body.dry_run, true);
      assert.equal(again.body.scheduled_email_id, real.body.scheduled_email_id);
      // …and of the same key with another body, as its repeat would too: refused.
      const other = await keyCall(t.app, key, 'POST', `${T}?dry_run=true`, {
        ...contest('new@example.com'),
        fields: { event_title: 'Autumn', work_title: 'Poem', place: '1' },
      });
      assert.equal(other.status, 422, JSON.stringify(other.body));
      assert.equal(other.body.detail.error.code, 'idempotency_key_reused');
    });

    it('renders what it would send: a template that cannot render is named in the plan', async () => {
      const tpl = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`);
      assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
      const id = tpl.body.items.find((x: any) => x.name === 'contest_tpl').id;
      // A runtime failure only: an unknown filter in strict mode would be refused when saved.
      await t.deps.db.db
        .updateTable('templates')
        .set({ html: '{% for i in (1..100000000) %}{{ i }}{% endfor %}' })
        .where('id', '=', id)
        .execute();
      const r = await keyCall(t.app, key, 'POST', `${T}?dry_run=true`, {
        ...contest('tpl@example.com'),
        idempotency_key: 'tpl-1',
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.plan[0].reason, 'template_error');
    });
  });
}
