// The preference page and topic-bound unsubscribe links (SPEC §18) through HTTP on each database: the
// page in the project's locale and colour, a plain form, CSRF refused, choices recorded as consent with
// their source, and a link that leaves one topic only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signPreferenceToken, signUnsubscribeToken } from '../src/delivery/unsubscribe.js';
import { installationSecret } from '../src/services/secrets.js';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';

const PUBLIC = 'https://mail.example.test';

for (const d of DIALECTS) {
  describe(`preference page and topic links [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    let secret: string;

    before(async () => {
      t = await createTestApp(d.name, { PUBLIC_URL: PUBLIC });
      ({ key, site } = await setupProject(t.app));
      secret = await installationSecret(t.deps);
      // The site listens for unsubscribes (the worker is not running: the outbox rows are read directly).
      const hook = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/webhooks`, {
        url: 'https://site.example/hook.php',
        events: ['contact.unsubscribed'],
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
    });
    after(() => t.close());

    const contact = async (email: string) => {
      await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        email,
        order_id: `o-${email}`,
        cart_type: 'course',
      });
      const id = (await adminCall(t.app, 'GET', `/api/admin/contacts?email=${encodeURIComponent(email)}`)).body.items[0]
        .id as number;
      const page = async () => (await adminCall(t.app, 'GET', `/api/admin/contacts/${id}`)).body;
      const projectId = (
        await t.deps.db.db.selectFrom('contacts').select('project_id').where('id', '=', id).executeTakeFirstOrThrow()
      ).project_id;
      return { id, page, subject: { id, project_id: Number(projectId), email } };
    };
    const formOf = (html: string) => /name="form_token" value="([^"]+)"/.exec(html)?.[1];
    const post = (url: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'TestBrowser/1.0', ...headers },
        payload: new URLSearchParams(form).toString(),
      });
    /** The contact.unsubscribed notices queued for the site about one address: [reason, status, topics]. */
    const notices = async (email: string) =>
      (
        await t.deps.db.db
          .selectFrom('webhook_deliveries')
          .select('data')
          .where('kind', '=', 'contact.unsubscribed')
          .orderBy('id')
          .execute()
      )
        .map((r) => JSON.parse(r.data))
        .filter((x: any) => x.email === email)
        .map((x: any) => [x.reason, x.status, x.topics ?? null]);
    const subscribed = (page: any) => Object.fromEntries(page.topics.map((x: any) => [x.key, x.subscribed]));

    it('shows the topics in Russian, in the project colour, as a labelled form without JavaScript', async () => {
      await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, { brand_color: '#7c3aed' });
      const c = await contact('pref@example.com');
      const res = await t.app.inject({ method: 'GET', url: `/p/${signPreferenceToken(secret, c.subject)}` });
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /<html lang="ru">/);
      assert.match(res.body, /Настройки писем/);
      assert.match(res.body, /Site One/);
      assert.match(res.body, /#7c3aed/);
      assert.match(res.body, /<label for="topic-cart_reminders">Напоминания о неоплаченных заказах<\/label>/);
      assert.match(res.body, /id="topic-transactional" checked disabled/);
      assert.match(res.body, /name="topic_newsletters" value="on" checked/);
      assert.match(res.body, /<form method="post">/);
      assert.match(res.body, /name="action" value="leave_all"/);
      assert.ok(!/<script/i.test(res.body), 'no JavaScript');
      assert.ok(!res.body.includes('pref@example.com'), 'the address is masked');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      const forged = signPreferenceToken(secret, { ...c.subject, id: c.id + 1000 });
      assert.equal((await t.app.inject({ method: 'GET', url: `/p/${forged}` })).statusCode, 404);
      // An unsubscribe token is not a preference token.
      const unsub = signUnsubscribeToken(secret, c.subject);
      assert.equal((await t.app.inject({ method: 'GET', url: `/p/${unsub}` })).statusCode, 404);
    });

    it('refuses a form without a token of this link, or sent from another site; nothing changes', async () => {
      const c = await contact('csrf@example.com');
      const url = `/p/${signPreferenceToken(secret, c.subject)}`;
      const form = formOf((await t.app.inject({ method: 'GET', url })).body)!;
      const other = await contact('other@example.com');
      const otherForm = formOf(
        (await t.app.inject({ method: 'GET', url: `/p/${signPreferenceToken(secret, other.subject)}` })).body,
      )!;
      const attempts: [Record<string, string>, Record<string, string>][] = [
        [{ action: 'leave_all' }, {}],
        [{ action: 'leave_all', form_token: otherForm }, {}],
        [{ action: 'leave_all', form_token: form }, { 'sec-fetch-site': 'cross-site' }],
        [{ action: 'leave_all', form_token: form }, { origin: 'https://evil.example' }],
      ];
      for (const [f, h] of attempts) assert.equal((await post(url, f, h)).statusCode, 403, JSON.stringify([f, h]));
      t.clock.advance(7 * 3_600_000);
      assert.equal((await post(url, { action: 'leave_all', form_token: form })).statusCode, 403, 'an old page');
      const page = await c.page();
      assert.equal(page.contact.status, 'active');
      assert.deepEqual(page.consent, []);
    });

    it('saves switches as consent records from the preference page, and leaves all with one button', async () => {
      const c = await contact('choose@example.com');
      const url = `/p/${signPreferenceToken(secret, c.subject)}`;
      const form = formOf((await t.app.inject({ method: 'GET', url })).body)!;
      const saved = await post(
        url,
        { form_token: form, action: 'save', topic_cart_reminders: 'on' },
        { origin: PUBLIC, 'sec-fetch-site': 'same-origin' },
      );
      assert.equal(saved.statusCode, 303);
      assert.equal(saved.headers.location, `${url.slice('/p/'.length)}?saved=1`, 'relative to the page');
      let page = await c.page();
      assert.deepEqual(subscribed(page), { transactional: true, cart_reminders: true, newsletters: false });
      assert.deepEqual(
        page.consent.map((x: any) => [x.topic, x.granted, x.source, x.user_agent]),
        [['newsletters', false, 'preference_page', 'TestBrowser/1.0']],
      );
      assert.ok(page.consent[0].ip);
      const shown = await t.app.inject({ method: 'GET', url: `${url}?saved=1` });
      assert.match(shown.body, /Сохранено/);
      assert.match(shown.body, /name="topic_newsletters" value="on">/, 'unchecked now');
      assert.deepEqual(await notices('choose@example.com'), [['preference_page', 'active', ['newsletters']]]);

      const left = await post(url, { form_token: form, action: 'leave_all' });
      assert.equal(left.statusCode, 303);
      page = await c.page();
      assert.equal(page.contact.status, 'unsubscribed');
      assert.deepEqual(subscribed(page), { transactional: true, cart_reminders: false, newsletters: false });
      assert.deepEqual(
        await notices('choose@example.com'),
        [
          ['preference_page', 'active', ['newsletters']],
          ['preference_page', 'unsubscribed', null],
        ],
        'leaving all is one notice, not one per topic',
      );
      // The waiting cart e-mails of the left topic were suppressed in the same transaction.
      const emails = (await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}&to=choose%40example.com`)).body
        .items;
      assert.ok(emails.length > 0 && emails.every((e: any) => e.status === 'suppressed'), JSON.stringify(emails));
      // Ticking one topic again brings the contact back to that topic only.
      await post(url, { form_token: form, action: 'save', topic_newsletters: 'on' });
      page = await c.page();
      assert.equal(page.contact.status, 'active');
      assert.deepEqual(subscribed(page), { transactional: true, cart_reminders: false, newsletters: true });
    });

    it('an unsubscribe link names its topic and leaves only that one; a mail client one-click is list_unsubscribe', async () => {
      const c = await contact('link@example.com');
      const url = `/u/${signUnsubscribeToken(secret, c.subject, 'cart_reminders')}`;
      const ask = await t.app.inject({ method: 'GET', url });
      assert.equal(ask.statusCode, 200);
      assert.match(ask.body, /Напоминания о неоплаченных заказах/);
      const one = await t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'List-Unsubscribe=One-Click',
      });
      assert.equal(one.statusCode, 200);
      const page = await c.page();
      assert.equal(page.contact.status, 'active');
      assert.deepEqual(subscribed(page), { transactional: true, cart_reminders: false, newsletters: true });
      assert.deepEqual(
        page.consent.map((x: any) => [x.topic, x.granted, x.source]),
        [['cart_reminders', false, 'list_unsubscribe']],
      );
      assert.deepEqual(await notices('link@example.com'), [['link', 'active', ['cart_reminders']]]);
      const emails = (await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}&to=link%40example.com`)).body
        .items;
      assert.ok(emails.every((e: any) => e.status === 'suppressed'));
      // An edited topic does not pass the MAC.
      const edited = url.replace('cart_reminders', 'newsletters');
      assert.equal((await t.app.inject({ method: 'GET', url: edited })).statusCode, 404);
      // Links of an erased person are dead.
      await adminCall(t.app, 'POST', `/api/admin/contacts/${c.id}/erase`);
      assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 404);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: `/p/${signPreferenceToken(secret, c.subject)}` })).statusCode,
        404,
      );
    });

    it('speaks English for an English project', async () => {
      await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, { locale: 'en' });
      const c = await contact('en@example.com');
      const res = await t.app.inject({ method: 'GET', url: `/p/${signPreferenceToken(secret, c.subject)}` });
      assert.match(res.body, /<html lang="en">/);
      assert.match(res.body, /E-mail preferences/);
      assert.match(res.body, /Unsubscribe from all mailings/);
      await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, { locale: 'ru' });
    });
  });
}
