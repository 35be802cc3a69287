// Retries seen as retries (issue 28): a site that retries a call with a changed body under the same
// idempotency key is answered as before (422 idempotency_key_reused, SPEC §1), but the chronology, the
// statistics and the dashboard count it as a repeated call, not a rejection; it tells no event.rejected
// webhook; its row names the call it repeats; and it is not offered for replay.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';

for (const d of DIALECTS) {
  describe(`repeated calls [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let firstId: number;
    let repeatId: number;

    const send = (fields: Record<string, string>, idem = '1001:contest_results') =>
      keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
        email: 'anna@example.com',
        name: 'Anna',
        idempotency_key: idem,
        fields,
      });
    const rejectedHooks = async () =>
      Number(
        (
          await t.deps.db.db
            .selectFrom('webhook_deliveries')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('kind', '=', 'event.rejected')
            .executeTakeFirstOrThrow()
        ).n,
      );

    before(async () => {
      t = await createTestApp(d.name);
      ({ key } = await setupProject(t.app));
      // An endpoint that hears of rejections (a name that does not resolve here is accepted when saved).
      const hook = await adminCall(t.app, 'POST', '/api/admin/projects/site1/webhooks', {
        url: 'https://hooks.site1.example/gateway',
        events: ['event.rejected'],
      });
      assert.equal(hook.status, 201);
    });
    after(() => t.close());

    it('answers a changed retry as before, and tells no event.rejected webhook', async () => {
      const first = await send({ event_title: 'Spring', work_title: 'W', place: '1' });
      assert.equal(first.status, 200);
      firstId = first.body.event_id;
      const again = await send({ event_title: 'Spring', work_title: 'W', place: '1', paid_at: '2026-11-25 10:00' });
      assert.equal(again.status, 422);
      assert.equal(again.body.detail.ok, false);
      assert.equal(again.body.detail.error.code, 'idempotency_key_reused');
      assert.equal(again.body.detail.error.original_event_id, firstId);
      assert.equal(await rejectedHooks(), 0, 'a repeated call is no rejection to tell the site about');
      // A real refusal still is told.
      const refused = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
      });
      assert.equal(refused.status, 422);
      assert.equal(refused.body.detail.error.code, 'validation_error');
      assert.equal(await rejectedHooks(), 1);
    });

    it('the chronology says which call it repeats; the filters tell repeats from rejections', async () => {
      const repeated = await adminCall(t.app, 'GET', '/api/admin/external-events?site_key=site1&status=repeated');
      assert.equal(repeated.status, 200);
      assert.equal(repeated.body.items.length, 1);
      const r = repeated.body.items[0];
      repeatId = r.id;
      assert.equal(r.outcome, 'repeated');
      assert.equal(r.repeat_of, firstId);
      assert.equal(r.accepted, false);
      assert.equal(r.http_status, 422);
      assert.equal(r.error_code, 'idempotency_key_reused');
      const rejected = await adminCall(t.app, 'GET', '/api/admin/external-events?site_key=site1&status=rejected');
      assert.deepEqual(
        rejected.body.items.map((e: { error_code: string }) => e.error_code),
        ['validation_error'],
      );
      const accepted = await adminCall(t.app, 'GET', '/api/admin/external-events?site_key=site1&status=accepted');
      assert.ok(accepted.body.items.every((e: { outcome: string }) => e.outcome === 'accepted'));
      const one = await adminCall(t.app, 'GET', `/api/admin/external-events/${firstId}`);
      assert.equal(one.body.event.outcome, 'accepted');
      assert.equal(one.body.event.repeat_of, null);
    });

    it('statistics and the dashboard count it as repeated, not rejected', async () => {
      const s = await adminCall(t.app, 'GET', '/api/admin/external-events/stats?site_key=site1&endpoint=transactional');
      assert.equal(s.status, 200);
      assert.equal(s.body.repeated, 1);
      assert.equal(s.body.rejected, 1);
      assert.equal(s.body.accepted, 1);
      assert.equal(s.body.total, 3);
      assert.deepEqual(
        s.body.rejected_by_code.map((c: { code: string }) => c.code),
        ['validation_error'],
      );
      const day = s.body.by_day[0];
      assert.deepEqual([day.accepted, day.rejected, day.repeated], [1, 1, 1]);
      const dash = await adminCall(t.app, 'GET', '/api/admin/dashboard?site_key=site1');
      assert.equal(dash.status, 200);
      const sum = (k: 'accepted' | 'rejected' | 'repeated') =>
        dash.body.events_by_day.reduce((n: number, x: Record<string, number>) => n + x[k], 0);
      assert.equal(sum('repeated'), 1);
      assert.equal(sum('rejected'), 1);
      const tx = dash.body.events_by_type.find((x: { key: string }) => x.key === 'transactional contest_results');
      assert.equal(tx.repeated, 1);
    });

    it('is not replayed: the answer names the call that did the work', async () => {
      const r = await adminCall(t.app, 'POST', `/api/admin/external-events/${repeatId}/replay`);
      assert.equal(r.status, 409);
      assert.equal(r.body.detail.error.code, 'conflict');
      assert.match(r.body.detail.error.message, new RegExp(`repeats event ${firstId}`));
    });
  });
}
