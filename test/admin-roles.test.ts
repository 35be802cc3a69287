// SPEC §14: every admin route, enumerated from the app, called as every role against a project it may
// and may not touch. A project one may not see is 404; a viewer's (or read-only token's) change is 403.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { AUDIT_ACTIONS } from '../src/domain/statuses.js';
import { checkDeclaredAccess, type DeclaredRoute } from '../src/http/plugins/access.js';
import { bearerCall, createUser, login, personalToken, viewerToken } from './support/accounts.js';
import {
  ADMIN_TOKEN,
  adminCall,
  createTestApp,
  DIALECTS,
  keyCall,
  setupProject,
  type TestApp,
} from './support/harness.js';

type Who = 'root' | 'owner' | 'admin' | 'viewer' | 'readonly';
interface Fixture {
  site: string;
  ids: Record<string, number>;
}

/** Objects of every kind in one project, made through the API as the root. */
async function fixture(t: TestApp, site: string): Promise<Fixture> {
  const p = await setupProject(t.app, { site });
  const ok = (r: { status: number; body: any }) => {
    assert.ok(r.status < 300, JSON.stringify(r.body));
    return r.body;
  };
  const send = ok(
    await keyCall(t.app, p.key, 'POST', '/api/scoped/send/transactional', {
      event_type: 'contest_results',
      email: `anna@${site}.example`,
      name: 'Anna',
      fields: { event_title: 'Spring', work_title: 'Poem', place: '1' },
    }),
  );
  const email = send.scheduled_email_id ?? send.email_id ?? send.emails?.[0];
  const contact = ok(
    await adminCall(t.app, 'POST', '/api/contacts/upsert', { site_key: site, email: `c@${site}.example` }),
  );
  const templates = ok(await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`)).items;
  const events = ok(await adminCall(t.app, 'GET', `/api/admin/external-events?site_key=${site}`)).items;
  const emails = ok(await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}`)).items;
  const campaign = ok(
    await adminCall(t.app, 'POST', '/api/campaigns', {
      site_key: site,
      template_id: templates[0].id,
      list_id: p.lists.leads,
      send_at: new Date(t.clock.now() + 86_400_000).toISOString(),
    }),
  );
  void email;
  return {
    site,
    ids: {
      key: p.keyId,
      contact: contact.contact_id,
      list: p.lists.leads,
      template: templates[0].id,
      event: events[0].id,
      email: emails[0].id,
      campaign: campaign.campaign_id,
    },
  };
}

/** A request for this route aimed at one project's objects; bodies carry only what names the project. */
function request(r: DeclaredRoute, f: Fixture, victimUser: number) {
  const a = r.access;
  const kind = a.object?.kind;
  const url = r.url
    .replace(':site_key', f.site)
    .replace(':list_id', String(f.ids.list))
    .replace(':session_id', '0123456789abcdef')
    .replace(':delivery_id', '999999')
    .replace(':id', r.url.startsWith('/api/admin/users') ? String(victimUser) : String(kind ? f.ids[kind] : 999999));
  const body =
    r.method === 'GET' || r.method === 'DELETE'
      ? undefined
      : a.project?.startsWith('body.')
        ? { site_key: f.site }
        : r.url === '/api/admin/tokens'
          ? { name: 'matrix' }
          : {};
  return { url: a.filter?.startsWith('query.') ? `${url}?site_key=${f.site}` : url, body };
}

describe('declared access', () => {
  it('an admin route without config.access stops the app from starting', async () => {
    const app = Fastify();
    checkDeclaredAccess(app);
    await assert.rejects(async () => {
      app.get('/api/admin/forgotten', async () => ({ ok: true }));
      await app.ready();
    }, /GET \/api\/admin\/forgotten declares no config.access/);
    const fine = Fastify();
    checkDeclaredAccess(fine);
    fine.get('/api/scoped/not-admin', async () => ({ ok: true }));
    fine.get('/api/admin/declared', { config: { access: { owner: true } } }, async () => ({ ok: true }));
    await fine.ready();
    assert.deepEqual(
      fine.adminRoutes.map((r) => r.url),
      ['/api/admin/declared'],
    );
    await fine.close();
  });
});

