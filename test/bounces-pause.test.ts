// Issue 14, the stop level: complaints above 0.3 % of the e-mails sent over 7 days (test sends left out),
// reported through a real provider webhook, pause the project's campaigns and cart chains. The worker
// holds them back as `queued` (never lost, never sent twice) while transactional mail goes on, until an
// administrator resumes them (a viewer may not). Both databases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { toFlag } from '../src/db/flags.js';
import { createWorker } from '../src/delivery/worker.js';
import { createCaptureTransport, type Transport } from '../src/delivery/transports.js';
import { MARKETING_PAUSED_ERROR } from '../src/repos/outbox.js';
import { emailForReportById } from '../src/repos/reports.js';
import { addContact, addEmail, emailRow, PUBLIC_URL, SECRET, seedProject } from './fixtures/delivery-support.js';
import { bearerCall, createUser, viewerToken as makeViewerToken } from './support/accounts.js';
import { adminCall, createTestApp, DIALECTS, rawCall, type TestApp } from './support/harness.js';

const AUTH = { authorization: `Basic ${Buffer.from('pm-hook:pm-secret-1234').toString('base64')}` };

for (const d of DIALECTS) {
  describe(`marketing pause on complaints (${d.name})`, { skip: d.skip }, () => {
    let t: TestApp;
    let seeded: { projectId: number; templateId: number };
    let viewerToken: string;
    const providerIds = new Map<string, number>();
    const delivered: string[] = [];
    const capture = createCaptureTransport();
    const transport: Transport = {
      kind: 'capture',
      send: async (msg) => {
        delivered.push(msg.to.address);
        return capture.send(msg);
      },
      close: async () => {},
    };

    before(async () => {
      t = await createTestApp(
        d.name,
        {},
        {
          webhookCredentials: async (_deps, _projectId, provider) =>
            provider === 'postmark' ? { username: 'pm-hook', password: 'pm-secret-1234' } : null,
          providerIdLookup: async (db, projectId, id) => {
            const email = await emailForReportById(db, providerIds.get(id) ?? 0);
            return email?.project_id === projectId ? email : undefined;
          },
        },
      );
      seeded = await seedProject(t.deps.db);
      await createUser(t.app, { email: 'viewer@x.example', role: 'viewer', projects: ['pedsovet'] });
      viewerToken = await makeViewerToken(t.app, 'viewer@x.example');
    });
    after(() => t.close());

    const worker = () =>
      createWorker({ db: t.deps.db, transport, clock: t.clock, publicUrl: PUBLIC_URL, secret: SECRET });
    const project = async () => {
      const r = await adminCall(t.app, 'GET', '/api/admin/projects');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.items.find((p: { site_key: string }) => p.site_key === 'pedsovet');
    };

    /** `count` e-mails sent just now to one contact (test sends when `isTest`), in one statement. */
    async function sentMany(count: number, isTest: boolean) {
      const contactId = await addContact(t.deps.db, seeded.projectId, `bulk-${isTest}@example.net`);
      const now = t.clock.now();
      const row = {
        project_id: seeded.projectId,
        kind: 'transactional' as const,
        template_id: seeded.templateId,
        template_key: 'course_paid',
        contact_id: contactId,
        to_email: `bulk-${isTest}@example.net`,
        context: '{}',
        status: 'sent' as const,
        due_at: now,
        sent_at: now,
        attempts: 1,
        is_test: toFlag(isTest),
        created_at: now,
        updated_at: now,
      };
      await t.deps.db.db
        .insertInto('scheduled_emails')
        .values(Array.from({ length: count }, () => row))
        .execute();
    }

    /** A sent e-mail whose recipient then reports it as spam through Postmark's webhook. */
    async function complaint(n: number) {
      const address = `spam${n}@example.net`;
      const contactId = await addContact(t.deps.db, seeded.projectId, address);
      const id = await addEmail(t.deps.db, { ...seeded, contactId, to: address, status: 'sent' });
      await t.deps.db.db.updateTable('scheduled_emails').set({ sent_at: t.clock.now() }).where('id', '=', id).execute();
      const providerId = `00000000-0000-0000-0000-00000000000${n}`;
      providerIds.set(providerId, id);
      const spam = {
        RecordType: 'SpamComplaint',
        ID: 42 + n,
        Type: 'SpamComplaint',
        TypeCode: 512,
        MessageID: providerId,
        Details: 'Test spam complaint details',
        Email: address,
        BouncedAt: '2019-11-05T16:33:54.9070259Z',
      };
      const r = await rawCall(
        t.app,
        'POST',
        '/api/webhooks/postmark/pedsovet',
        { 'content-type': 'application/json', ...AUTH },
        JSON.stringify(spam),
      );
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal((await emailRow(t.deps.db, id)).status, 'complained');
    }

    test('complaints above 0.3 % of the non-test e-mails sent over 7 days pause the project', async () => {
      // 398 sent + 2 complaining = 400 real sends; 400 test sends would dilute the rate if they counted.
      await sentMany(398, false);
      await sentMany(400, true);
      await complaint(1); // 1 of 400 = 0.25 %: a warning, no pause
      let p = await project();
      assert.equal(p.marketing_paused_at, null);
      await complaint(2); // 2 of 400 = 0.5 %: stop
      p = await project();
      assert.equal(typeof p.marketing_paused_at, 'string');
      assert.match(p.marketing_paused_reason, /complaint rate above 0\.3 %/);

      const dash = await adminCall(t.app, 'GET', '/api/admin/dashboard?site_key=pedsovet&days=7');
      assert.equal(dash.status, 200, JSON.stringify(dash.body));
      const row = dash.body.deliverability.find((r: { site_key: string }) => r.site_key === 'pedsovet');
      assert.equal(row.marketing_paused_at, p.marketing_paused_at);
      assert.equal(row.days7.level, 'stop');
    });

    test('while paused, cart and campaign e-mails wait as queued; transactional ones are sent', async () => {
      const mk = async (address: string, kind: 'cart' | 'campaign' | 'transactional') =>
        addEmail(t.deps.db, {
          ...seeded,
          contactId: await addContact(t.deps.db, seeded.projectId, address),
          to: address,
          kind,
          dueAt: t.clock.now(),
        });
      const cart = await mk('cart@example.net', 'cart');
      const campaign = await mk('campaign@example.net', 'campaign');
      const receipt = await mk('receipt@example.net', 'transactional');
      const w = worker();
      assert.equal(await w.runOnce(), 3);
      assert.deepEqual(delivered, ['receipt@example.net']);
      assert.equal((await emailRow(t.deps.db, receipt)).status, 'sent');
      for (const id of [cart, campaign]) {
        const row = await emailRow(t.deps.db, id);
        assert.equal(row.status, 'queued');
        assert.equal(row.last_error, MARKETING_PAUSED_ERROR);
        assert.equal(Number(row.attempts), 0, 'a pause is not a delivery attempt');
        assert.equal(Number(row.due_at), t.clock.now() + 3_600_000);
        assert.equal(row.locked_by, null);
      }
      // Not due again yet: nothing is claimed, nothing sent twice.
      assert.equal(await w.runOnce(), 0);
      // An hour on, still paused: held back again, still not sent.
      t.clock.advance(3_600_000);
      assert.equal(await w.runOnce(), 2);
      assert.deepEqual(delivered, ['receipt@example.net']);
      assert.equal((await emailRow(t.deps.db, cart)).status, 'queued');
    });

    test('a viewer cannot resume; an administrator can, and the held e-mails go out once', async () => {
      const url = '/api/admin/projects/pedsovet/marketing/resume';
      const denied = await bearerCall(t.app, viewerToken, 'POST', url);
      assert.equal(denied.status, 403, JSON.stringify(denied.body));
      assert.equal(denied.body.detail.ok, false);
      assert.equal(typeof (await project()).marketing_paused_at, 'string', 'still paused');

      const r = await adminCall(t.app, 'POST', url);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.ok, true);
      assert.equal(r.body.project.site_key, 'pedsovet');
      assert.equal(r.body.project.marketing_paused_at, null);
      assert.equal(r.body.project.marketing_paused_reason, null);

      const w = worker();
      assert.equal(await w.runOnce(), 2, 'the held e-mails are due at once');
      assert.deepEqual(delivered.slice(1).sort(), ['campaign@example.net', 'cart@example.net']);
      assert.equal(await w.runOnce(), 0);
      assert.equal(delivered.length, 3, 'each sent exactly once');

      const unknown = await adminCall(t.app, 'POST', '/api/admin/projects/nope/marketing/resume');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.detail.ok, false);
    });
  });
}
