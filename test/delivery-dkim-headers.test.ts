// Messages receivers trust (issue 24): a cart e-mail sent through a real relay with the project's DKIM key
// carries a signature whose h= tag covers List-Unsubscribe and List-Unsubscribe-Post (RFC 8058 §4) and
// the identity headers, that verifies with mailauth against the published record, and carries
// `Auto-Submitted: auto-generated` like every e-mail.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { dkimVerify } from 'mailauth';
import { loadConfig } from '../src/config.js';
import { cliActor } from '../src/cliAdmin.js';
import { DeliveryRouter } from '../src/delivery/router.js';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { systemClock, type Deps } from '../src/services/context.js';
import { putDelivery } from '../src/services/delivery.js';
import { secretBox } from '../src/services/secrets.js';
import {
  PUBLIC_URL,
  SECRET,
  addContact,
  addEmail,
  openTestDb,
  seedProject,
  startSmtp,
  type TestDb,
} from './fixtures/delivery-support.js';
import { DIALECTS } from './support/harness.js';

const REQUIRED = [
  'from',
  'to',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'list-unsubscribe',
  'list-unsubscribe-post',
  'reply-to',
  'auto-submitted',
];

/** The tags of the message's DKIM-Signature header, unfolded. */
function dkimTags(raw: string): Record<string, string> {
  const head = raw.split(/\r?\n\r?\n/, 1)[0].replace(/\r?\n[ \t]+/g, ' ');
  const line = head.split(/\r?\n/).find((l) => /^DKIM-Signature:/i.test(l));
  assert.ok(line, 'the message has a DKIM-Signature');
  return Object.fromEntries(
    line
      .replace(/^DKIM-Signature:\s*/i, '')
      .split(';')
      .map((t) => t.trim())
      .filter(Boolean)
      .map((t) => [t.slice(0, t.indexOf('=')).trim(), t.slice(t.indexOf('=') + 1).replace(/\s+/g, '')]),
  );
}

for (const d of DIALECTS) {
  describe(`DKIM signature and headers of a sent cart e-mail (${d.name})`, { skip: d.skip }, () => {
    let t: TestDb;
    before(async () => {
      t = await openTestDb(d.name);
    });
    after(async () => t?.cleanup());

    it('h= covers List-Unsubscribe, List-Unsubscribe-Post and the identity headers; it verifies', async () => {
      const seeded = await seedProject(t.db, { siteKey: 'signed', fromEmail: 'noreply@signed.example' });
      const deps: Deps = {
        db: t.db,
        config: loadConfig({ RELAYS_ALLOW_PRIVATE: 'true', SEND_WAIT_MS: '0' }),
        clock: systemClock,
        secret: SECRET,
      };
      const relay = await startSmtp();
      const router = new DeliveryRouter({ installation: createCaptureTransport(), box: secretBox(SECRET) });
      try {
        const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
        const view = await putDelivery(deps, cliActor(), 'signed', {
          primary: { smtp_url: relay.url },
          from_email: 'news@signed.example',
          reply_to: 'help@signed.example',
          dkim: {
            domain: 'signed.example',
            selector: 's1',
            private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
          },
        });
        const worker = createWorker({
          db: t.db,
          transport: createCaptureTransport(),
          router,
          publicUrl: PUBLIC_URL,
          secret: SECRET,
          concurrency: 1,
        });
        const contactId = await addContact(t.db, seeded.projectId, 'cart@example.org');
        await addEmail(t.db, { ...seeded, contactId, to: 'cart@example.org', kind: 'cart' });
        await worker.runOnce();
        assert.equal(relay.raws.length, 1, 'the relay got the e-mail');
        const raw = relay.raws[0].toString('utf8');

        assert.match(raw, /^Auto-Submitted: auto-generated\r?$/im);
        assert.match(raw, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/im);
        const tags = dkimTags(raw);
        assert.equal(tags.d, 'signed.example');
        const signed = tags.h.toLowerCase().split(':');
        for (const name of REQUIRED) assert.ok(signed.includes(name), `h= lacks ${name}: ${tags.h}`);

        const record = view.dkim!.dns_record;
        const res = await dkimVerify(relay.raws[0], {
          resolver: async (name: string, type: string) => {
            if (type === 'TXT' && name === record.name) return [[record.value]];
            throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
          },
        });
        assert.equal(res.results[0]?.status.result, 'pass', JSON.stringify(res.results[0]?.status));
        // The signature breaks if a signed header is changed on the way: List-Unsubscribe-Post is covered.
        const tampered = Buffer.from(raw.replace('List-Unsubscribe=One-Click', 'List-Unsubscribe=Two-Clicks'));
        const broken = await dkimVerify(tampered, { resolver: async () => [[record.value]] });
        assert.notEqual(broken.results[0]?.status.result, 'pass');
      } finally {
        await router.close();
        await relay.close();
      }
    });
  });
}
