// Admin and legacy configuration endpoints (SPEC §2, §6), OpenAPI and health.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, createTestApp, DIALECTS, keyCall, rawCall, setupProject, type TestApp } from './support/harness.js';

for (const d of DIALECTS) {
  describe(`admin API [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    let key: string;
    let lists: { paid: number; cat: number; leads: number };
    before(async () => {
      t = await createTestApp(d.name);
      ({ site, key, lists } = await setupProject(t.app));
    });
    after(() => t.close());

    it('POST /api/sites creates, then updates the same site_key', async () => {
      const a = await adminCall(t.app, 'POST', '/api/sites', {
        site_key: 'olymp',
        name: 'Olympiads',
        from_email: 'a@olymp.example',
      });
      assert.equal(a.status, 200);
      assert.equal(a.body.created, true);
      const b = await adminCall(t.app, 'POST', '/api/sites', {
        site_key: 'olymp',
        name: 'Olympiads 2',
        from_email: 'b@olymp.example',
      });
      assert.equal(b.body.created, false);
      assert.equal(b.body.project_id, a.body.project_id);
      const all = (await adminCall(t.app, 'GET', '/api/admin/projects')).body.items;
      assert.equal(all.find((p: any) => p.site_key === 'olymp').from_email, 'b@olymp.example');
      const bad = await adminCall(t.app, 'POST', '/api/sites', { site_key: 'has space', name: '', from_email: 'nope' });
      assert.equal(bad.status, 422);
      assert.deepEqual(Object.keys(bad.body.detail.error.invalid_fields).sort(), ['from_email', 'name', 'site_key']);
    });

    it('keys: created with the full key once, listed without it, rights validated', async () => {
      const c = await adminCall(t.app, 'POST', '/api/admin/keys', {
        site_key: site,
        name: 'k',
        rights: { permissions: ['transactional_send'], allowed_api_events: ['contest_results'] },
        rate_limit: { per_second: 5, burst: 10 },
      });
      assert.equal(c.status, 201);
      assert.match(c.body.key, /^egw_live_[0-9A-Za-z]{46}$/);
      assert.equal(c.body.last4, c.body.key.slice(-4));
      assert.deepEqual(c.body.rate_limit, { per_second: 5, burst: 10 });
      const list = await adminCall(t.app, 'GET', `/api/admin/keys?site_key=${site}`);
      assert.ok(list.body.items.length >= 2);
      assert.ok(!JSON.stringify(list.body).includes(c.body.key), 'the full key is never listed');
      assert.ok(list.body.items.every((k: any) => !('key' in k) && !('key_hash' in k)));
      const bad = await adminCall(t.app, 'POST', '/api/admin/keys', {
        site_key: site,
        name: 'k',
        rights: { permissions: ['send_everything'] },
      });
      assert.equal(bad.status, 422);
      const noList = await adminCall(t.app, 'POST', '/api/admin/keys', {
        site_key: site,
        name: 'k',
        rights: { permissions: ['list_contacts_write'] },
      });
      assert.equal(noList.status, 422);
      assert.deepEqual(noList.body.detail.error.missing_fields, ['rights.list_id']);
      const unknownSite = await adminCall(t.app, 'POST', '/api/admin/keys', {
        site_key: 'nowhere',
        name: 'k',
        rights: {},
      });
      assert.equal(unknownSite.status, 404);
    });

    it('keys: rights changed by PATCH take effect on the next request', async () => {
      const c = await adminCall(t.app, 'POST', '/api/admin/keys', {
        site_key: site,
        name: 'patchme',
        rights: { permissions: ['transactional_send'], allowed_api_events: [] },
      });
      const body = { event_type: 'olympiad_results', email: 'p@example.com', fields: { event_title: 'X' } };
      assert.equal((await keyCall(t.app, c.body.key, 'POST', '/api/scoped/send/transactional', body)).status, 403);
      const p = await adminCall(t.app, 'PATCH', `/api/admin/keys/${c.body.id}`, {
        rights: { permissions: ['transactional_send'], allowed_api_events: ['olympiad_results'] },
      });
      assert.equal(p.status, 200);
      assert.equal((await keyCall(t.app, c.body.key, 'POST', '/api/scoped/send/transactional', body)).status, 200);
    });

    it('routing: replaced whole; an unknown key or template is a 422 that changes nothing', async () => {
      const before = (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/routing`)).body.routes;
      assert.equal(before.contest_results, 'contest_tpl');
      const bad = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, {
        routes: { contest_results: 'paid_tpl', no_such_event: 'paid_tpl', olympiad_results: 'missing_tpl' },
      });
      assert.equal(bad.status, 422);
      assert.ok(bad.body.detail.error.invalid_fields['routes.no_such_event']);
      assert.ok(bad.body.detail.error.invalid_fields['routes.olympiad_results']);
      assert.deepEqual((await adminCall(t.app, 'GET', `/api/admin/projects/${site}/routing`)).body.routes, before);
      const ok = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, {
        routes: { ...before, portal_abandoned_cart_1h: 'cart_1h' },
      });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.routes.portal_abandoned_cart_1h, 'cart_1h');
    });

    it('templates: same name updates; a template that does not parse is refused naming the line', async () => {
      const a = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'tpl_x',
        subject: 'Hi {{name}}',
        html: '<p>1</p>',
        text: '1',
      });
      const b = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'tpl_x',
        subject: 'Hello {{ name }}',
        html: '<p>2</p>',
        text: '2',
      });
      assert.equal(a.body.template_id, b.body.template_id);
      assert.equal(b.body.created, false);
      const items = (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`)).body.items;
      assert.equal(items.find((x: any) => x.name === 'tpl_x').subject, 'Hello {{ name }}');
      const bad = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'tpl_bad',
        subject: 'ok',
        html: '<p>\n{% if name %}\nunclosed',
        text: '',
      });
      assert.equal(bad.status, 422);
      assert.match(bad.body.detail.error.message, /line \d+/);
      assert.ok(bad.body.detail.error.invalid_fields.html);
    });

    it('lists: create is idempotent by name; members added once; contacts upserted by normalised e-mail', async () => {
      const l1 = await adminCall(t.app, 'POST', '/api/lists', { site_key: site, name: 'newsletter' });
      const l2 = await adminCall(t.app, 'POST', '/api/lists', { site_key: site, name: 'newsletter' });
      assert.equal(l1.body.list_id, l2.body.list_id);
      const c1 = await adminCall(t.app, 'POST', '/api/contacts/upsert', {
        site_key: site,
        email: 'Reader@Example.com',
        name: 'R',
        fields: { city: 'Omsk' },
      });
      const c2 = await adminCall(t.app, 'POST', '/api/contacts/upsert', {
        site_key: site,
        email: 'reader@example.com',
      });
      assert.equal(c1.body.contact_id, c2.body.contact_id);
      for (let i = 0; i < 2; i++) {
        const m = await adminCall(t.app, 'POST', `/api/lists/${l1.body.list_id}/contacts`, {
          contact_id: c1.body.contact_id,
        });
        assert.equal(m.status, 200);
        assert.equal(m.body.added, i === 0);
      }
      const members = await adminCall(t.app, 'GET', `/api/lists/${l1.body.list_id}/contacts`);
      assert.deepEqual(
        members.body.items.map((m: any) => [m.email, m.name, m.status]),
        [['reader@example.com', 'R', 'active']],
      );
      const missing = await adminCall(t.app, 'POST', `/api/lists/${l1.body.list_id}/contacts`, { contact_id: 999999 });
      assert.equal(missing.status, 422);
      assert.equal((await adminCall(t.app, 'GET', '/api/lists/999999/contacts')).status, 404);
    });

    it("course categories and paid lists: validated against the project's books", async () => {
      const bad = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/course-categories`, {
        categories: [{ id: '1', list_id: 999999, slug: 'x', title: 'X' }],
      });
      assert.equal(bad.status, 422);
      const cats = (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/course-categories`)).body.categories;
      assert.deepEqual(
        cats.map((c: any) => [c.id, c.list_id]),
        [['3', lists.cat]],
      );
      const paid = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/paid-lists`, {
        lists: { course: lists.paid, diploma: lists.leads },
      });
      assert.deepEqual(paid.body.lists, { course: lists.paid, diploma: lists.leads });
      const badCart = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/paid-lists`, {
        lists: { boat: lists.paid },
      });
      assert.equal(badCart.status, 422);
    });

    it('contact status can be set, including admin_blocked; unknown statuses refused', async () => {
      const c = await adminCall(t.app, 'POST', '/api/contacts/upsert', { site_key: site, email: 'block@example.com' });
      const r = await adminCall(t.app, 'POST', `/api/admin/contacts/${c.body.contact_id}/status`, {
        status: 'admin_blocked',
      });
      assert.deepEqual(r.body, { ok: true, contact_id: c.body.contact_id, status: 'admin_blocked' });
      const again = await adminCall(t.app, 'POST', '/api/contacts/upsert', {
        site_key: site,
        email: 'block@example.com',
        name: 'B',
      });
      assert.equal(again.body.status, 'admin_blocked', 'an upsert never resubscribes');
      assert.equal(
        (await adminCall(t.app, 'POST', `/api/admin/contacts/${c.body.contact_id}/status`, { status: 'gone' })).status,
        422,
      );
    });

    it('e-mails: filtered by status and order, paged, times in ISO 8601 UTC', async () => {
      for (const o of ['E-1', 'E-2']) {
        await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
          cart_type: 'course',
          email: 'e@example.com',
          order_id: o,
        });
      }
      const page = await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}&status=scheduled&limit=4`);
      assert.equal(page.body.items.length, 4);
      assert.ok(page.body.next_cursor);
      assert.ok(page.body.items.every((e: any) => e.status === 'scheduled' && /Z$/.test(e.due_at)));
      const next = await adminCall(
        t.app,
        'GET',
        `/api/admin/emails?site_key=${site}&status=scheduled&limit=4&cursor=${page.body.next_cursor}`,
      );
      assert.equal(next.body.items.length, 2);
      const one = await adminCall(t.app, 'GET', `/api/admin/emails?order_id=E-2`);
      assert.equal(one.body.items.length, 3);
    });

    it('OpenAPI document lists every route with schemas and the error envelope', async () => {
      const r = await rawCall(t.app, 'GET', '/openapi.json', {});
      assert.equal(r.status, 200);
      assert.equal(r.body.info.version, '1.0.0');
      for (const p of [
        '/api/scoped/events/catalog',
        '/api/scoped/send/transactional',
        '/api/scoped/events/order-created',
        '/api/scoped/events/purchase',
        '/api/admin/external-events',
        '/api/admin/external-events/stats',
        '/api/sites',
        '/api/templates',
        '/api/lists',
        '/api/contacts/upsert',
        '/api/admin/keys',
      ]) {
        assert.ok(r.body.paths[p], p);
      }
      const tx = r.body.paths['/api/scoped/send/transactional'].post;
      assert.ok(tx.requestBody.content['application/json'].schema.properties.event_type);
      assert.ok(tx.responses['422']);
      assert.ok(r.body.components.schemas.ErrorEnvelope);
    });

    it('healthz and readyz', async () => {
      assert.deepEqual((await rawCall(t.app, 'GET', '/healthz', {})).body, { ok: true });
      const ready = await rawCall(t.app, 'GET', '/readyz', {});
      assert.equal(ready.status, 200);
      assert.equal(ready.body.database, d.name);
    });
  });
}
