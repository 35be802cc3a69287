// The admin UI's first week (issue 37), the API half: what the event page, the dashboard and the contact
// search read, on SQLite and on PostgreSQL. The browser half is test/ui-first-week-browser.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  adminCall,
  createTestApp,
  DIALECTS,
  keyCall,
  newKey,
  REPLAY_RIGHTS,
  replayableContest as contest,
  setupProject,
  type TestApp,
} from './support/harness.js';

const T = '/api/scoped/send/transactional';

for (const d of DIALECTS) {
  describe(`admin UI first week, API [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    let key: string;
    const lastEvent = async (order: string) =>
      (await adminCall(t.app, 'GET', `/api/admin/external-events?site_key=${site}&order_id=${order}`)).body.items[0];
    const eventById = async (id: number) =>
      (await adminCall(t.app, 'GET', `/api/admin/external-events/${id}`)).body.event;

    before(async () => {
      t = await createTestApp(d.name);
      ({ site, key } = await setupProject(t.app));
    });
    after(() => t?.close());

    it('1. a refused event keeps the members its answer named, and is not replayable when the request is at fault', async () => {
      const { email: _drop, ...body } = contest('F-1');
      const r = await keyCall(t.app, key, 'POST', T, body);
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.deepEqual(r.body.detail.error.missing_fields, ['email']);
      const ev = await eventById((await lastEvent('F-1')).id);
      assert.deepEqual(ev.effects.refusal.missing_fields, ['email'], JSON.stringify(ev.effects));
      assert.equal(ev.replayable, false, 'a body without email is refused again whatever is configured');
      const replay = await adminCall(t.app, 'POST', `/api/admin/external-events/${ev.id}/replay`);
      assert.equal(replay.status, 409, JSON.stringify(replay.body));
      assert.equal(replay.body.detail.error.reason, 'replay_request_fault');

      // An invalid value is named with the API's problem text.
      const bad = await keyCall(t.app, key, 'POST', T, { ...contest('F-2'), email: 'not-an-address' });
      assert.equal(bad.status, 422, JSON.stringify(bad.body));
      const badEv = await eventById((await lastEvent('F-2')).id);
      assert.equal(typeof badEv.effects.refusal.invalid_fields.email, 'string', JSON.stringify(badEv.effects));
      assert.equal(badEv.replayable, false);

      // A refusal the key's rights explain can succeed after a fix: replayable.
      const narrow = await newKey(t.app, site, { ...REPLAY_RIGHTS, allowed_api_events: ['olympiad_results'] });
      assert.equal((await keyCall(t.app, narrow.key, 'POST', T, contest('F-3'))).status, 403);
      const rights = await eventById((await lastEvent('F-3')).id);
      assert.equal(rights.replayable, true);
    });

    it('2. the dashboard counts sent, delivered, opened and clicked by one definition, and key refusals per project', async () => {
      const oc = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: 'cart@example.com',
        order_id: 'D-1',
        course_name: 'Педагогика',
      });
      assert.equal(oc.status, 200, JSON.stringify(oc.body));
      assert.equal((await keyCall(t.app, key, 'POST', T, contest('D-2'))).status, 200);
      const db = t.deps.db.db;
      const mails = await db
        .selectFrom('scheduled_emails')
        .select(['id', 'kind', 'chain_step'])
        .where('order_id', 'in', ['D-1', 'D-2'])
        .orderBy('id')
        .execute();
      const cart = mails.filter((m) => m.kind === 'cart');
      const tx = mails.find((m) => m.kind !== 'cart')!;
      assert.equal(cart.length, 3);
      // What the relay and the reports made of them: accepted with no report (most receivers send none),
      // confirmed by a report, and a transactional one that bounced.
      const now = t.clock.now();
      const mark = (id: number, status: 'sent' | 'delivered' | 'bounced') =>
        db.updateTable('scheduled_emails').set({ status, sent_at: now }).where('id', '=', id).execute();
      await mark(cart[0].id, 'sent');
      await mark(cart[1].id, 'delivered');
      await mark(tx.id, 'bounced');

      const dash = await adminCall(t.app, 'GET', `/api/admin/dashboard?site_key=${site}`);
      assert.equal(dash.status, 200, JSON.stringify(dash.body));
      assert.deepEqual(dash.body.emails_sent, { sent: 3, delivered: 2, opened: 0, clicked: 0 });
      const stepsDelivered = dash.body.cart_steps.reduce((sum: number, s: any) => sum + s.delivered, 0);
      assert.equal(stepsDelivered, 2, 'the cart steps count delivered the same way');

      // Key refusals: a disabled key's requests are counted for its project.
      const other = await newKey(t.app, site, REPLAY_RIGHTS, 'old site');
      assert.equal((await adminCall(t.app, 'POST', `/api/admin/keys/${other.id}/disable`)).status, 200);
      assert.equal((await keyCall(t.app, other.key, 'POST', T, contest('D-3'))).status, 403);
      const after = await adminCall(t.app, 'GET', `/api/admin/dashboard?site_key=${site}`);
      const mine = after.body.key_refusals.find((r: any) => r.site_key === site);
      assert.ok(mine, JSON.stringify(after.body.key_refusals));
      assert.equal(mine.by_code.api_key_disabled, 1);
    });

    it('6. contacts are found by name and by address, whatever the case and ё or е', async () => {
      const add = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: 'Petrova@Example.com',
        name: 'Алёна Петрова',
        order_id: 'S-1',
        course_name: 'Педагогика',
      });
      assert.equal(add.status, 200, JSON.stringify(add.body));
      const find = async (text: string) =>
        (await adminCall(t.app, 'GET', `/api/admin/contacts?site_key=${site}&email=${encodeURIComponent(text)}`)).body
          .items as { email: string; name: string }[];
      for (const text of ['алёна', 'алена', 'АЛЕНА', 'Петрова', 'petrova@', 'PETROVA'])
        assert.deepEqual(
          (await find(text)).map((c) => c.email),
          ['petrova@example.com'],
          `"${text}" finds the contact`,
        );
      assert.deepEqual(await find('ольга'), []);
      assert.deepEqual(await find('100%'), [], 'a wildcard is matched literally');
    });

    it('6b. an erased contact is subscribed to no topic', async () => {
      const c = (await adminCall(t.app, 'GET', `/api/admin/contacts?site_key=${site}&email=petrova`)).body.items[0];
      const before = await adminCall(t.app, 'GET', `/api/admin/contacts/${c.id}`);
      assert.ok(before.body.topics.some((x: { subscribed: boolean }) => x.subscribed));
      assert.equal((await adminCall(t.app, 'POST', `/api/admin/contacts/${c.id}/erase`)).status, 200);
      const erased = await adminCall(t.app, 'GET', `/api/admin/contacts/${c.id}`);
      assert.deepEqual(
        erased.body.topics.map((x: { subscribed: boolean }) => x.subscribed),
        erased.body.topics.map(() => false),
      );
    });

    it('7. an API key typed in Cyrillic is told so, in the language asked for', async () => {
      // What PHP's curl sends for a key typed in a Russian layout: UTF-8 bytes, read by Node as latin1.
      const typed = Buffer.from('егц_дшму_ключ', 'utf8').toString('latin1');
      const ru = await keyCall(t.app, typed, 'POST', T, contest('K-1'), { 'accept-language': 'ru' });
      assert.equal(ru.status, 401);
      assert.equal(ru.body.detail.error.code, 'invalid_api_key');
      assert.match(ru.body.detail.error.message, /русские буквы/);
      const en = await keyCall(t.app, typed, 'POST', T, contest('K-2'));
      assert.match(en.body.detail.error.message, /Cyrillic/);
      const latin = await keyCall(t.app, 'egw_live_nonsense', 'POST', T, contest('K-3'));
      assert.equal(latin.body.detail.error.message, 'The API key is not valid');
    });
  });
}
