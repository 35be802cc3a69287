// SPEC §22 on a real database and a real SMTP server: a new project has a default layout in its
// language; a gallery cart reminder and a transactional e-mail leave in it, with the project's name
// (and logo), the sender's identity (name, postal address, reply address) and, on the cart reminder
// only, visible unsubscribe and preference links; an e-mail of a project whose layout shows no link gets
// the footer at send time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSmtpTransport, type Transport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { templateGallery } from '../src/services/demoTemplates.js';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';
import { startSmtp, type TestSmtp } from './fixtures/delivery-support.js';
import { linksOf } from './support/tracking.js';

const PUBLIC_URL = 'https://gw.example.test';

for (const d of DIALECTS) {
  describe(`default layout of a new project [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let smtp: TestSmtp;
    let transport: Transport;
    let worker: Worker;
    let key: string;
    let site: string;

    before(async () => {
      smtp = await startSmtp();
      t = await createTestApp(d.name, { SEND_WAIT_MS: '5000', PUBLIC_URL });
      ({ key, site } = await setupProject(t.app, { defaultLayout: true }));
      transport = createSmtpTransport(smtp.url);
      worker = createWorker({
        db: t.deps.db,
        transport,
        clock: t.clock,
        publicUrl: PUBLIC_URL,
        secret: 'layout-test-secret-0123456789abcdef',
        tracking: false,
        pollMs: 50,
      });
      t.deps.delivery = { wake: () => worker.wake(), waitForOutcome: (id, ms) => worker.waitForOutcome(id, ms) };
      worker.start();
    });
    after(async () => {
      await worker?.stop();
      await transport?.close();
      await t?.close();
      await smtp?.close();
    });

    const sent = async (id: number) => {
      worker.wake();
      assert.equal(await worker.waitForOutcome(id, 10_000), 'sent');
      return (await adminCall(t.app, 'GET', `/api/admin/emails/${id}`)).body;
    };

    it('is created with the project, in its language, and names the sender', async () => {
      const layouts = await adminCall(t.app, 'GET', `/api/admin/projects/${site}/layouts`);
      assert.equal(layouts.status, 200, JSON.stringify(layouts.body));
      const def = layouts.body.items.find((l: any) => l.name === 'default');
      assert.ok(def, 'a default layout');
      assert.match(def.html, /Отписаться/);
      const patch = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, {
        logo_url: 'https://site1.example/logo.png',
        postal_address: '620000, Екатеринбург, ул. Ленина, 1',
      });
      assert.equal(patch.status, 200, JSON.stringify(patch.body));
      assert.equal(patch.body.project.postal_address, '620000, Екатеринбург, ул. Ленина, 1');
      assert.equal(patch.body.project.default_layout, 'default');
      const bad = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, { logo_url: 'javascript:alert(1)' });
      assert.equal(bad.status, 422);
    });

    it('a gallery cart reminder: header, sender identity, visible unsubscribe and preference links', async () => {
      const g = templateGallery().find((x) => x.routing_key === 'course_abandoned_cart_1h')!;
      const saved = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: site,
        name: 'cart_1h',
        subject: g.subject,
        html: g.html,
        text: g.text,
      });
      assert.ok(saved.status < 300, JSON.stringify(saved.body));
      const oc = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: 'anna@example.com',
        name: 'Анна',
        order_id: 'L-1',
        course_name: 'Инклюзия',
        pay_url: 'https://site1.example/pay/L-1',
      });
      assert.equal(oc.status, 200, JSON.stringify(oc.body));
      t.clock.advance(61 * 60_000);
      const e = await sent(oc.body.scheduled_email_ids[0]);
      const { html, text } = e.rendered ?? e;
      assert.match(html, /Site One/);
      assert.match(html, /<img[^>]+src="https:\/\/site1\.example\/logo\.png"/);
      assert.match(html, /Екатеринбург, ул\. Ленина, 1/);
      assert.match(html, /noreply@site1\.example/);
      const hrefs = linksOf(html).hrefs;
      assert.ok(
        hrefs.some((h) => h.startsWith(`${PUBLIC_URL}/u/`)),
        `an unsubscribe link: ${hrefs.join(' ')}`,
      );
      assert.ok(
        hrefs.some((h) => h.startsWith(`${PUBLIC_URL}/p/`)),
        `a preference link: ${hrefs.join(' ')}`,
      );
      assert.match(html, />Отписаться</);
      assert.match(text, /Отписаться: https:\/\/gw\.example\.test\/u\//);
      assert.match(html, /<html lang="ru"/);
    });

    it('a transactional e-mail: the sender identity, no unsubscribe link', async () => {
      const tr = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
        email: 'boris@example.com',
        name: 'Борис',
        fields: { event_title: 'A', work_title: 'B' },
      });
      assert.equal(tr.status, 200, JSON.stringify(tr.body));
      const e = await sent(tr.body.plan[0].scheduled_email_id);
      const { html } = e.rendered ?? e;
      assert.match(html, /Site One/);
      assert.match(html, /noreply@site1\.example/);
      assert.ok(!linksOf(html).hrefs.some((h) => h.includes('/u/') || h.includes('/p/')), 'no way out to offer');
    });

    it('a layout that shows no unsubscribe link: the footer is added at send time', async () => {
      const bare = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/layouts/bare`, {
        html: '<div>{{ content }}</div>',
        text: '{{ content }}',
      });
      assert.ok(bare.status < 300, JSON.stringify(bare.body));
      const p = await adminCall(t.app, 'PATCH', `/api/admin/projects/${site}`, {
        default_layout: 'bare',
        confirm: true,
      });
      assert.equal(p.status, 200, JSON.stringify(p.body));
      const oc = await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'course',
        email: 'vera@example.com',
        order_id: 'L-2',
        course_name: 'X',
      });
      t.clock.advance(61 * 60_000);
      const e = await sent(oc.body.scheduled_email_ids[0]);
      const { html, text } = e.rendered ?? e;
      assert.ok(
        linksOf(html).hrefs.some((h) => h.startsWith(`${PUBLIC_URL}/u/`)),
        'an unsubscribe link in the HTML',
      );
      assert.match(text, /Отписаться: https:\/\/gw\.example\.test\/u\//);
    });
  });
}
