// Opens and clicks with two API processes (`serve`, ROLE=api) and two worker processes (`worker`) over
// one PostgreSQL schema, as an operator runs them: hits arrive at both API processes at once, both
// workers drain the hit outbox, and every human hit is counted exactly once, machines apart, with one
// email.opened and one email.clicked per e-mail.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { dropSchema, openDatabase, schemaUrl, type Db } from '../src/db/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { buildApp } from '../src/http/app.js';
import { systemClock } from '../src/services/context.js';
import { healthy, startProcess, stopProcess, type Proc } from './support/processes.js';
import { freePort, until } from './fixtures/delivery-support.js';
import { ADMIN_TOKEN, adminCall, setupProject } from './support/harness.js';
import { linksOf } from './support/tracking.js';

const PG_URL = process.env.TEST_DATABASE_URL?.trim() || null;
const PUBLIC = 'https://track.example.test';
const SECRET = 'scaleout-tracking-secret-0123456789abcdef';
const EMAILS = 20;
const HUMAN_OPENS = 30; // per e-mail
const HUMAN_CLICKS = 20; // per e-mail, over two links
const MACHINE = 10; // per e-mail, curl and HEAD

describe(
  'tracking scale-out: 2 API + 2 worker processes on PostgreSQL',
  { skip: PG_URL ? false : 'TEST_DATABASE_URL is not set' },
  () => {
    const schema = `track_${randomBytes(5).toString('hex')}`;
    let db: Db;
    let smtp: SMTPServer;
    const procs: Proc[] = [];
    let key = '';

    before(async () => {
      const url = schemaUrl(PG_URL!, schema);
      db = await openDatabase(PG_URL!, { schema, poolSize: 3 });
      await migrateToLatest(db);
      // The project is set up through the admin API of an app in this process, on the same schema.
      const app = await buildApp({
        db,
        config: loadConfig({ ADMIN_TOKEN, DATABASE_URL: url }),
        clock: systemClock,
        secret: SECRET,
      });
      const p = await setupProject(app);
      // Transactional e-mails: a new project tracks no opens in those unless asked (SPEC §22).
      await adminCall(app, 'PATCH', `/api/admin/projects/${p.site}`, { tracking: { transactional_opens: true } });
      key = p.key;
      const saved = await adminCall(app, 'POST', '/api/templates', {
        site_key: p.site,
        name: 'contest_tpl',
        subject: 'Итоги',
        html: '<html><body><a href="https://site.example/one">1</a> <a href="https://site.example/two?x=1">2</a></body></html>',
        text: '',
      });
      assert.ok(saved.status < 300);
      const hook = await adminCall(app, 'POST', `/api/admin/projects/${p.site}/webhooks`, {
        url: 'https://hooks.example.test/in',
        events: ['email.opened', 'email.clicked'],
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      await app.close();

      smtp = new SMTPServer({
        logger: false,
        authOptional: true,
        disabledCommands: ['STARTTLS', 'AUTH'],
        onData(stream, _s, cb) {
          stream.resume();
          stream.on('end', () => cb(null));
        },
      });
      await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
      const smtpPort = (smtp.server.address() as AddressInfo).port;
      // TRACKING_MIN_DELAY_MS=0: the hits below come at once and should count as people's.
      const common = {
        ADMIN_TOKEN,
        DATABASE_URL: url,
        PUBLIC_URL: PUBLIC,
        SECRET_KEY: SECRET,
        TRACKING_MIN_DELAY_MS: '0',
      };
      for (const i of [1, 2]) {
        const port = await freePort();
        procs.push(startProcess(`api${i}`, 'serve', { ...common, ROLE: 'api', PORT: String(port) }, port));
      }
      for (const i of [1, 2]) {
        const port = await freePort();
        procs.push(
          startProcess(
            `worker${i}`,
            'worker',
            { ...common, SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, METRICS_PORT: String(port) },
            port,
          ),
        );
      }
      await Promise.all(procs.map(healthy));
    });

    after(async () => {
      await Promise.all(procs.map(stopProcess));
      await db?.close();
      if (smtp) await new Promise<void>((r) => smtp.close(() => r()));
      if (PG_URL) await dropSchema(PG_URL, schema);
    });

    it('every human hit is counted exactly once; one opened and one clicked webhook per e-mail', async () => {
      const [api1, api2] = procs;
      const ids: number[] = [];
      for (let i = 0; i < EMAILS; i++) {
        const r = await fetch(`http://127.0.0.1:${(i % 2 ? api2 : api1).port}/api/scoped/send/transactional`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key, prefer: 'respond-async' },
          body: JSON.stringify({
            event_type: 'contest_results',
            email: `p${i}@example.com`,
            fields: { event_title: 'E', work_title: 'W' },
          }),
        });
        const body = (await r.json()) as { scheduled_email_id: number };
        assert.equal(r.status, 200, JSON.stringify(body));
        ids.push(body.scheduled_email_id);
      }
      await until(
        async () => {
          const r = await db.db
            .selectFrom('scheduled_emails')
            .select('id')
            .where('id', 'in', ids)
            .where('status', '=', 'sent')
            .execute();
          return r.length === EMAILS;
        },
        60_000,
        'all e-mails sent by the workers',
      );
      const rows = await db.db
        .selectFrom('scheduled_emails')
        .select(['id', 'rendered'])
        .where('id', 'in', ids)
        .execute();
      const requests: { url: string; method: string; ua: string }[] = [];
      const browser =
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
      for (const r of rows) {
        const { hrefs, images } = linksOf(JSON.parse(r.rendered!).html);
        assert.equal(hrefs.length, 2);
        assert.equal(images.length, 1);
        for (let i = 0; i < HUMAN_OPENS; i++) requests.push({ url: images[0], method: 'GET', ua: browser });
        for (let i = 0; i < HUMAN_CLICKS; i++) requests.push({ url: hrefs[i % 2], method: 'GET', ua: browser });
        for (let i = 0; i < MACHINE; i++)
          requests.push({ url: i % 2 ? images[0] : hrefs[0], method: i % 3 ? 'GET' : 'HEAD', ua: 'curl/8.5.0' });
      }
      // All at once, spread over both API processes.
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < requests.length) {
            const i = next++;
            const q = requests[i];
            const api = i % 2 ? api2 : api1;
            const res = await fetch(`http://127.0.0.1:${api.port}${q.url.slice(PUBLIC.length)}`, {
              method: q.method,
              headers: { 'user-agent': q.ua },
              redirect: 'manual',
            });
            await res.arrayBuffer();
            assert.ok([200, 302].includes(res.status), `${q.url} -> ${res.status}`);
          }
        }),
      );
      const totalHits = EMAILS * (HUMAN_OPENS + HUMAN_CLICKS + MACHINE);
      await until(
        async () => {
          const r = await sql<{
            n: string;
            pending: string;
          }>`select count(*) as n, count(*) filter (where processed_at is null) as pending from tracking_hits`.execute(
            db.db,
          );
          return Number(r.rows[0].n) === totalHits && Number(r.rows[0].pending) === 0;
        },
        60_000,
        'every hit written and folded',
      );
      const engagement = await db.db.selectFrom('email_engagement').selectAll().where('email_id', 'in', ids).execute();
      assert.equal(engagement.length, EMAILS);
      for (const e of engagement) {
        assert.equal(Number(e.opens), HUMAN_OPENS, `e-mail ${e.email_id} opens`);
        assert.equal(Number(e.clicks), HUMAN_CLICKS, `e-mail ${e.email_id} clicks`);
        assert.equal(Number(e.machine_opens) + Number(e.machine_clicks), MACHINE);
      }
      const links = await db.db
        .selectFrom('email_link_clicks')
        .select(['email_id', 'clicks'])
        .where('email_id', 'in', ids)
        .execute();
      assert.equal(
        links.reduce((s, l) => s + Number(l.clicks), 0),
        EMAILS * HUMAN_CLICKS,
      );
      const hooks = await sql<{ kind: string; email_id: string; n: string }>`
      select kind, (data::json->>'scheduled_email_id') as email_id, count(*) as n from webhook_deliveries
      where kind in ('email.opened', 'email.clicked') group by 1, 2`.execute(db.db);
      assert.equal(hooks.rows.length, EMAILS * 2, 'one notice of each kind per e-mail');
      assert.ok(hooks.rows.every((h) => Number(h.n) === 1));
    });
  },
);
