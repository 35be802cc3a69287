// A person's data (SPEC §18) through HTTP on each database: the export is streamed and holds everything,
// erasure leaves the address in no table (read from the schema, so a table added later without erasure
// fails here), keeps the statistics and a keyed hash that keeps a returning address suppressed, and a
// long history is erased in batches by the worker while the answer says in_progress.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createErasureWorker } from '../src/workers/erasure.js';
import { ERASURE_COVERAGE } from '../src/repos/erasure.js';
import { installationSecret } from '../src/services/secrets.js';
import { SYNC_LIMIT } from '../src/services/erasure.js';
import type { Db } from '../src/db/index.js';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';

const OC = '/api/scoped/events/order-created';
const T = '/api/scoped/send/transactional';
const P = '/api/scoped/events/purchase';

/** Every table of the database and its text columns, from the database itself. */
async function textColumns(db: Db): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (db.dialect === 'postgres') {
    const r = await sql<{ table_name: string; column_name: string; data_type: string }>`
      select table_name, column_name, data_type from information_schema.columns
      where table_schema = current_schema()`.execute(db.db);
    for (const c of r.rows) {
      if (!out.has(c.table_name)) out.set(c.table_name, []);
      if (c.data_type === 'text') out.get(c.table_name)!.push(c.column_name);
    }
    return out;
  }
  const tables = await sql<{
    name: string;
  }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db.db);
  for (const t of tables.rows) {
    const cols = await sql<{ name: string; type: string }>`select name, type from pragma_table_info(${t.name})`.execute(
      db.db,
    );
    out.set(
      t.name,
      cols.rows.filter((c) => c.type.toLowerCase() === 'text').map((c) => c.name),
    );
  }
  return out;
}

/** Where the text appears, as table.column, in any row of any table. */
async function whereFound(db: Db, needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const [table, cols] of await textColumns(db)) {
    for (const col of cols) {
      const r = await sql<{
        n: number;
      }>`select count(*) as n from ${sql.id(table)} where lower(${sql.id(col)}) like ${`%${needle.toLowerCase()}%`}`.execute(
        db.db,
      );
      if (Number(r.rows[0].n) > 0) found.push(`${table}.${col}`);
    }
  }
  return found;
}

