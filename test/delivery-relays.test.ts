// Per-project transports against real SMTP relays (smtp-server): the project's primary, failover to the
// fallback on a refused connection or a 4xx, never on a 5xx, the circuit breaker, settings changes taking
// effect without a restart, the sender settings, and a DKIM signature verified on the received message.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { dkimVerify } from 'mailauth';
import { loadConfig } from '../src/config.js';
import { DeliveryRouter } from '../src/delivery/router.js';
import { emailIdByRelayId } from '../src/repos/delivery.js';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { systemClock, type Deps } from '../src/services/context.js';
import { cliActor } from '../src/cliAdmin.js';
import { putDelivery } from '../src/services/delivery.js';
import { email } from '../src/services/emails.js';
import { secretBox } from '../src/services/secrets.js';
import {
  PG_URL,
  PUBLIC_URL,
  SECRET,
  addContact,
  addEmail,
  emailRow,
  freePort,
  openTestDb,
  seedProject,
  startSmtp,
  type Seeded,
  type TestDb,
  type TestSmtp,
  until,
} from './fixtures/delivery-support.js';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(
    `per-project relays (${dialect})`,
    { skip: dialect === 'postgres' && !PG_URL ? 'no TEST_DATABASE_URL' : false },
    () => {
      let t: TestDb;
      let seeded: Seeded;
      let deps: Deps;
      const servers: TestSmtp[] = [];
      let router: DeliveryRouter;
      let worker: Worker;
      let n = 0;
      const breakerChanges: string[] = [];

      before(async () => {
        t = await openTestDb(dialect);
        seeded = await seedProject(t.db, { siteKey: 'relays', fromEmail: 'noreply@relays.example' });
        deps = {
          db: t.db,
          config: loadConfig({ RELAYS_ALLOW_PRIVATE: 'true', SEND_WAIT_MS: '0' }),
          clock: systemClock,
          secret: SECRET,
        };
      });
      const newWorker = (breaker = { failures: 100, cooldownMs: 600_000 }) => {
        router = new DeliveryRouter({
          installation: createCaptureTransport(),
          box: secretBox(SECRET),
          breaker,
          onBreaker: (label, state) => breakerChanges.push(`${label} ${state}`),
        });
        worker = createWorker({
          db: t.db,
          transport: createCaptureTransport(),
          router,
          publicUrl: PUBLIC_URL,
          secret: SECRET,
          concurrency: 1,
          retry: { maxAttempts: 3, baseMs: 60_000, capMs: 60_000 },
        });
      };
      afterEach(async () => {
        await router?.close();
        for (const s of servers.splice(0)) await s.close();
      });
      after(async () => t?.cleanup());

      const relay = async (script: Parameters<typeof startSmtp>[0] = {}) => {
        const s = await startSmtp(script);
        servers.push(s);
        return s;
      };
      const send = async (who = 'reader') => {
        const to = `${who}${++n}@example.org`;
        const contactId = await addContact(t.db, seeded.projectId, to);
        const id = await addEmail(t.db, { projectId: seeded.projectId, templateId: seeded.templateId, contactId, to });
        await worker.runOnce();
        return id;
      };

      it('sends through the primary and records its queue id and the Message-ID', async () => {
        const a = await relay({ acceptReply: (i) => `Ok: queued as PRIM${i}` });
        await putDelivery(deps, cliActor(), 'relays', {
          primary: { smtp_url: a.url },
          from_name: 'Relays Academy',
          from_email: 'news@relays.example',
          reply_to: 'help@relays.example',
        });
        newWorker();
        const id = await send();
        assert.equal((await emailRow(t.db, id)).status, 'sent');
        assert.equal(a.accepted.length, 1);
        const got = a.accepted[0];
        assert.equal(got.from?.value[0].address, 'news@relays.example');
        assert.equal(got.from?.value[0].name, 'Relays Academy');
        assert.equal(got.replyTo?.value[0].address, 'help@relays.example');
        const detail = await email(deps, id);
        assert.equal(detail.attempts_log.length, 1);
        const [att] = detail.attempts_log;
        assert.equal(att.transport, 'primary');
        assert.equal(att.ok, true);
        assert.equal(att.queue_id, 'PRIM1');
        assert.match(att.reply ?? '', /queued as PRIM1/);
        // Provider reports are matched back by it (issue 14).
        assert.equal(await emailIdByRelayId(t.db.db, 'PRIM1'), id);
        assert.equal(await emailIdByRelayId(t.db.db, 'PRIM-unknown'), null);
        assert.equal(att.message_id, got.messageId ? `<${got.messageId.replace(/^<|>$/g, '')}>` : null);
      });

      it('fails over to the fallback at once when the primary refuses connections', async () => {
        const b = await relay();
        await putDelivery(deps, cliActor(), 'relays', {
          primary: { smtp_url: `smtp://127.0.0.1:${await freePort()}` },
          fallback: { smtp_url: b.url },
        });
        newWorker();
        const id = await send();
        assert.equal((await emailRow(t.db, id)).status, 'sent');
        assert.equal(b.accepted.length, 1);
        const log = (await email(deps, id)).attempts_log;
        assert.deepEqual(
          log.map((a) => [a.transport, a.ok]),
          [
            ['primary', false],
            ['fallback', true],
          ],
        );
        assert.match(log[0].reply ?? '', /ECONNREFUSED/);
        assert.equal(log[0].attempt, log[1].attempt, 'one attempt of the e-mail, two transports');
      });

      it('fails over on a 4xx, and never on a 5xx', async () => {
        const a = await relay({
          onRcpt: (_i, addr) =>
            addr.startsWith('soft')
              ? { code: 451, message: '4.3.0 try later' }
              : { code: 550, message: '5.1.1 no such user' },
        });
        const b = await relay();
        await putDelivery(deps, cliActor(), 'relays', { primary: { smtp_url: a.url }, fallback: { smtp_url: b.url } });
        newWorker();
        const soft = await send('soft');
        assert.equal((await emailRow(t.db, soft)).status, 'sent');
        assert.equal(b.accepted.length, 1);
        const hard = await send('hard');
        const row = await emailRow(t.db, hard);
        assert.equal(row.status, 'failed');
        assert.match(row.last_error ?? '', /550/);
        assert.equal(b.accepted.length, 1, 'the fallback never saw the 5xx e-mail');
        const log = (await email(deps, hard)).attempts_log;
        assert.deepEqual(
          log.map((x) => x.transport),
          ['primary'],
        );
      });

      it('opens the breaker after N failures in a row and skips the primary during the cool-down', async () => {
        const b = await relay();
        const dead = `smtp://127.0.0.1:${await freePort()}`;
        await putDelivery(deps, cliActor(), 'relays', { primary: { smtp_url: dead }, fallback: { smtp_url: b.url } });
        newWorker({ failures: 2, cooldownMs: 600_000 });
        await send();
        await send();
        const third = await send();
        assert.equal(b.accepted.length, 3);
        const log = (await email(deps, third)).attempts_log;
        assert.equal(log[0].transport, 'primary');
        assert.match(log[0].reply ?? '', /circuit open/);
        const states = router.breakerStates(seeded.projectId);
        assert.equal(states.primary?.state, 'open');
        assert.equal(states.fallback?.state, 'closed');
        // What /metrics shows (egw_delivery_breaker_state) follows these changes.
        assert.equal(breakerChanges.at(-1), 'relays/primary open');
      });

      it('applies changed settings to the next e-mail without a restart', async () => {
        const a = await relay();
        const b = await relay();
        await putDelivery(deps, cliActor(), 'relays', { primary: { smtp_url: a.url } });
        newWorker();
        await send();
        await putDelivery(deps, cliActor(), 'relays', { primary: { smtp_url: b.url } });
        await send();
        assert.equal(a.accepted.length, 1);
        assert.equal(b.accepted.length, 1);
        // The pool replaced by the change is closed with the router, not 30 s later.
        await router.close();
        await until(() => a.open === 0 && b.open === 0, 5_000, 'the relay connections closed');
      });

      it('signs with the project DKIM key; the signature verifies against the published record', async () => {
        const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
        const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
        const a = await relay();
        const view = await putDelivery(deps, cliActor(), 'relays', {
          primary: { smtp_url: a.url },
          from_email: 'news@relays.example',
          dkim: { domain: 'relays.example', selector: 'egw1', private_key: pem },
        });
        newWorker();
        await send();
        const raw = a.raws[0];
        assert.match(raw.toString(), /DKIM-Signature:.*d=relays\.example/s);
        const record = view.dkim!.dns_record;
        const res = await dkimVerify(raw, {
          resolver: async (name: string, type: string) => {
            if (type === 'TXT' && name === record.name) return [[record.value]];
            throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
          },
        });
        assert.equal(res.results[0]?.status.result, 'pass', JSON.stringify(res.results[0]?.status));
        // A wrong published key fails: the check above can fail.
        const bad = await dkimVerify(raw, {
          resolver: async () => [[record.value.replace(/p=.{10}/, 'p=AAAAAAAAAA')]],
        });
        assert.notEqual(bad.results[0]?.status.result, 'pass');
      });
    },
  );
}
