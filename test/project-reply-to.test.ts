// A project's Reply-To (migration 020, issue 24): set and cleared through the admin API, carried by the
// project's e-mails on the installation's transport, and replaced by the relay settings' reply_to when
// the project has its own relay. SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';
import { installationSecret } from '../src/services/secrets.js';
import { PUBLIC_URL, startSmtp } from './fixtures/delivery-support.js';

for (const d of DIALECTS) {
  describe(`a project's Reply-To [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let n = 0;
    before(async () => {
      t = await createTestApp(d.name);
      ({ key } = await setupProject(t.app));
    });
    after(() => t.close());

    /** Sends one contest e-mail through the capture transport and returns its stored headers. */
    async function sentHeaders(): Promise<Record<string, string>> {
      const r = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
        email: `reader${++n}@example.org`,
        order_id: `R-${n}`,
        fields: { event_title: 'Spring', work_title: 'Poem', place: '1' },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const worker = createWorker({
        db: t.deps.db,
        transport: createCaptureTransport(),
        clock: t.clock,
        publicUrl: PUBLIC_URL,
        secret: await installationSecret(t.deps),
      });
      await worker.runOnce();
      await worker.stop();
      const row = await t.deps.db.db
        .selectFrom('scheduled_emails')
        .select('rendered')
        .where('order_id', '=', `R-${n}`)
        .executeTakeFirstOrThrow();
      return JSON.parse(row.rendered ?? '{}').headers;
    }

    it('PATCH sets and clears it; the e-mails carry it; a relay setting replaces it', async () => {
      const set = await adminCall(t.app, 'PATCH', '/api/admin/projects/site1', { reply_to: 'help@site1.example' });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      assert.equal(set.body.project.reply_to, 'help@site1.example');
      assert.equal((await sentHeaders())['Reply-To'], 'help@site1.example');

      const bad = await adminCall(t.app, 'PATCH', '/api/admin/projects/site1', { reply_to: 'not an address' });
      assert.equal(bad.status, 422);

      const smtp = await startSmtp();
      try {
        const relay = await adminCall(t.app, 'PUT', '/api/admin/projects/site1/delivery', {
          primary: { smtp_url: smtp.url },
          reply_to: 'desk@site1.example',
        });
        assert.equal(relay.status, 200, JSON.stringify(relay.body));
        assert.equal((await sentHeaders())['Reply-To'], 'desk@site1.example');
        assert.equal(smtp.accepted.at(-1)?.replyTo?.value[0].address, 'desk@site1.example');
      } finally {
        await smtp.close();
      }
      assert.equal((await adminCall(t.app, 'DELETE', '/api/admin/projects/site1/delivery')).status, 200);

      const cleared = await adminCall(t.app, 'PATCH', '/api/admin/projects/site1', { reply_to: null });
      assert.equal(cleared.body.project.reply_to, null);
      assert.equal((await sentHeaders())['Reply-To'], undefined);
    });
  });
}