for (const d of DIALECTS) {
  describe(`export and erasure [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    let lists: { paid: number; cat: number; leads: number };
    const contactId = async (email: string) =>
      (await adminCall(t.app, 'GET', `/api/admin/contacts?email=${encodeURIComponent(email)}&site_key=${site}`)).body
        .items[0]?.id as number | undefined;

    before(async () => {
      t = await createTestApp(d.name, { WEBHOOKS_ALLOW_PRIVATE: 'true' });
      ({ key, site, lists } = await setupProject(t.app));
      const hook = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/webhooks`, {
        url: 'http://127.0.0.1:9/hook',
        events: ['contact.unsubscribed', 'email.cancelled'],
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
    });
    after(() => t.close());

    it('every table is covered by erasure or named free of personal data', async () => {
      const tables = [...(await textColumns(t.deps.db)).keys()];
      const missing = tables.filter((x) => !(x in ERASURE_COVERAGE));
      assert.deepEqual(missing, [], 'a table without an erasure rule: add it to repos/erasure.ts ERASURE_COVERAGE');
    });

    it('the export streams everything held; erasure leaves the address nowhere, keeps the counts and a hash', async () => {
      const email = 'olga.person@example.com';
      const name = 'Ольга Персонова';
      const first = await keyCall(t.app, key, 'POST', T, {
        event_type: 'contest_results',
        email,
        name,
        idempotency_key: 'erase-k1',
        fields: { event_title: 'Spring', work_title: 'Poem', place: '1', phone: '+7 900 000 00 00' },
        consent: [{ topic: 'newsletters', granted: true, ip: '198.51.100.7', text_version: 'v1' }],
      });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      await keyCall(t.app, key, 'POST', OC, { email, name, order_id: 'E-1', cart_type: 'course', course_name: 'C' });
      await keyCall(t.app, key, 'POST', P, {
        email,
        order_id: 'E-1',
        cart_type: 'course',
        amount: 100,
        fields: { course_category_id: 3 },
      });
      await keyCall(t.app, key, 'POST', `/api/scoped/lists/${lists.leads}/contacts`, { email, name });
      const id = (await contactId(email))!;
      // An administrator's change (audited with the address) and an unsubscribe (a webhook names it).
      await adminCall(t.app, 'POST', `/api/admin/contacts/${id}/status`, { status: 'unsubscribed' });
      // What delivery and bounce processing would have stored about this person's e-mails.
      const db = t.deps.db.db;
      const mail = await db
        .selectFrom('scheduled_emails')
        .select('id')
        .where('contact_id', '=', id)
        .executeTakeFirstOrThrow();
      await db
        .updateTable('scheduled_emails')
        .set({ rendered: JSON.stringify({ html: `<p>${name} ${email}</p>` }) })
        .where('id', '=', mail.id)
        .execute();
      await db
        .insertInto('email_attempts')
        .values({
          scheduled_email_id: mail.id,
          attempt: 1,
          transport: 'smtp',
          ok: 0,
          reply: `550 5.1.1 <${email}>: no such user`,
          queue_id: null,
          provider_message_id: null,
          message_id: null,
          at: t.clock.now(),
        })
        .execute();
      await db
        .insertInto('email_reports')
        .values({
          project_id: null,
          email_id: mail.id,
          contact_id: id,
          received_at: t.clock.now(),
          source: 'smtp',
          kind: 'bounced',
          status_code: '5.1.1',
          diagnostic: `<${email}> unknown`,
          recipient: email,
          message_id: null,
          provider_message_id: null,
          matched_by: 'verp',
          dedupe_key: 'd1',
          raw: `To: ${email}`,
        })
        .execute();

      const exp = await t.app.inject({
        method: 'GET',
        url: `/api/admin/contacts/${id}/export`,
        headers: { authorization: 'Bearer test-admin-token-0123456789' },
      });
      assert.equal(exp.statusCode, 200);
      assert.equal(exp.headers['content-length'], undefined, 'streamed, not built and measured in memory');
      const doc = JSON.parse(exp.body);
      assert.equal(doc.contact.email, email);
      assert.equal(doc.contact.name, name);
      assert.ok(doc.events.length >= 4);
      assert.ok(doc.events.some((e: any) => e.payload?.fields?.phone === '+7 900 000 00 00'));
      assert.ok(doc.emails.length >= 4);
      assert.ok(doc.emails.some((e: any) => e.rendered?.html?.includes(name)));
      assert.equal(doc.consent.find((x: any) => x.source === 'api').ip, '198.51.100.7');
      assert.ok(
        doc.consent.some((x: any) => x.source === 'admin' && !x.granted),
        'the administrator unsubscribed them',
      );
      assert.equal(doc.reports.length, 1);
      assert.equal(doc.orders[0].order_id, 'E-1');
      assert.ok(doc.books.some((b: any) => b.list_id === lists.leads));

      const before = (await whereFound(t.deps.db, email)).sort();
      for (const place of [
        'contacts.email',
        'events.email',
        'events.payload',
        'scheduled_emails.to_email',
        'idempotency.response_body',
        'webhook_deliveries.data',
        'audit_log.before',
        'email_reports.raw',
        'email_attempts.reply',
      ])
        assert.ok(
          before.includes(place),
          `the address is in ${place} before (the test seeds it): ${before.join(', ')}`,
        );
      const count = async (table: 'events' | 'scheduled_emails') =>
        Number(
          (
            await db
              .selectFrom(table)
              .select(sql<number>`count(*)`.as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const counts = { events: await count('events'), emails: await count('scheduled_emails') };

      const r = await adminCall(t.app, 'POST', `/api/admin/contacts/${id}/erase`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.status, 'done');
      assert.ok(r.body.erased.events >= 4 && r.body.erased.scheduled_emails >= 4, JSON.stringify(r.body.erased));
      assert.deepEqual(await whereFound(t.deps.db, email), [], 'the address is in no table');
      assert.deepEqual(await whereFound(t.deps.db, 'Персонова'), [], 'nor the name');
      assert.deepEqual(await whereFound(t.deps.db, '900 000 00'), [], 'nor the fields');
      assert.deepEqual(await whereFound(t.deps.db, '198.51.100.7'), [], 'nor the consent evidence');
      assert.equal(await count('events'), counts.events, 'statistics keep their counts');
      assert.equal(await count('scheduled_emails'), counts.emails);
      assert.equal(
        Number(
          (
            await db
              .selectFrom('suppressed_hashes')
              .select(sql<number>`count(*)`.as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        ),
        1,
      );
      const audit = await adminCall(t.app, 'GET', `/api/admin/audit?site_key=${site}&limit=5`);
      const row = audit.body.items.find((a: any) => a.action === 'contact.erase');
      assert.ok(row, JSON.stringify(audit.body));
      assert.ok(!JSON.stringify(row).includes('olga'), 'the audit row holds no address');
      const page = await adminCall(t.app, 'GET', `/api/admin/contacts/${id}`);
      assert.equal(page.body.erasure.status, 'done');
      assert.ok(page.body.contact.erased_at);
      // Erasing again answers the same erasure.
      assert.equal(
        (await adminCall(t.app, 'POST', `/api/admin/contacts/${id}/erase`)).body.erasure_id,
        r.body.erasure_id,
      );

      // The address comes back: it had unsubscribed, so it stays suppressed (the kept hash says so).
      const back = await keyCall(t.app, key, 'POST', OC, {
        email: 'Olga.Person@example.com',
        order_id: 'E-2',
        cart_type: 'course',
      });
      assert.equal(back.status, 200);
      assert.ok(
        back.body.plan.every((p: any) => p.status === 'suppressed' && p.reason === 'contact_unsubscribed'),
        JSON.stringify(back.body.plan),
      );
      const tr = await keyCall(t.app, key, 'POST', T, {
        event_type: 'contest_results',
        email,
        fields: { event_title: 'A', work_title: 'B' },
      });
      assert.equal(tr.body.plan[0].status, 'queued', 'transactional still goes');
    });

    it('the site passes a deletion request on; an unknown address is a 404', async () => {
      const email = 'site.user@example.com';
      await keyCall(t.app, key, 'POST', T, {
        event_type: 'contest_results',
        email,
        fields: { event_title: 'A', work_title: 'B' },
      });
      const r = await keyCall(t.app, key, 'POST', '/api/scoped/contacts/erase', { email: ' Site.User@example.com' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.status, 'done');
      assert.deepEqual(await whereFound(t.deps.db, email), []);
      const again = await keyCall(t.app, key, 'POST', '/api/scoped/contacts/erase', { email });
      assert.equal(again.status, 404);
      const bad = await keyCall(t.app, key, 'POST', '/api/scoped/contacts/erase', { email: 'not-an-address' });
      assert.equal(bad.status, 422);
      assert.ok('email' in bad.body.detail.error.invalid_fields);
      // Audited like the administrator's erase (SPEC §22): by the site's key, without the address.
      const audit = await adminCall(t.app, 'GET', `/api/admin/audit?site_key=${site}&action=contact.erase&limit=50`);
      const row = audit.body.items.find((a: any) => a.target === `contact:${r.body.contact_id}`);
      assert.ok(row, JSON.stringify(audit.body));
      assert.equal(row.via, 'key');
      assert.equal(row.after.erasure_id, r.body.erasure_id);
      assert.ok(!JSON.stringify(row).toLowerCase().includes('site.user'), 'the audit row holds no address');
    });

    for (const [how, makeSuppressed] of [
      ['bounced', 'invalid'],
      ['complained', 'complaint'],
    ] as const)
      it(`an erased address that had ${how} gets no e-mail at all when it comes back, transactional included`, async () => {
        const email = `came.back.${how}@example.com`;
        await keyCall(t.app, key, 'POST', T, {
          event_type: 'contest_results',
          email,
          fields: { event_title: 'A', work_title: 'B' },
        });
        const id = (await contactId(email))!;
        // What a hard bounce or a complaint leaves on the contact (services/reports.ts).
        await t.deps.db.db
          .updateTable('contacts')
          .set(
            makeSuppressed === 'invalid'
              ? { status: 'invalid', status_reason: 'hard_bounce' }
              : { status: 'unsubscribed', status_reason: 'complaint' },
          )
          .where('id', '=', id)
          .execute();
        const erased = await keyCall(t.app, key, 'POST', '/api/scoped/contacts/erase', { email });
        assert.equal(erased.status, 200, JSON.stringify(erased.body));
        const tr = await keyCall(t.app, key, 'POST', T, {
          event_type: 'contest_results',
          email,
          fields: { event_title: 'A', work_title: 'B' },
        });
        assert.equal(tr.status, 200, JSON.stringify(tr.body));
        assert.deepEqual(
          tr.body.plan.map((p: any) => [p.status, p.reason]),
          [['suppressed', 'contact_invalid']],
        );
        const oc = await keyCall(t.app, key, 'POST', OC, { email, order_id: `CB-${how}`, cart_type: 'course' });
        assert.ok(
          oc.body.plan.every((p: any) => p.status === 'suppressed'),
          JSON.stringify(oc.body.plan),
        );
      });

    it(`more than ${SYNC_LIMIT} rows: in_progress, erased in batches by the worker, done on the contact page`, async () => {
      const email = 'long.history@example.com';
      await keyCall(t.app, key, 'POST', T, {
        event_type: 'contest_results',
        email,
        fields: { event_title: 'A', work_title: 'B' },
      });
      const id = (await contactId(email))!;
      const db = t.deps.db;
      const projectId = Number(
        (await db.db.selectFrom('projects').select('id').where('site_key', '=', site).executeTakeFirstOrThrow()).id,
      );
      const n = SYNC_LIMIT + 2_000;
      const series =
        db.dialect === 'postgres'
          ? sql`select g from generate_series(1, ${n}::int) as g`
          : sql`with recursive s(g) as (select 1 union all select g + 1 from s where g < ${n}) select g from s`;
      await sql`insert into events (project_id, endpoint, event_type, email, http_status, accepted, payload, effects, created_at)
        select ${projectId}, 'transactional', 'contest_results', ${email}, 200, 1, ${JSON.stringify({ email })}, '{}', ${t.clock.now()}
        from (${series}) as x`.execute(db.db);

      const r = await adminCall(t.app, 'POST', `/api/admin/contacts/${id}/erase`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.status, 'in_progress');
      assert.equal((await adminCall(t.app, 'GET', `/api/admin/contacts/${id}`)).body.erasure.status, 'in_progress');
      const worker = createErasureWorker({
        db,
        secret: await installationSecret(t.deps),
        clock: t.clock,
        batchSize: 2_500,
      });
      let batches = 0;
      while (await worker.runOnce()) batches++;
      assert.ok(batches >= 5, `erased in several short transactions (${batches})`);
      const page = (await adminCall(t.app, 'GET', `/api/admin/contacts/${id}`)).body;
      assert.equal(page.erasure.status, 'done');
      assert.ok(page.erasure.finished_at);
      assert.equal(page.erasure.erased.events, n + 1);
      assert.deepEqual(await whereFound(db, email), []);
    });
  });
}
