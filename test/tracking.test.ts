// Opens and clicks end to end (SPEC §17), on both databases: the worker renders and sends through a
// real SMTP server, links come back rewritten and signed, /c/ and /o/ answer and record, the tracking
// worker folds the hits, the site's webhooks go to a real HTTP receiver once per e-mail.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSmtpTransport, type Transport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { createTrackingWorker, type TrackingWorker } from '../src/workers/tracking.js';
import { createWebhookWorker } from '../src/workers/siteWebhooks.js';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';
import { startSmtp, until, type TestSmtp } from './fixtures/delivery-support.js';
import { startReceiver, type Receiver } from './support/webhookReceiver.js';
import { linksOf, pathOf, shapeOf, TRACK_PUBLIC_URL, TRACK_SECRET } from './support/tracking.js';
import { bodyOf } from './support/document.js';
import { purgeTrackingHits } from '../src/repos/trackingHits.js';
import { signUnsubscribeToken } from '../src/delivery/unsubscribe.js';

const T = '/api/scoped/send/transactional';
const BROWSER =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const CYRILLIC = 'https://пример.рф/курсы/оплата?заказ=Б-1&amp;x=%D0%B0#шаг-2';
const TEMPLATE_HTML = `<!doctype html><html lang="ru"><body><p>{{ name }}, <a href="${CYRILLIC}" class="btn">оплатить</a>
<a HREF='https://site.example/a?b=1#frag'>b</a> <a href="mailto:help@site.example">help</a>
<a href="{{ unsubscribe_url }}">unsubscribe</a> <a href=https://site.example/plain>plain</a></p>
<!-- <a href="https://site.example/comment">not a link</a> --></body></html>`;
const TEMPLATE_TEXT = 'Оплатить: https://site.example/text?q=1. Отписаться: {{ unsubscribe_url }}';

