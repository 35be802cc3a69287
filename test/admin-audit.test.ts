// SPEC §14, issue 16 item 5: every change writes its audit row in the change's own transaction, with
// what was there before and what is there after. Projects, keys, templates, routing, categories and
// paid lists here; the other areas have their own files (audit-*.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { bearerCall, createUser, login, personalToken } from './support/accounts.js';
import { adminCall, createTestApp, DIALECTS, setupProject, type TestApp } from './support/harness.js';

for (const d of DIALECTS) {
  describe(`audit rows of configuration changes [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let lists: { paid: number; leads: number; cat: number };
    let keyId: number;

    before(async () => {
      t = await createTestApp(d.name);
      const p = await setupProject(t.app, { site: 'alpha' });
      lists = { paid: p.lists.paid, leads: p.lists.leads, cat: p.lists.cat };
      keyId = p.keyId;
    });
    after(() => t.close());

    /** The rows written since `sinceId`, oldest first, read back through the API. */
    async function rowsSince(sinceId: number) {
      const r = await adminCall(t.app, 'GET', '/api/admin/audit?limit=200');
      assert.equal(r.status, 200);
      return (r.body.items as any[]).filter((x) => x.id > sinceId).reverse();
    }
    async function lastId(): Promise<number> {
      const r = await adminCall(t.app, 'GET', '/api/admin/audit?limit=1');
      return r.body.items[0]?.id ?? 0;
    }
    /** Runs one change and returns the single audit row it wrote. */
    async function change(method: string, url: string, body?: unknown, status = 200) {
      const since = await lastId();
      const res = await adminCall(t.app, method, url, body);
      assert.equal(res.status, status, JSON.stringify(res.body));
      const rows = await rowsSince(since);
      assert.equal(rows.length, 1, `${method} ${url} wrote ${rows.length} rows: ${JSON.stringify(rows)}`);
      assert.equal(rows[0].actor, 'root');
      assert.equal(rows[0].via, 'root');
      return { res, row: rows[0] };
    }
    async function refused(method: string, url: string, body: unknown, status: number) {
      const since = await lastId();
      const res = await adminCall(t.app, method, url, body);
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.deepEqual(await rowsSince(since), [], `${method} ${url} refused but audited`);
    }

    it('projects: created, changed and resumed, each with before and after', async () => {
      // An owner's new project also approves its sender domain (SPEC §21): two rows, one transaction.
      const since = await lastId();
      const res = await adminCall(t.app, 'POST', '/api/sites', {
        site_key: 'beta',
        name: 'Beta',
        from_email: 'noreply@beta.example',
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const [created, approved, ...more] = await rowsSince(since);
      assert.deepEqual(more, []);
      assert.equal(created.action, 'project.create');
      assert.equal(created.site_key, 'beta');
      assert.equal(created.before, null);
      assert.equal(created.after.name, 'Beta');
      assert.equal(approved.action, 'domain.approve');
      assert.equal(approved.target, 'domain:beta.example');

      const renamed = await change('PATCH', '/api/admin/projects/beta', { name: 'Beta school' });
      assert.equal(renamed.row.action, 'project.update');
      assert.equal(renamed.row.before.name, 'Beta');
      assert.equal(renamed.row.after.name, 'Beta school');
      assert.equal(renamed.row.after.timezone, renamed.row.before.timezone);

      const legacy = await change('POST', '/api/sites', {
        site_key: 'beta',
        name: 'Beta',
        from_email: 'noreply@beta.example',
      });
      assert.equal(legacy.row.action, 'project.update');
      assert.equal(legacy.row.before.name, 'Beta school');

      const resumed = await change('POST', '/api/admin/projects/beta/marketing/resume');
      assert.equal(resumed.row.action, 'project.marketing_resume');
      assert.equal(resumed.row.after.released_emails, 0);

      await refused('PATCH', '/api/admin/projects/beta', { timezone: 'Mars/Olympus' }, 422);
      await refused('PATCH', '/api/admin/projects/nowhere', { name: 'x' }, 404);
    });

    it('keys: created (never the key itself), changed and disabled', async () => {
      const created = await change(
        'POST',
        '/api/admin/keys',
        { site_key: 'alpha', name: 'crm', rights: { permissions: ['transactional_send'] } },
        201,
      );
      const id = created.res.body.id;
      assert.equal(created.row.action, 'key.create');
      assert.equal(created.row.target, `key:${id}`);
      assert.equal(created.row.site_key, 'alpha');
      assert.ok(!JSON.stringify(created.row).includes(created.res.body.key), 'the key is not in the audit log');

      const renamed = await change('PATCH', `/api/admin/keys/${id}`, { name: 'crm export' });
      assert.equal(renamed.row.action, 'key.update');
      assert.equal(renamed.row.before.name, 'crm');
      assert.equal(renamed.row.after.name, 'crm export');

      const disabled = await change('POST', `/api/admin/keys/${id}/disable`);
      assert.equal(disabled.row.action, 'key.disable');
      assert.equal(disabled.row.before.status, 'active');
      assert.equal(disabled.row.after.status, 'disabled');

      await refused('PATCH', '/api/admin/keys/999999', { name: 'x' }, 404);
      await refused(
        'PATCH',
        `/api/admin/keys/${keyId}`,
        { rights: { permissions: ['list_contacts_write'], list_id: 999999 } },
        422,
      );
    });

    it('templates: created, then updated with the previous text as before', async () => {
      const body = { site_key: 'alpha', name: 'welcome', subject: 'Hi', html: '<p>Hi</p>', text: 'Hi' };
      const created = await change('POST', '/api/templates', body);
      assert.equal(created.row.action, 'template.create');
      assert.equal(created.row.target, `template:${created.res.body.template_id}`);
      assert.equal(created.row.before, null);
      const updated = await change('POST', '/api/templates', { ...body, subject: 'Hello' });
      assert.equal(updated.row.action, 'template.update');
      assert.equal(updated.row.before.subject, 'Hi');
      assert.equal(updated.row.after.subject, 'Hello');
      await refused('POST', '/api/templates', { ...body, html: '{% if %}' }, 422);
    });

    it('routing, course categories and paid lists: the whole map before and after', async () => {
      const routing = await change('PUT', '/api/admin/projects/alpha/routing', {
        routes: { contest_results: 'paid_tpl' },
      });
      assert.equal(routing.row.action, 'routing.replace');
      assert.equal(routing.row.before.contest_results, 'contest_tpl');
      assert.deepEqual(routing.row.after, { contest_results: 'paid_tpl' });
      await refused('PUT', '/api/admin/projects/alpha/routing', { routes: { nope: 'x' } }, 422);

      const cats = await change('PUT', '/api/admin/projects/alpha/course-categories', {
        categories: [{ id: '7', slug: 'seven', list_id: lists.leads, title: 'Seven' }],
      });
      assert.equal(cats.row.action, 'course_categories.replace');
      assert.equal(cats.row.after[0].id, '7');
      assert.notDeepEqual(cats.row.before, cats.row.after);
      await refused(
        'PUT',
        '/api/admin/projects/alpha/course-categories',
        { categories: [{ id: '8', slug: 'eight', list_id: 999999 }] },
        422,
      );

      const paid = await change('PUT', '/api/admin/projects/alpha/paid-lists', { lists: { diploma: lists.cat } });
      assert.equal(paid.row.action, 'paid_lists.replace');
      assert.deepEqual(paid.row.before, { course: lists.paid });
      assert.deepEqual(paid.row.after, { diploma: lists.cat });
      await refused('PUT', '/api/admin/projects/alpha/paid-lists', { lists: { spaceship: lists.cat } }, 422);
    });

    it('the log is filtered by action and target; odd filters are answered, never a 500', async () => {
      const rows = (await adminCall(t.app, 'GET', '/api/admin/audit?action=key.disable')).body.items;
      assert.ok(rows.length >= 1);
      for (const r of rows) assert.equal(r.action, 'key.disable');
      const one = (await adminCall(t.app, 'GET', `/api/admin/audit?target=${encodeURIComponent(rows[0].target)}`)).body;
      assert.ok(one.items.every((r: any) => r.target === rows[0].target));
      assert.equal((await adminCall(t.app, 'GET', '/api/admin/audit?action=key.explode')).status, 422);
      for (const q of ['actor=%00', 'target=%00x', 'actor=%F0%9F%98%80', `target=${'x'.repeat(101)}`]) {
        const r = await adminCall(t.app, 'GET', `/api/admin/audit?${q}`);
        assert.ok([200, 400, 422].includes(r.status), `${q}: ${r.status}`);
        if (r.status === 200) assert.deepEqual(r.body.items, []);
        else assert.equal(r.body.detail.ok, false);
      }
      // An administrator of no project reads an empty log.
      await createUser(t.app, { email: 'idle@x.example', role: 'project_admin', projects: [] });
      const idle = await personalToken(t.app, await login(t.app, 'idle@x.example'));
      const r = await bearerCall(t.app, idle.token, 'GET', '/api/admin/audit');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.items, []);
    });

    it('changes made at the same moment leave an unbroken chain of before and after', async () => {
      const created = await adminCall(t.app, 'POST', '/api/admin/keys', {
        site_key: 'alpha',
        name: 'raced',
        rights: { permissions: ['transactional_send'] },
      });
      const id = created.body.id;
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) => adminCall(t.app, 'PATCH', `/api/admin/keys/${id}`, { name: `name ${i}` })),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        Array(16).fill(200),
      );
      const rows = (await adminCall(t.app, 'GET', `/api/admin/audit?target=key:${id}&action=key.update&limit=50`)).body
        .items as any[];
      rows.reverse();
      assert.equal(rows.length, 16);
      assert.equal(rows[0].before.name, 'raced');
      for (let i = 1; i < rows.length; i++) assert.equal(rows[i].before.name, rows[i - 1].after.name, `row ${i}`);
      const keys = (await adminCall(t.app, 'GET', '/api/admin/keys?site_key=alpha')).body.items;
      assert.equal(keys.find((k: any) => k.id === id).name, rows[15].after.name);
    });

    it('a change whose audit row cannot be written is not made', async () => {
      const db = t.deps.db.db;
      const name = async () =>
        (await adminCall(t.app, 'GET', '/api/admin/projects')).body.items.find((p: any) => p.site_key === 'alpha').name;
      const was = await name();
      await sql`alter table audit_log rename to audit_log_away`.execute(db);
      try {
        const r = await adminCall(t.app, 'PATCH', '/api/admin/projects/alpha', { name: 'Renamed unaudited' });
        assert.equal(r.status, 500);
        assert.equal(r.body.detail.ok, false);
        assert.ok(!JSON.stringify(r.body).includes('audit_log'), 'no SQL in the answer');
        const k = await adminCall(t.app, 'POST', '/api/admin/keys', {
          site_key: 'alpha',
          name: 'unaudited key',
          rights: { permissions: ['transactional_send'] },
        });
        assert.equal(k.status, 500);
      } finally {
        await sql`alter table audit_log_away rename to audit_log`.execute(db);
      }
      assert.equal(await name(), was, 'the project change was rolled back with its audit row');
      const keys = (await adminCall(t.app, 'GET', '/api/admin/keys?site_key=alpha')).body.items;
      assert.ok(!keys.some((k: any) => k.name === 'unaudited key'), 'no key without its audit row');
      // And once the log can be written again, the same change goes through, audited.
      const ok = await change('PATCH', '/api/admin/projects/alpha', { name: 'Renamed' });
      assert.equal(ok.row.after.name, 'Renamed');
    });
  });
}
