// Replaying from the chronology (issue 15): a refused request, once the administrator gave the key the
// right it lacked, or a send that found no template, once one is routed, runs again as a new event
// linked to the original; nothing is ever sent twice (a second replay, a site's later retry with the
// same idempotency key, or a retry the site made before the replay). Both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  adminCall,
  createTestApp,
  DIALECTS,
  keyCall,
  newKey,
  REPLAY_RIGHTS as RIGHTS,
  replayableContest as contest,
  setupProject,
  type TestApp,
} from './support/harness.js';

const T = '/api/scoped/send/transactional';

for (const d of DIALECTS) {
  describe(`replay from the chronology [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    let main: string;
    let narrow: { key: string; id: number };
    const replay = (id: number) => adminCall(t.app, 'POST', `/api/admin/external-events/${id}/replay`);
    const emailsOf = async (order: string) =>
      (await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}&order_id=${order}`)).body.items as any[];
    const lastEvent = async (order: string) =>
      (await adminCall(t.app, 'GET', `/api/admin/external-events?site_key=${site}&order_id=${order}`)).body.items[0];

    before(async () => {
      t = await createTestApp(d.name);
      ({ site, key: main } = await setupProject(t.app));
      narrow = await newKey(t.app, site, { ...RIGHTS, allowed_api_events: ['olympiad_results'] });
    });
    after(() => t.close());

    it('a request refused for a right the key lacked runs once the right is given; never twice', async () => {
      const refused = await keyCall(t.app, narrow.key, 'POST', T, contest('R-1'));
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      const original = await lastEvent('R-1');
      assert.equal(original.accepted, false);

      const early = await replay(original.id);
      assert.equal(early.status, 200, JSON.stringify(early.body));
      assert.equal(early.body.accepted, false, 'still refused before the fix');
      assert.equal(early.body.http_status, 403);

      const fix = await adminCall(t.app, 'PATCH', `/api/admin/keys/${narrow.id}`, { rights: RIGHTS });
      assert.equal(fix.status, 200, JSON.stringify(fix.body));
      const r = await replay(original.id);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.accepted, true);
      assert.equal(r.body.replay_of, original.id);
      assert.ok(Number.isInteger(r.body.answer.scheduled_email_id));
      const ev = await adminCall(t.app, 'GET', `/api/admin/external-events/${r.body.event_id}`);
      assert.equal(ev.body.event.effects.replay_of, original.id);
      assert.equal((await emailsOf('R-1')).length, 1);

      assert.equal((await replay(original.id)).status, 409, 'a second replay is refused');
      const retry = await keyCall(t.app, narrow.key, 'POST', T, contest('R-1'));
      assert.equal(retry.status, 200);
      assert.equal(retry.headers['idempotent-replayed'], 'true', "the site's retry gets the replay's answer");
      assert.equal(retry.body.scheduled_email_id, r.body.answer.scheduled_email_id);
      assert.equal((await emailsOf('R-1')).length, 1, 'one e-mail whatever happened');
    });

    it('a request the site already sent again successfully is not carried out again', async () => {
      const other = await newKey(t.app, site, { ...RIGHTS, allowed_api_events: [] }, 'other');
      assert.equal((await keyCall(t.app, other.key, 'POST', T, contest('R-2'))).status, 403);
      const original = await lastEvent('R-2');
      await adminCall(t.app, 'PATCH', `/api/admin/keys/${other.id}`, { rights: RIGHTS });
      assert.equal((await keyCall(t.app, other.key, 'POST', T, contest('R-2'))).status, 200);
      const r = await replay(original.id);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.replayed_stored_answer, true);
      assert.equal((await emailsOf('R-2')).length, 1);
    });

    it('a send without a template runs once a template is routed', async () => {
      const body = {
        event_type: 'olympiad_results',
        email: 'olymp@example.com',
        order_id: 'R-3',
        idempotency_key: 'k-R-3',
        fields: { event_title: 'O', work_title: 'W', place: '2', olympiad_title: 'X' },
      };
      const first = await keyCall(t.app, main, 'POST', T, body);
      assert.equal(first.body.status, 'no_template');
      const original = await lastEvent('R-3');
      const routes = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, {
        routes: { contest_results: 'contest_tpl', olympiad_results: 'contest_tpl' },
      });
      assert.ok(routes.status < 300, JSON.stringify(routes.body));
      const r = await replay(original.id);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.accepted, true);
      assert.equal(r.body.answer.status, 'queued');
      assert.equal((await emailsOf('R-3')).length, 1);
      assert.equal((await replay(original.id)).status, 409);
      const retry = await keyCall(t.app, main, 'POST', T, body);
      assert.equal(retry.headers['idempotent-replayed'], 'true');
      assert.equal((await emailsOf('R-3')).length, 1, 'the retry does not send it again');
    });

    it('replays of one event made at once: one runs, the others are refused', async () => {
      const route = (routes: Record<string, string>) =>
        adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, { routes });
      assert.ok((await route({ contest_results: 'contest_tpl' })).status < 300);
      const first = await keyCall(t.app, main, 'POST', T, {
        event_type: 'olympiad_results',
        email: 'olymp5@example.com',
        order_id: 'R-5',
        idempotency_key: 'k-R-5',
        fields: { event_title: 'O', work_title: 'W', place: '2', olympiad_title: 'X' },
      });
      assert.equal(first.body.status, 'no_template');
      const original = await lastEvent('R-5');
      assert.ok((await route({ contest_results: 'contest_tpl', olympiad_results: 'contest_tpl' })).status < 300);
      // A template-less send runs without its idempotency key: nothing but the replay check stops a second.
      const all = await Promise.all(Array.from({ length: 4 }, () => replay(original.id)));
      const ran = all.filter((r) => r.status === 200);
      assert.equal(ran.length, 1, JSON.stringify(all.map((r) => [r.status, r.body])));
      assert.equal(ran[0].body.accepted, true);
      for (const r of all) if (r !== ran[0]) assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.equal((await emailsOf('R-5')).length, 1);
    });

    it('refuses what cannot be replayed', async () => {
      const ok = await keyCall(t.app, main, 'POST', T, contest('R-4'));
      assert.equal(ok.status, 200);
      assert.equal((await replay((await lastEvent('R-4')).id)).status, 409);
      assert.equal((await replay(987654)).status, 404);
    });
  });
}
