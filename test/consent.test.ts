// SPEC §18 through HTTP on each database: topics, consent in gateway bodies and the scoped endpoint,
// suppression at scheduling by topic and by consent, and that bad consent changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const P = '/api/scoped/events/purchase';
const C = '/api/scoped/contacts/consent';
const contest = (email: string, extra: Record<string, unknown> = {}) => ({
  event_type: 'contest_results',
  email,
  fields: { event_title: 'Spring', work_title: 'Poem', place: '1' },
  ...extra,
});
const order = (email: string, id: string, extra: Record<string, unknown> = {}) => ({
  email,
  order_id: id,
  cart_type: 'course',
  course_name: 'Методика',
  ...extra,
});

for (const d of DIALECTS) {
  describe(`consent and topics [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    const contactOf = async (email: string) => {
      const found = await adminCall(
        t.app,
        'GET',
        `/api/admin/contacts?email=${encodeURIComponent(email)}&site_key=${site}`,
      );
      const id = found.body.items[0]?.id;
      return id ? (await adminCall(t.app, 'GET', `/api/admin/contacts/${id}`)).body : null;
    };
    const emailRows = async (email: string) =>
      (await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}&to=${encodeURIComponent(email)}`)).body
        .items as any[];

    before(async () => {
      t = await createTestApp(d.name);
      ({ key, site } = await setupProject(t.app));
    });
    after(() => t.close());

    it('a new project has transactional, cart_reminders and newsletters; PUT edits and keeps the built-in ones', async () => {
      const r = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/topics`);
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.topics.map((x: any) => [x.key, x.title, x.advertising, x.require_consent]),
        [
          ['transactional', 'Письма о заказах и документах', false, false],
          ['cart_reminders', 'Напоминания о неоплаченных заказах', true, false],
          // SPEC §22: advertising by e-mail needs prior consent in a new project.
          ['newsletters', 'Новости и рассылки', true, true],
        ],
      );
      const put = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/topics`, {
        topics: [{ key: 'webinars', title: 'Вебинары', advertising: true, require_consent: true }],
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.deepEqual(
        put.body.topics.map((x: any) => x.key),
        ['transactional', 'webinars', 'cart_reminders', 'newsletters'],
      );
      const bad = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/topics`, {
        topics: [
          { key: 'transactional', title: 'x', advertising: true, require_consent: false },
          { key: 'webinars', title: 'a', advertising: true, require_consent: false },
          { key: 'webinars', title: 'b', advertising: true, require_consent: false },
        ],
      });
      assert.equal(bad.status, 422);
      assert.ok(bad.body.detail.error.invalid_fields['topics[0]']);
      assert.ok(bad.body.detail.error.invalid_fields['topics[2].key']);
      const still = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/topics`);
      assert.equal(still.body.topics.find((x: any) => x.key === 'webinars').require_consent, true, 'nothing changed');
    });

    it('consent in an order-created body is recorded with the event, and a withdrawal suppresses the chain', async () => {
      const r = await keyCall(t.app, key, 'POST', OC, {
        ...order('left@example.com', 'L-1'),
        consent: [{ topic: 'cart_reminders', granted: false, text_version: 'v3', ip: '203.0.113.9' }],
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.plan.length, 3);
      for (const p of r.body.plan) {
        assert.equal(p.status, 'suppressed');
        assert.equal(p.reason, 'contact_unsubscribed');
      }
      const rows = await emailRows('left@example.com');
      assert.equal(rows.length, 3);
      assert.ok(rows.every((e) => e.status === 'suppressed'));
      const c = await contactOf('left@example.com');
      assert.equal(c.contact.status, 'active', 'one topic left, not all');
      assert.deepEqual(
        c.consent.map((x: any) => [x.topic, x.granted, x.source, x.text_version, x.ip]),
        [['cart_reminders', false, 'api', 'v3', '203.0.113.9']],
      );
      const topics = Object.fromEntries(c.topics.map((x: any) => [x.key, x.subscribed]));
      assert.deepEqual(topics, { transactional: true, webinars: true, cart_reminders: false, newsletters: true });
      // A transactional e-mail still goes.
      const tr = await keyCall(t.app, key, 'POST', T, contest('left@example.com'));
      assert.equal(tr.status, 200);
      assert.equal(tr.body.plan[0].status, 'queued');
      assert.equal(tr.body.plan[0].reason, null);
    });

    it('a topic that requires consent: suppressed (no_consent) until a grant, which the same body may carry', async () => {
      await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/topics`, {
        topics: [{ key: 'cart_reminders', title: 'Напоминания', advertising: true, require_consent: true }],
      });
      const none = await keyCall(t.app, key, 'POST', OC, order('nc@example.com', 'NC-1'));
      assert.deepEqual(
        none.body.plan.map((p: any) => [p.status, p.reason]),
        [
          ['suppressed', 'no_consent'],
          ['suppressed', 'no_consent'],
          ['suppressed', 'no_consent'],
        ],
      );
      const granted = await keyCall(t.app, key, 'POST', OC, {
        ...order('nc@example.com', 'NC-2'),
        consent: [{ topic: 'cart_reminders', granted: true, at: new Date(t.clock.now() - 60_000).toISOString() }],
      });
      assert.deepEqual(
        granted.body.plan.map((p: any) => p.status),
        ['scheduled', 'scheduled', 'scheduled'],
      );
      // A withdrawal through the scoped endpoint suppresses the waiting ones at once.
      const w = await keyCall(t.app, key, 'POST', C, {
        email: 'NC@example.com',
        topic: 'cart_reminders',
        granted: false,
      });
      assert.equal(w.status, 200, JSON.stringify(w.body));
      assert.equal(w.body.subscribed, false);
      const rows = await emailRows('nc@example.com');
      assert.equal(rows.filter((e) => e.status === 'suppressed').length, 6);
      // The withdrawal on a topic that requires consent stops them for want of consent (SPEC §22), and
      // so does it the next order's chain: no_consent, not contact_unsubscribed.
      const scoped = await keyCall(t.app, key, 'GET', `/api/scoped/emails?order_id=NC-2`);
      assert.equal(scoped.status, 200, JSON.stringify(scoped.body));
      assert.deepEqual(
        scoped.body.items.map((e: any) => `${e.status} ${e.reason}`),
        ['suppressed no_consent', 'suppressed no_consent', 'suppressed no_consent'],
      );
      const after = await keyCall(t.app, key, 'POST', OC, order('nc@example.com', 'NC-3'));
      assert.deepEqual(
        after.body.plan.map((p: any) => p.reason),
        ['no_consent', 'no_consent', 'no_consent'],
      );
      const c = await contactOf('nc@example.com');
      assert.deepEqual(
        c.consent.map((x: any) => [x.granted, x.source]),
        [
          [false, 'api'],
          [true, 'api'],
        ],
      );
      await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/topics`, {
        topics: [{ key: 'cart_reminders', title: 'Напоминания', advertising: true, require_consent: false }],
      });
    });

    it('a grant after unsubscribing from everything subscribes to that topic only', async () => {
      await keyCall(t.app, key, 'POST', C, { email: 'back@example.com', topic: 'newsletters', granted: true });
      const id = (await contactOf('back@example.com')).contact.id;
      await adminCall(t.app, 'POST', `/api/admin/contacts/${id}/status`, { status: 'unsubscribed' });
      const byAdmin = (await contactOf('back@example.com')).consent.filter((x: any) => x.source === 'admin');
      assert.deepEqual(byAdmin.map((x: any) => [x.topic, x.granted]).sort(), [
        ['cart_reminders', false],
        ['newsletters', false],
      ]);
      const r = await keyCall(t.app, key, 'POST', C, {
        email: 'back@example.com',
        topic: 'newsletters',
        granted: true,
      });
      assert.equal(r.body.subscribed, true);
      const c = await contactOf('back@example.com');
      assert.equal(c.contact.status, 'active');
      const topics = Object.fromEntries(c.topics.map((x: any) => [x.key, x.subscribed]));
      assert.equal(topics.newsletters, true);
      assert.equal(topics.cart_reminders, false, 'the other topics stay left');
      const oc = await keyCall(t.app, key, 'POST', OC, order('back@example.com', 'B-1'));
      assert.ok(oc.body.plan.every((p: any) => p.status === 'suppressed'));
      // An administrator making the contact active again opens the topics it left.
      await adminCall(t.app, 'POST', `/api/admin/contacts/${id}/status`, { status: 'unsubscribed' });
      await adminCall(t.app, 'POST', `/api/admin/contacts/${id}/status`, { status: 'active' });
      const again = await keyCall(t.app, key, 'POST', OC, order('back@example.com', 'B-2'));
      assert.ok(
        again.body.plan.every((p: any) => p.status === 'scheduled'),
        JSON.stringify(again.body.plan),
      );
    });

    it('bad consent is a 422 naming the member, and nothing is changed', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ topic: 'nope', granted: true }, 'topic'],
        [{ topic: 'newsletters', granted: 'yes' }, 'granted'],
        [{ topic: 'newsletters', granted: true, at: new Date(t.clock.now() + 3_600_000).toISOString() }, 'at'],
        [{ topic: 'newsletters', granted: true, at: 'yesterday' }, 'at'],
        [{ topic: 'newsletters', granted: true, ip: '999.1.1.1' }, 'ip'],
        [{ topic: 'newsletters', granted: true, ip: 'a\u0000b' }, 'ip'],
        [{ topic: 'transactional', granted: false }, 'topic'],
        [{ topic: 'newsletters', granted: true, text_version: 'v\u00001' }, 'text_version'],
        [{ topic: 'newsletters', granted: true, user_agent: 'x\ud800' }, 'user_agent'],
        [{ topic: 'newsletters', granted: true, at: '9999999-01-01T00:00:00Z' }, 'at'],
      ];
      for (const [item, member] of cases) {
        const s = await keyCall(t.app, key, 'POST', C, { email: 'bad@example.com', ...item });
        assert.equal(s.status, 422, JSON.stringify(item));
        assert.ok(member in s.body.detail.error.invalid_fields, `${member}: ${JSON.stringify(s.body)}`);
        const g = await keyCall(t.app, key, 'POST', T, contest('bad@example.com', { consent: [item] }));
        assert.equal(g.status, 422, JSON.stringify(item));
        assert.ok(`consent[0].${member}` in g.body.detail.error.invalid_fields, JSON.stringify(g.body));
      }
      const notArray = await keyCall(
        t.app,
        key,
        'POST',
        OC,
        order('bad@example.com', 'X-1', { consent: { topic: 'x' } }),
      );
      assert.equal(notArray.status, 422);
      assert.ok('consent' in notArray.body.detail.error.invalid_fields);
      assert.equal(await contactOf('bad@example.com'), null, 'no contact, no record, no e-mail');
      // A purchase is not refused for it: it stops the cart e-mails and warns.
      const p = await keyCall(t.app, key, 'POST', P, {
        ...order('bad@example.com', 'X-2'),
        consent: [{ topic: 'nope', granted: true }],
      });
      assert.equal(p.status, 200, JSON.stringify(p.body));
      assert.ok(p.body.warning_details.some((w: any) => w.member === 'consent[0].topic'));
      assert.deepEqual((await contactOf('bad@example.com')).consent, []);
    });

    it("a template's topic decides: a routed template of the newsletters topic is stopped for a contact who left it", async () => {
      const bad = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'contest_tpl',
        subject: 's',
        html: 'h',
        text: 't',
        topic: 'nope',
      });
      assert.equal(bad.status, 422);
      assert.ok('topic' in bad.body.detail.error.invalid_fields);
      const ok = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'contest_tpl',
        subject: 's',
        html: 'h',
        text: 't',
        topic: 'newsletters',
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const listed = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`);
      assert.equal(listed.body.items.find((x: any) => x.name === 'contest_tpl').topic, 'newsletters');
      await keyCall(t.app, key, 'POST', C, { email: 'tpl@example.com', topic: 'newsletters', granted: false });
      const r = await keyCall(t.app, key, 'POST', T, contest('tpl@example.com'));
      // newsletters requires consent in a new project: a withdrawal there is no_consent (SPEC §22).
      assert.deepEqual(
        [r.body.status, r.body.plan[0].status, r.body.plan[0].reason],
        ['suppressed', 'suppressed', 'no_consent'],
      );
      // A PUT that leaves the built-in topics out keeps them (the defaults by use name them).
      const gone = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/topics`, { topics: [] });
      assert.equal(gone.status, 200, 'built-in topics are kept when left out');
      await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'contest_tpl',
        subject: 's',
        html: 'h',
        text: 't',
        topic: null,
      });
      const back = await keyCall(t.app, key, 'POST', T, contest('tpl@example.com'));
      assert.equal(back.body.plan[0].status, 'queued', 'null: the default of its use (transactional)');
    });

    it('the scoped consent endpoint takes any key of the project and logs to the chronology', async () => {
      const { body } = await adminCall(t.app, 'POST', '/api/admin/keys', {
        site_key: site,
        name: 'bare',
        rights: { permissions: [] },
      });
      const r = await keyCall(t.app, body.key, 'POST', C, {
        email: 'any@example.com',
        topic: 'newsletters',
        granted: true,
        text_version: 'policy-2025-09',
        ip: '2001:db8::1',
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const ev = await adminCall(
        t.app,
        'GET',
        `/api/admin/external-events?site_key=${site}&event_type=contact_consent`,
      );
      assert.ok(ev.body.items.some((e: any) => e.event_id === r.body.event_id || e.id === r.body.event_id));
    });
  });
}