for (const d of DIALECTS) {
  describe(`opens and clicks [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let smtp: TestSmtp;
    let transport: Transport;
    let worker: Worker;
    let tracker: TrackingWorker;
    let rx: Receiver;
    let key: string;
    let site: string;

    const send = async (email: string, extra: Record<string, unknown> = {}) => {
      const r = await keyCall(t.app, key, 'POST', T, {
        event_type: 'contest_results',
        email,
        name: 'Анна',
        fields: { event_title: 'Весна', work_title: 'Стих' },
        ...extra,
      });
      assert.equal(r.body.status, 'sent', JSON.stringify(r.body));
      return {
        id: r.body.scheduled_email_id as number,
        detail: (await adminCall(t.app, 'GET', `/api/admin/emails/${r.body.scheduled_email_id}`)).body,
      };
    };
    const hit = (method: 'GET' | 'HEAD', url: string, ua = BROWSER) =>
      t.app.inject({ method, url: pathOf(url), headers: { 'user-agent': ua }, remoteAddress: '203.0.113.77' } as never);
    /** Folds hits until the e-mail shows `opens` human opens and `clicks` human clicks. */
    const folded = async (id: number, want: (e: any) => boolean) => {
      let last: any;
      await until(
        async () => {
          await tracker.runOnce();
          last = (await adminCall(t.app, 'GET', `/api/admin/emails/${id}`)).body.engagement;
          return want(last);
        },
        5000,
        'hits folded',
      );
      return last;
    };

    before(async () => {
      smtp = await startSmtp();
      rx = await startReceiver();
      t = await createTestApp(
        d.name,
        { SEND_WAIT_MS: '5000', PUBLIC_URL: TRACK_PUBLIC_URL, WEBHOOKS_ALLOW_PRIVATE: 'true', TRACKING_FLUSH_MS: '5' },
        { secret: TRACK_SECRET },
      );
      ({ key, site } = await setupProject(t.app));
      // These tests send transactional e-mails: a new project tracks no opens in those (SPEC §22).
      const fresh = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, {
        tracking: { transactional_opens: true },
      });
      assert.deepEqual(fresh.body.project.tracking, { opens: true, clicks: true, transactional_opens: true });
      const saved = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'contest_tpl',
        subject: 'Итоги',
        html: TEMPLATE_HTML,
        text: TEMPLATE_TEXT,
      });
      assert.equal(saved.status < 300, true, JSON.stringify(saved.body));
      const hook = await adminCall(t.app, 'POST', `/api/admin/projects/${site}/webhooks`, {
        url: `${rx.url}/hook`,
        events: ['email.opened', 'email.clicked'],
      });
      rx.secret = hook.body.secret;
      transport = createSmtpTransport(smtp.url);
      worker = createWorker({
        db: t.deps.db,
        transport,
        clock: t.clock,
        publicUrl: TRACK_PUBLIC_URL,
        secret: TRACK_SECRET,
        tracking: true,
        pollMs: 50,
      });
      t.deps.delivery = { wake: () => worker.wake(), waitForOutcome: (id, ms) => worker.waitForOutcome(id, ms) };
      worker.start();
      tracker = createTrackingWorker({ db: t.deps.db, clock: t.clock });
    });
    after(async () => {
      await worker?.stop();
      await transport?.close();
      await t?.close();
      await smtp?.close();
      await rx?.close();
    });

    it('rewrites every http(s) link but the unsubscribe link, ends the HTML with the pixel, and changes nothing else', async () => {
      const { detail } = await send('links@example.com');
      const html: string = detail.html;
      const { hrefs, images } = linksOf(html);
      assert.equal(hrefs.length, 5);
      const [cyr, b, mail, unsub, plain] = hrefs;
      for (const h of [cyr, b, plain]) assert.match(h, /^https:\/\/gw\.example\.test\/c\/c1\./);
      assert.equal(mail, 'mailto:help@site.example');
      assert.match(unsub, /^https:\/\/gw\.example\.test\/u\//, 'the unsubscribe link is not tracked');
      assert.equal(images.length, 1);
      assert.match(images[0], /^https:\/\/gw\.example\.test\/o\/o1\.[^/]+\.gif$/);
      // The pixel is the last thing of the body.
      assert.match(html, /<img src="https:\/\/gw\.example\.test\/o\/[^"]+"[^>]*><\/body>/);
      // Nothing else changes: the same template sent untracked has the same document, links aside.
      await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'contest_tpl',
        subject: 'Итоги',
        html: TEMPLATE_HTML,
        text: TEMPLATE_TEXT,
        tracking: false,
      });
      const untracked = (await send('links@example.com', { idempotency_key: 'links-untracked' })).detail.html;
      await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'contest_tpl',
        subject: 'Итоги',
        html: TEMPLATE_HTML,
        text: TEMPLATE_TEXT,
        tracking: true,
      });
      assert.equal(shapeOf(html), shapeOf(untracked));
      assert.deepEqual(linksOf(untracked).images, []);
      assert.deepEqual(linksOf(untracked).hrefs.slice(0, 3), [
        'https://пример.рф/курсы/оплата?заказ=Б-1&x=%D0%B0#шаг-2',
        'https://site.example/a?b=1#frag',
        'mailto:help@site.example',
      ]);
      assert.ok(html.includes('https://site.example/comment'), 'a link inside a comment is left alone');
      // The text part: its link tracked, the sentence's full stop kept outside it, unsubscribe untouched.
      assert.match(
        detail.text,
        /^Оплатить: https:\/\/gw\.example\.test\/c\/c1\.[^\s]+\. Отписаться: https:\/\/gw\.example\.test\/u\//,
      );
      // What reached the SMTP server is what is stored.
      const mailed = smtp.accepted.find((m) => JSON.stringify(m.to).includes('links@example.com'));
      assert.ok(mailed && String(mailed.html).includes(cyr));
    });

    it('a tracked link leads where the original did: Cyrillic, percent-encoded, query and fragment', async () => {
      const { detail } = await send('dest@example.com');
      const { hrefs } = linksOf(detail.html);
      t.clock.advance(11_000);
      const cases: [string, string][] = [
        [hrefs[0], new URL('https://пример.рф/курсы/оплата?заказ=Б-1&x=%D0%B0#шаг-2').href],
        [hrefs[1], 'https://site.example/a?b=1#frag'],
        [hrefs[4], 'https://site.example/plain'],
      ];
      for (const [tracked, want] of cases) {
        const r = await hit('GET', tracked);
        assert.equal(r.statusCode, 302);
        assert.equal(r.headers.location, want);
        assert.equal(r.headers['cache-control'], 'no-store');
      }
      const textLink = /https:\/\/gw\.example\.test\/c\/\S+?(?=\. )/.exec(detail.text)![0];
      assert.equal((await hit('GET', textLink)).headers.location, 'https://site.example/text?q=1');
    });

    it('counts people once each way, machines apart, and tells the site about the first open and click only', async () => {
      const { id, detail } = await send('people@example.com');
      const { hrefs, images } = linksOf(detail.html);
      // Within the minimum delay, a browser User-Agent is still a scanner's prefetch.
      assert.equal((await hit('GET', images[0])).statusCode, 200);
      assert.equal((await hit('GET', hrefs[1])).statusCode, 302);
      t.clock.advance(11_000);
      // Known machines, whenever they come.
      for (const ua of [
        'Mozilla/5.0',
        'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
        'curl/8.5.0',
        'python-requests/2.31',
        '',
      ])
        assert.equal((await hit('GET', images[0], ua)).statusCode, 200);
      assert.equal((await hit('HEAD', hrefs[1])).statusCode, 302);
      assert.equal((await hit('GET', hrefs[1], 'Barracuda Sentinel (EE)')).statusCode, 302);
      // People.
      const open = await hit('GET', images[0]);
      assert.equal(open.statusCode, 200);
      assert.equal(open.headers['content-type'], 'image/gif');
      assert.equal(open.headers['cache-control'], 'no-store');
      assert.equal(open.rawPayload.subarray(0, 6).toString(), 'GIF89a');
      await hit('GET', images[0]);
      await hit('GET', hrefs[1]);
      await hit('GET', hrefs[0]);
      await hit('GET', hrefs[1]);
      const e = await folded(
        id,
        (g) => g.opens === 2 && g.clicks === 3 && g.machine_opens === 6 && g.machine_clicks === 3,
      );
      assert.equal(e.links.length, 2);
      assert.deepEqual(
        e.links.map((l: any) => l.clicks),
        [1, 2],
      );
      assert.equal(e.links[1].url, 'https://site.example/a?b=1#frag');
      assert.ok(e.first_open_at && e.first_click_at);
      const reasons = e.hits.filter((h: any) => h.machine).map((h: any) => h.machine_reason);
      assert.ok(reasons.includes('too_soon') && reasons.includes('user_agent') && reasons.includes('head_request'));
      assert.ok(
        e.hits.some((h: any) => h.ua_category === 'apple_proxy') &&
          e.hits.some((h: any) => h.ua_category === 'security_scanner'),
      );
      const stored = await t.deps.db.db
        .selectFrom('tracking_hits')
        .select(['ip_prefix', 'ua_category'])
        .where('email_id', '=', id)
        .execute();
      assert.ok(
        stored.every((h) => h.ip_prefix === '203.0.113.0/24'),
        'only the /24 of the address is kept',
      );

      const scoped = await keyCall(t.app, key, 'GET', `/api/scoped/emails/${id}`);
      assert.equal(scoped.body.email.opened_at, e.first_open_at);
      assert.equal(scoped.body.email.clicked_at, e.first_click_at);

      const hooks = createWebhookWorker({
        db: t.deps.db,
        config: t.config.webhooks,
        secret: TRACK_SECRET,
        clock: t.clock,
      });
      await hooks.runOnce();
      const mine = rx.received.filter((r) => r.body.data.scheduled_email_id === id);
      assert.deepEqual(mine.map((r) => r.body.type).sort(), ['email.clicked', 'email.opened']);
      assert.ok(
        mine.every((r) => r.verified),
        'signed as every webhook',
      );
      const clicked = mine.find((r) => r.body.type === 'email.clicked')!;
      assert.equal(clicked.body.data.url, 'https://site.example/a?b=1#frag');
      assert.equal(clicked.body.data.clicked_at, e.first_click_at);
      // More people later: no second webhook.
      await hit('GET', images[0]);
      await folded(id, (g) => g.opens === 3);
      await hooks.runOnce();
      assert.equal(rx.received.filter((r) => r.body.data.scheduled_email_id === id).length, 2);
    });

    it('machines alone fire no webhook and count in no human figure', async () => {
      const { id, detail } = await send('scanned@example.com');
      const { hrefs, images } = linksOf(detail.html);
      for (const h of [...hrefs.filter((x) => x.includes('/c/')), images[0]]) await hit('GET', h);
      const e = await folded(id, (g) => g.machine_clicks === 3 && g.machine_opens === 1);
      assert.equal(e.opens + e.clicks, 0);
      const scoped = await keyCall(t.app, key, 'GET', `/api/scoped/emails/${id}`);
      assert.equal(scoped.body.email.opened_at, null);
      const hooks = createWebhookWorker({
        db: t.deps.db,
        config: t.config.webhooks,
        secret: TRACK_SECRET,
        clock: t.clock,
      });
      await hooks.runOnce();
      assert.equal(rx.received.filter((r) => r.body.data.scheduled_email_id === id).length, 0);
    });

    it('a tampered, truncated or foreign token is 404 and redirects nowhere, without touching the database', async () => {
      const { detail } = await send('tamper@example.com');
      const { hrefs, images } = linksOf(detail.html);
      const good = pathOf(hrefs[1]);
      const parts = good.slice(3).split('.');
      const evil = Buffer.from('https://evil.example/').toString('base64url');
      const bad = [
        good.slice(0, -1),
        `${good}x`,
        good.replace(parts[5], evil),
        `/c/${[...parts.slice(0, 5), evil, parts[6]].join('.')}`,
        good.replace(`.${parts[1]}.`, `.${(parseInt(parts[1], 36) + 1).toString(36)}.`),
        '/c/',
        '/c/..%2F..%2Fetc%2Fpasswd',
        `/c/${'A'.repeat(5000)}`,
        '/c/c1.1.1.0.1.aHR0cHM6Ly9ldmlsLmV4YW1wbGUv.AAAAAAAAAAAAAAAAAAAAAA',
        pathOf(images[0]).replace('.gif', '.png'),
        pathOf(images[0]).replace('/o/o1.', '/o/o1.1'),
        `/o/${pathOf(hrefs[1]).slice(3)}.gif`,
      ];
      for (const url of bad) {
        const r = await t.app.inject({ method: 'GET', url, headers: { 'user-agent': BROWSER } });
        assert.ok([400, 404].includes(r.statusCode), `${url.slice(0, 80)} → ${r.statusCode}`);
        assert.equal(r.headers.location, undefined);
      }
      // Signed by another installation: refused.
      const other = await createTestApp(
        d.name,
        { PUBLIC_URL: TRACK_PUBLIC_URL },
        { secret: 'another-installation-secret-000000' },
      );
      try {
        assert.equal((await other.app.inject({ method: 'GET', url: good })).statusCode, 404);
      } finally {
        await other.close();
      }
    });

    it('links signed before a key rotation keep working under SECRET_KEY_PREVIOUS', async () => {
      const { detail } = await send('rotate@example.com');
      const link = pathOf(linksOf(detail.html).hrefs[1]);
      const rotated = await createTestApp(
        d.name,
        { PUBLIC_URL: TRACK_PUBLIC_URL, SECRET_KEY_PREVIOUS: TRACK_SECRET },
        { secret: 'the-new-installation-secret-0000000' },
      );
      try {
        const r = await rotated.app.inject({ method: 'GET', url: link });
        assert.equal(r.statusCode, 302);
        assert.equal(r.headers.location, 'https://site.example/a?b=1#frag');
      } finally {
        await rotated.close();
      }
    });

    it('project settings: opens off keeps links tracked; clicks off with UTM adds UTM to the links themselves', async () => {
      const off = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, { tracking: { opens: false } });
      assert.equal(off.status, 200);
      assert.deepEqual(off.body.project.tracking, { opens: false, clicks: true, transactional_opens: true });
      assert.equal(off.body.project.utm, null);
      let { detail } = await send('noopens@example.com');
      assert.equal(linksOf(detail.html).images.length, 0);
      assert.match(linksOf(detail.html).hrefs[1], /\/c\/c1\./);

      const utm = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, {
        tracking: { clicks: false },
        utm: { source: 'gateway', medium: 'email', campaign: '{{ template_key }}' },
      });
      assert.deepEqual(utm.body.project.tracking, { opens: false, clicks: false, transactional_opens: true });
      ({ detail } = await send('utm@example.com'));
      const { hrefs } = linksOf(detail.html);
      assert.equal(
        hrefs[1],
        'https://site.example/a?b=1&utm_source=gateway&utm_medium=email&utm_campaign=contest_tpl#frag',
      );
      assert.ok(
        detail.html.includes(
          'href="https://site.example/a?b=1&amp;utm_source=gateway&amp;utm_medium=email&amp;utm_campaign=contest_tpl#frag"',
        ),
      );

      // Clicks on again with UTM: the redirect carries the parameters; a link with its own utm_ keeps them.
      await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, { tracking: { clicks: true, opens: true } });
      // transactional_opens off: opens stay on for the other topics, a transactional e-mail has no pixel.
      const tx = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, {
        tracking: { transactional_opens: false },
      });
      assert.deepEqual(tx.body.project.tracking, { opens: true, clicks: true, transactional_opens: false });
      ({ detail } = await send('txopens@example.com'));
      assert.equal(linksOf(detail.html).images.length, 0);
      assert.match(linksOf(detail.html).hrefs[1], /\/c\/c1\./);
      await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, { tracking: { transactional_opens: true } });
      // A project made before issue 39 stored no transactional_opens: it reads as equal to opens.
      await t.deps.db.db
        .updateTable('projects')
        .set({ tracking: '{"opens":false,"clicks":true,"utm":null}' })
        .where('site_key', '=', site)
        .execute();
      const old = await adminCall(t.app, 'GET', '/api/admin/projects');
      assert.deepEqual(old.body.items.find((p: any) => p.site_key === site).tracking, {
        opens: false,
        clicks: true,
        transactional_opens: false,
      });
      await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, {
        tracking: { opens: true, transactional_opens: true },
        utm: { source: 'gateway', medium: 'email', campaign: '{{ template_key }}' },
      });
      await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'contest_tpl',
        subject: 'Итоги',
        html: '<a href="https://site.example/x?utm_source=own">own</a><a href="https://site.example/y#top">y</a>',
        text: '',
      });
      ({ detail } = await send('utm2@example.com'));
      t.clock.advance(11_000);
      const [own, y] = linksOf(detail.html).hrefs;
      assert.equal((await hit('GET', own)).headers.location, 'https://site.example/x?utm_source=own');
      assert.equal(
        (await hit('GET', y)).headers.location,
        'https://site.example/y?utm_source=gateway&utm_medium=email&utm_campaign=contest_tpl#top',
      );
      const view = await adminCall(t.app, 'GET', '/api/admin/projects');
      assert.deepEqual(view.body.items.find((p: any) => p.site_key === site).utm, {
        source: 'gateway',
        medium: 'email',
        campaign: '{{ template_key }}',
      });
      const bad = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, {
        tracking: { opens: 'yes' },
        utm: { term: 'x' },
      });
      assert.equal(bad.status, 422);
      await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, { utm: null });
    });

    it('a template with tracking false carries no pixel and no rewritten link', async () => {
      const html = '<p>Ваш пароль: 123</p><a href="https://site.example/login?u=1">войти</a>';
      const saved = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'contest_tpl',
        subject: 'Пароль',
        html,
        text: 'https://site.example/login?u=1',
        tracking: false,
      });
      assert.ok(saved.status < 300);
      const list = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`);
      assert.equal(list.body.items.find((x: any) => x.name === 'contest_tpl').tracking, false);
      assert.equal(list.body.items.find((x: any) => x.name === 'cart_1h').tracking, true);
      const { detail } = await send('password@example.com');
      assert.equal(bodyOf(detail.html), html);
      assert.equal(detail.text, 'https://site.example/login?u=1');
      // Saving without the member keeps the setting.
      await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'contest_tpl',
        subject: 'Пароль',
        html,
        text: '',
      });
      const again = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`);
      assert.equal(again.body.items.find((x: any) => x.name === 'contest_tpl').tracking, false);
    });

    it('hits and per-link URLs follow the e-mail bodies’ retention; the counters stay', async () => {
      await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'contest_tpl',
        subject: 'Итоги',
        html: '<a href="https://site.example/r">r</a>',
        text: '',
        tracking: true,
      });
      const { id, detail } = await send('retention@example.com');
      t.clock.advance(11_000);
      assert.equal((await hit('GET', linksOf(detail.html).hrefs[0])).statusCode, 302);
      const before = await folded(id, (g) => g.clicks === 1);
      const day = 86_400_000;
      // Not yet expired: nothing goes.
      assert.equal(await purgeTrackingHits(t.deps.db.db, t.clock.now() - 30 * day), 0);
      t.clock.advance(31 * day);
      const purged = await purgeTrackingHits(t.deps.db.db, t.clock.now() - 30 * day);
      assert.ok(purged >= 2, `hits and link rows purged (${purged})`);
      const after = (await adminCall(t.app, 'GET', `/api/admin/emails/${id}`)).body.engagement;
      assert.deepEqual(after.hits, []);
      assert.deepEqual(after.links, []);
      assert.equal(after.clicks, before.clicks);
      assert.equal(after.first_click_at, before.first_click_at);
      t.clock.advance(-31 * day);
    });

    it('a purchase after a human click on a cart e-mail is attributed to it; figures per step and template', async () => {
      await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'cart_1h',
        subject: 'Корзина',
        html: '<p>{{ course_name }}</p><a href="https://site.example/pay/{{ order_id }}">оплатить</a>',
        text: '',
      });
      const oc = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: 'buyer@example.com',
        order_id: 'A-1',
        course_name: 'Инклюзия',
      });
      assert.equal(oc.status, 200, JSON.stringify(oc.body));
      const [h1] = oc.body.scheduled_email_ids;
      t.clock.advance(61 * 60_000);
      worker.wake();
      assert.equal(await worker.waitForOutcome(h1, 5000), 'sent');
      const detail = (await adminCall(t.app, 'GET', `/api/admin/emails/${h1}`)).body;
      // Opened and clicked by a person a minute later.
      t.clock.advance(60_000);
      await hit('GET', linksOf(detail.html).images[0]);
      assert.equal((await hit('GET', linksOf(detail.html).hrefs[0])).headers.location, 'https://site.example/pay/A-1');
      // The purchase finds the click even before the worker folded it.
      await until(
        async () =>
          Number(
            (
              await t.deps.db.db
                .selectFrom('tracking_hits')
                .select((eb) => eb.fn.countAll().as('n'))
                .where('email_id', '=', h1)
                .executeTakeFirstOrThrow()
            ).n,
          ) === 2,
      );
      t.clock.advance(60_000);
      const p = await keyCall(t.app, key, 'POST', '/api/scoped/events/purchase', {
        cart_type: 'course',
        email: 'buyer@example.com',
        order_id: 'A-1',
        amount: 2500,
        currency: 'RUB',
      });
      assert.equal(p.status, 200, JSON.stringify(p.body));
      assert.deepEqual(p.body.attributed_to, { scheduled_email_id: h1, step: '1h', template_key: 'cart_1h' });
      const ev = await keyCall(t.app, key, 'GET', '/api/scoped/events?order_id=A-1');
      const row = ev.body.items.find((i: any) => i.event_id === p.body.event_id || i.id === p.body.event_id);
      assert.deepEqual(row.effects.attributed_to, p.body.attributed_to);
      // A repeated purchase reads the same decision back.
      const again = await keyCall(t.app, key, 'POST', '/api/scoped/events/purchase', {
        cart_type: 'course',
        email: 'buyer@example.com',
        order_id: 'A-1',
      });
      assert.deepEqual(again.body.attributed_to, p.body.attributed_to);
      // No click, no attribution.
      const oc2 = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: 'quiet@example.com',
        order_id: 'A-2',
        course_name: 'X',
      });
      assert.equal(oc2.status, 200);
      const p2 = await keyCall(t.app, key, 'POST', '/api/scoped/events/purchase', {
        cart_type: 'course',
        email: 'quiet@example.com',
        order_id: 'A-2',
        amount: 100,
      });
      assert.equal(p2.body.attributed_to, null);

      await folded(h1, (g) => g.clicks === 1 && g.opens === 1);
      const dash = await adminCall(t.app, 'GET', `/api/admin/dashboard?site_key=${site}`);
      assert.equal(dash.status, 200);
      const step = dash.body.cart_steps.find((s: any) => s.cart_type === 'course' && s.step === '1h');
      assert.deepEqual(step, {
        cart_type: 'course',
        step: '1h',
        sent: 1,
        delivered: 1,
        opened: 1,
        clicked: 1,
        purchased_after_click: 1,
        recovered_by_currency: { RUB: 2500 },
      });
      const stats = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates/cart_1h/stats`);
      assert.equal(stats.status, 200);
      assert.deepEqual(
        {
          sent: stats.body.sent,
          delivered: stats.body.delivered,
          opened: stats.body.opened,
          clicked: stats.body.clicked,
          bounced: stats.body.bounced,
          complained: stats.body.complained,
          unsubscribed: stats.body.unsubscribed,
        },
        { sent: 1, delivered: 1, opened: 1, clicked: 1, bounced: 0, complained: 0, unsubscribed: 0 },
      );
      // A one-click unsubscribe from this cart reminder leaves its topic only (the contact stays active):
      // the template's figures count it (SPEC §22).
      const buyer = await t.deps.db.db
        .selectFrom('contacts')
        .select(['id', 'project_id', 'email'])
        .where('email', '=', 'buyer@example.com')
        .executeTakeFirstOrThrow();
      const token = signUnsubscribeToken(TRACK_SECRET, buyer, 'cart_reminders');
      t.clock.advance(60_000);
      const one = await t.app.inject({
        method: 'POST',
        url: `/u/${token}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'List-Unsubscribe=One-Click',
      });
      assert.equal(one.statusCode, 200);
      const left = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates/cart_1h/stats`);
      assert.equal(left.body.unsubscribed, 1, JSON.stringify(left.body));
      const other = await adminCall(
        t.app,
        'GET',
        `/api/admin/projects/${site}/templates/contest_tpl/stats?since=2000-01-01T00:00:00Z`,
      );
      assert.equal(other.body.unsubscribed, 0, 'not the transactional template the buyer was not sent last');
      const contest = await adminCall(
        t.app,
        'GET',
        `/api/admin/projects/${site}/templates/contest_tpl/stats?since=2000-01-01T00:00:00Z`,
      );
      assert.ok(contest.body.sent >= 8 && contest.body.opened >= 1 && contest.body.clicked >= 1);
      assert.equal((await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates/nope/stats`)).status, 404);
      assert.equal(
        (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates/cart_1h/stats?since=yesterday`)).status,
        422,
      );
    });
  });
}
