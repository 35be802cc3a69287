// SPEC §22 through HTTP on both databases: POST /api/templates taking a gallery template routes its free
// event or cart step (the same rule the admin UI's gallery uses), and leaves a taken one alone; the UI's
// vocabulary names the topics whose consent switch is offered (newsletters, not cart reminders); the
// default layout a project made before is offered is the one a new project gets.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { templateGallery } from '../src/services/demoTemplates.js';
import { adminCall, createTestApp, DIALECTS, setupProject, type TestApp } from './support/harness.js';

const gallery = (key: string) => templateGallery().find((g) => g.routing_key === key)!;
const take = (site: string, g: ReturnType<typeof gallery>, name = g.name) => ({
  site_key: site,
  name,
  subject: g.subject,
  html: g.html,
  text: g.text,
  tracking: g.tracking,
});

for (const d of DIALECTS) {
  describe(`day-one offers over HTTP [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;

    before(async () => {
      t = await createTestApp(d.name, {});
      ({ site } = await setupProject(t.app, { defaultLayout: true }));
    });
    after(async () => {
      await t?.close();
    });

    it('POST /api/templates routes a gallery template whose cart step is free', async () => {
      const g = gallery('portal_abandoned_cart_1d');
      const r = await adminCall(t.app, 'POST', '/api/templates', take(site, g));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.routing, { routing_key: g.routing_key, status: 'routed' });
      const routes = (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/routing`)).body.routes;
      assert.equal(routes[g.routing_key], g.name);
      // The route is audited as a routing change, beside the template's creation.
      const audit = await adminCall(t.app, 'GET', `/api/admin/audit?site_key=${site}&action=routing.replace`);
      assert.equal(audit.status, 200, JSON.stringify(audit.body));
      const row = audit.body.items.find((r: any) => r.after?.[g.routing_key] === g.name);
      assert.ok(row, JSON.stringify(audit.body.items));
      assert.equal(row.before[g.routing_key], undefined);
      // A new version of it changes no routing and says nothing about it.
      const again = await adminCall(t.app, 'POST', '/api/templates', take(site, g));
      assert.equal(again.status, 200);
      assert.equal(again.body.routing, undefined);
    });

    it('a taken event stays with its template; the answer names it', async () => {
      const g = gallery('course_paid');
      const own = await adminCall(t.app, 'POST', '/api/templates', take(site, g, 'my_receipt'));
      assert.equal(own.status, 200);
      assert.equal(own.body.routing, undefined, 'not a gallery name: no routing');
      const put = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, {
        routes: {
          ...(await adminCall(t.app, 'GET', `/api/admin/projects/${site}/routing`)).body.routes,
          course_paid: 'my_receipt',
        },
        confirm: true,
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const r = await adminCall(t.app, 'POST', '/api/templates', take(site, g));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.routing, { routing_key: 'course_paid', status: 'taken', current: 'my_receipt' });
      const routes = (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/routing`)).body.routes;
      assert.equal(routes.course_paid, 'my_receipt');
    });

    it('the consent switch is offered for newsletters, not for cart reminders', async () => {
      const m = await adminCall(t.app, 'GET', '/api/admin/ui/meta');
      assert.equal(m.status, 200);
      assert.deepEqual(m.body.consent_by_default, ['newsletters']);
      assert.ok(!m.body.consent_by_default.includes('cart_reminders'));
    });

    it('the default layout offered to an existing project is the one a new project has', async () => {
      for (const locale of ['ru', 'en'] as const) {
        const offered = await adminCall(t.app, 'GET', `/api/admin/ui/default-layout?locale=${locale}`);
        assert.equal(offered.status, 200, JSON.stringify(offered.body));
        assert.equal(offered.body.name, 'default');
        assert.match(offered.body.html, /\{\{ unsubscribe_url \}\}/);
        if (locale === 'ru') {
          const own = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/layouts/default`);
          assert.equal(own.status, 200);
          assert.equal(own.body.layout.html, offered.body.html);
          assert.equal(own.body.layout.text, offered.body.text);
        } else assert.match(offered.body.html, /Unsubscribe/);
      }
      const bad = await adminCall(t.app, 'GET', '/api/admin/ui/default-layout?locale=de');
      assert.equal(bad.status, 422);
    });
  });
}