for (const d of DIALECTS) {
  describe(`admin roles [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let mine: Fixture;
    let other: Fixture;
    let victim: number;
    const tokens = {} as Record<Who, string>;

    before(async () => {
      t = await createTestApp(d.name);
      mine = await fixture(t, 'mine');
      other = await fixture(t, 'other');
      await createUser(t.app, { email: 'owner@x.example', role: 'owner' });
      await createUser(t.app, { email: 'admin@x.example', role: 'project_admin', projects: ['mine'] });
      await createUser(t.app, { email: 'viewer@x.example', role: 'viewer', projects: ['mine'] });
      victim = await createUser(t.app, { email: 'victim@x.example', role: 'viewer', projects: ['other'] });
      tokens.root = ADMIN_TOKEN;
      tokens.owner = (await personalToken(t.app, await login(t.app, 'owner@x.example'))).token;
      const adminSession = await login(t.app, 'admin@x.example');
      tokens.admin = (await personalToken(t.app, adminSession)).token;
      tokens.readonly = (await personalToken(t.app, adminSession, { read_only: true })).token;
      tokens.viewer = await viewerToken(t.app, 'viewer@x.example');
    });
    after(() => t.close());

    it('every admin route declares its access, and there are many', () => {
      assert.ok(t.app.adminRoutes.length >= 45, `only ${t.app.adminRoutes.length} admin routes found`);
    });

    it('every route, every role, a project it may and may not touch', async () => {
      const failures: string[] = [];
      for (const r of t.app.adminRoutes) {
        const a = r.access;
        // Public routes need no one; the session's own route answers only to its cookie (ui-session tests).
        if (a.public || r.url === '/api/admin/session') continue;
        // Tokens and sessions belong to an account: the root token has none.
        const accountBound = /^\/api\/admin\/(tokens|sessions)/.test(r.url);
        for (const who of ['root', 'owner', 'admin', 'viewer', 'readonly'] as Who[]) {
          const allSeeing = who === 'root' || who === 'owner';
          const writer = who !== 'viewer' && who !== 'readonly';
          for (const [f, visible] of [
            [mine, true],
            [other, allSeeing],
          ] as const) {
            const { url, body } = request(r, f, victim);
            const res = await bearerCall(t.app, tokens[who], r.method, url, body);
            let expected: number | 'allowed' | 'not-auth';
            if (a.owner) expected = !allSeeing ? 403 : a.write && !writer ? 403 : 'allowed';
            else if (a.self) expected = (a.write && !writer) || (accountBound && who === 'root') ? 403 : 'not-auth';
            else if (a.write && !writer) expected = 403;
            else expected = visible ? 'allowed' : 404;
            // Allowed: past the access check. A 404 then can only be the route's own (an id of nothing).
            const accessRefusal =
              res.status === 404 &&
              /^(Project |(email|contact|list|event|campaign|key|template) \d+ not found)/.test(
                String(res.body?.detail?.error?.message),
              );
            const okay =
              expected === 'allowed'
                ? ![401, 403].includes(res.status) && !accessRefusal
                : expected === 'not-auth'
                  ? ![401, 403].includes(res.status)
                  : res.status === expected;
            if (!okay)
              failures.push(
                `${who} ${r.method} ${url}: ${res.status} (expected ${expected}) ${JSON.stringify(res.body).slice(0, 160)}`,
              );
            if (typeof expected === 'number' && expected === 403)
              assert.equal(res.body.detail.error.code, 'permission_denied', `${who} ${r.method} ${url}`);
          }
        }
      }
      assert.deepEqual(failures, []);
    });

    it('every change the matrix made wrote its audit row through its service, none after the fact', async () => {
      const rows = await t.deps.db.db.selectFrom('audit_log').select(['action', 'actor']).execute();
      assert.ok(rows.length > 20, `only ${rows.length} audit rows`);
      const unaudited = [...new Set(rows.map((r) => r.action).filter((a) => !AUDIT_ACTIONS.includes(a as never)))];
      assert.deepEqual(unaudited, [], 'changes whose service wrote no audit row (the access hook wrote these)');
    });

    it('lists hold only the projects one may see', async () => {
      for (const who of ['admin', 'viewer', 'readonly'] as Who[]) {
        const projects = (await bearerCall(t.app, tokens[who], 'GET', '/api/admin/projects')).body.items;
        assert.deepEqual(
          projects.map((p: any) => p.site_key),
          ['mine'],
          who,
        );
        for (const path of [
          '/api/admin/keys',
          '/api/admin/emails',
          '/api/admin/external-events',
          '/api/admin/contacts',
        ]) {
          const r = await bearerCall(t.app, tokens[who], 'GET', path);
          assert.equal(r.status, 200, path);
          assert.ok(r.body.items.length > 0, `${who} sees nothing in ${path}`);
          for (const item of r.body.items) assert.equal(item.site_key, 'mine', `${who} ${path}`);
        }
      }
      const all = (await bearerCall(t.app, tokens.owner, 'GET', '/api/admin/projects')).body.items;
      assert.deepEqual(all.map((p: any) => p.site_key).sort(), ['mine', 'other']);
    });

    it('only owners create projects; a project admin may update theirs', async () => {
      const body = { site_key: 'brand-new', name: 'New', from_email: 'noreply@new.example' };
      const r = await bearerCall(t.app, tokens.admin, 'POST', '/api/sites', body);
      assert.equal(r.status, 403);
      assert.equal(r.body.detail.error.code, 'permission_denied');
      assert.equal((await bearerCall(t.app, tokens.owner, 'POST', '/api/sites', body)).status, 200);
      // Not from a domain outside the project's (SPEC §21): the owner's creation approved new.example for brand-new only.
      const foreign = await bearerCall(t.app, tokens.admin, 'POST', '/api/sites', { ...body, site_key: 'mine' });
      assert.equal(foreign.status, 422);
      assert.equal(foreign.body.detail.error.code, 'sender_domain_unverified');
      const own = await bearerCall(t.app, tokens.admin, 'POST', '/api/sites', {
        ...body,
        site_key: 'mine',
        from_email: 'noreply@site1.example', // setupProject's sender
      });
      assert.equal(own.status, 200, JSON.stringify(own.body));
    });
  });
}
