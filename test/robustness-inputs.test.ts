// Issue 11, the hostile client: huge and non-finite amounts, deep JSON, U+0000 and unpaired surrogates,
// ids out of range and forged cursors, malformed HTTP. Each numbered case of the issue, through HTTP, on
// SQLite and PostgreSQL: no 500, the SPEC §1 envelope, the same answer on both engines.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { migrateTo, migrateToLatest } from '../src/db/migrate.js';
import {
  adminCall,
  createTestApp,
  DIALECTS,
  events,
  keyCall,
  rawCall,
  setupProject,
  testDatabase,
  type TestApp,
} from './support/harness.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const P = '/api/scoped/events/purchase';
const contest = {
  event_type: 'contest_results',
  email: 'anna@example.com',
  fields: { event_title: 'E', work_title: 'W' },
};

function envelope(r: { status: number; body: any }, status: number, code: string) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.detail.ok, false);
  assert.equal(r.body.detail.error.code, code);
  assert.equal(typeof r.body.detail.error.message, 'string');
}

/** A JSON text nesting `n` arrays around 1 (built as text: JSON.stringify would recurse). */
const nested = (n: number) => '['.repeat(n) + '1' + ']'.repeat(n);

for (const d of DIALECTS) {
  describe(`hostile inputs [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    let lists: { paid: number; cat: number; leads: number };
    before(async () => {
      t = await createTestApp(d.name);
      ({ key, site, lists } = await setupProject(t.app));
    });
    after(() => t.close());

    it('case 1: amounts are bounded and exact; statistics never overflow', async () => {
      // 1e308 and 1e400 (Infinity once parsed) are refused or dropped, never stored.
      for (const [i, amount] of ['1e308', '1e400', '-1e400', '1000000000.01', '2500.005', '-1'].entries()) {
        const r = await keyCall(
          t.app,
          key,
          'POST',
          P,
          `{"cart_type":"course","email":"rich@example.com","order_id":"huge-${i}","amount":${amount}}`,
        );
        assert.ok(r.status < 500, `${amount}: ${r.status}`);
        if (r.status === 422) assert.ok(r.body.detail.error.invalid_fields.amount, JSON.stringify(r.body));
        else assert.match(JSON.stringify(r.body.warnings), /amount/, JSON.stringify(r.body));
      }
      const stored = await t.deps.db.db.selectFrom('orders').select(['order_id', 'amount_minor']).execute();
      for (const o of stored.filter((x) => x.order_id.startsWith('huge-'))) assert.equal(o.amount_minor, null);

      // The largest amount twice, and amounts a double cannot add exactly (0.1 + 0.2).
      for (const [i, amount] of [1_000_000_000, 1_000_000_000, 0.1, 0.2, 0.29].entries()) {
        const r = await keyCall(t.app, key, 'POST', P, {
          cart_type: 'course',
          email: 'rich@example.com',
          order_id: `max-${i}`,
          amount,
          currency: 'RUB',
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      const minor = await t.deps.db.db
        .selectFrom('orders')
        .select('amount_minor')
        .where('order_id', '=', 'max-4')
        .executeTakeFirstOrThrow();
      assert.equal(Number(minor.amount_minor), 29, '0.29 is 29 hundredths, not 28.999…');
      const overview = await adminCall(t.app, 'GET', '/api/stats/overview');
      assert.equal(overview.status, 200, JSON.stringify(overview.body));
      assert.equal(overview.body.orders.paid_amount_by_currency.RUB, 2_000_000_000.59);
      const dash = await adminCall(t.app, 'GET', '/api/admin/dashboard?days=7');
      assert.equal(dash.status, 200, JSON.stringify(dash.body));
    });

    it('case 1: amounts stored before migration 005 are kept when valid, dropped when not', async () => {
      const fresh = await testDatabase(d.name);
      try {
        await migrateTo(fresh.db, '004_config_version');
        const db = fresh.db.db as unknown as Kysely<any>;
        const now = Date.now();
        const p = await db
          .insertInto('projects')
          .values({ site_key: 'old', name: 'Old', from_email: 'o@example.com', created_at: now, updated_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        const c = await db
          .insertInto('contacts')
          .values({
            project_id: p.id,
            email: 'o@example.com',
            fields: '{}',
            status: 'active',
            created_at: now,
            updated_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        const amounts = [2500.5, 1e308, Infinity, -3, 0.29, null, 1e9];
        for (const [i, amount] of amounts.entries()) {
          await db
            .insertInto('orders')
            .values({
              project_id: p.id,
              order_id: `o${i}`,
              cart_type: 'course',
              contact_id: c.id,
              status: 'paid',
              amount,
              created_at: now,
              updated_at: now,
            })
            .execute();
        }
        await migrateToLatest(fresh.db);
        const rows = await fresh.db.db
          .selectFrom('orders')
          .select(['order_id', 'amount_minor'])
          .orderBy('order_id')
          .execute();
        assert.deepEqual(
          rows.map((r) => (r.amount_minor === null ? null : Number(r.amount_minor))),
          [250050, null, null, null, 29, null, 100_000_000_000],
        );
      } finally {
        await fresh.cleanup();
      }
      // Through HTTP too: an amount with more than 2 decimals is refused wherever it is taken.
      const r = await keyCall(t.app, key, 'POST', T, { ...contest, amount: 1e-7 });
      envelope(r, 422, 'validation_error');
      assert.match(r.body.detail.error.invalid_fields.amount, /2 decimals/);
      assert.equal((await keyCall(t.app, key, 'POST', T, { ...contest, amount: 99.99 })).status, 200);
    });

    it('case 4: JSON deeper than 32 levels is 400 invalid_json on every endpoint that takes a body', async () => {
      const deepFields = `{"event_type":"contest_results","email":"a@example.com","order_id":"deep","cart_type":"course","fields":{"event_title":"E","work_title":"W","x":${nested(10_000)}}}`;
      assert.ok(deepFields.length < 64 * 1024);
      for (const url of [T, OC, P, `/api/scoped/lists/${lists.leads}/contacts`]) {
        const r = await keyCall(t.app, key, 'POST', url, deepFields);
        envelope(r, 400, 'invalid_json');
        assert.equal(r.body.detail.error.max_depth, 32);
        assert.match(r.body.detail.error.message, /32 levels/);
      }
      const logged = await events(t.app, `?site_key=${site}&status=rejected&limit=10`);
      assert.ok(
        logged.filter((e) => e.error_code === 'invalid_json').length >= 4,
        'the refusals are in the chronology',
      );
      const admin: [string, string][] = [
        ['/api/contacts/upsert', `{"site_key":"${site}","email":"a@example.com","fields":{"x":${nested(10_000)}}}`],
        [
          '/api/events/unpaid-order',
          `{"site_key":"${site}","email":"a@example.com","order_id":"d","fields":{"x":${nested(10_000)}}}`,
        ],
        [
          '/api/admin/templates/preview',
          `{"site_key":"${site}","subject":"s","html":"h","text":"t","sample":{"x":${nested(10_000)}}}`,
        ],
      ];
      for (const [url, body] of admin) envelope(await adminCall(t.app, 'POST', url, body), 400, 'invalid_json');

      // The limit is exact: 32 levels (the body object counts as one) pass, 33 do not.
      const at = (n: number) =>
        `{"event_type":"contest_results","email":"a@example.com","fields":{"event_title":"E","work_title":"W","x":${nested(n)}}}`;
      assert.equal((await keyCall(t.app, key, 'POST', T, at(30))).status, 200);
      envelope(await keyCall(t.app, key, 'POST', T, at(31)), 400, 'invalid_json');
      // Brackets inside strings are text, not nesting.
      const inString = await keyCall(t.app, key, 'POST', T, {
        ...contest,
        fields: { ...contest.fields, note: '['.repeat(5000) + '"\\' },
      });
      assert.equal(inString.status, 200, JSON.stringify(inString.body));
    });

    it('case 4: a refused request whose chronology write fails still gets its envelope, logged and counted', async () => {
      await sql`alter table events rename to events_away`.execute(t.deps.db.db);
      try {
        const r = await keyCall(t.app, key, 'POST', T, { event_type: 'contest_results' });
        envelope(r, 422, 'validation_error');
      } finally {
        await sql`alter table events_away rename to events`.execute(t.deps.db.db);
      }
      const m = await rawCall(t.app, 'GET', '/metrics', {});
      assert.match(m.body, /^egw_event_log_failures_total 1$/m);
    });

    it('case 5: U+0000 and unpaired surrogates are 422 naming the member in bodies, on both engines alike', async () => {
      const bad = ['a\u0000b', '\ud800', 'x\udfffy'];
      for (const s of bad) {
        const cases: [string, string, Record<string, unknown>, string][] = [
          ['key', T, { ...contest, name: s }, 'name'],
          ['key', T, { ...contest, idempotency_key: s }, 'idempotency_key'],
          ['key', T, { ...contest, fields: { ...contest.fields, work_title: s } }, 'fields.work_title'],
          ['key', T, { ...contest, fields: { ...contest.fields, deep: { list: ['ok', s] } } }, 'fields.deep.list.1'],
          ['key', OC, { cart_type: 'course', email: 'a@example.com', order_id: s }, 'order_id'],
          ['key', OC, { cart_type: 'course', email: 'a@example.com', order_id: '1', course_name: s }, 'course_name'],
          ['key', `/api/scoped/lists/${lists.leads}/contacts`, { email: 'a@example.com', name: s }, 'name'],
          ['admin', '/api/sites', { site_key: 'nul-site', name: s, from_email: 'n@example.com' }, 'name'],
          ['admin', '/api/contacts/upsert', { site_key: site, email: 'a@example.com', name: s }, 'name'],
          [
            'admin',
            '/api/contacts/upsert',
            { site_key: site, email: 'a@example.com', fields: { city: s } },
            'fields.city',
          ],
          ['admin', '/api/templates', { site_key: site, name: 'n', subject: s, html: 'h', text: 't' }, 'subject'],
          ['admin', '/api/templates', { site_key: site, name: 'n', subject: 's', html: s, text: 't' }, 'html'],
          ['admin', '/api/lists', { site_key: site, name: s }, 'name'],
          [
            'admin',
            '/api/sequences',
            { site_key: site, name: s, steps: [{ template_id: 1, delay_minutes: 1 }] },
            'name',
          ],
          ['admin', '/api/events/unpaid-order', { site_key: site, email: 'a@example.com', order_id: s }, 'order_id'],
          ['admin', '/api/admin/keys', { site_key: site, name: s, rights: {} }, 'name'],
          ['admin', '/api/admin/keys', { site_key: site, name: 'k', rights: { note: s } }, 'rights.note'],
        ];
        for (const [who, url, body, member] of cases) {
          const r =
            who === 'key' ? await keyCall(t.app, key, 'POST', url, body) : await adminCall(t.app, 'POST', url, body);
          envelope(r, 422, 'validation_error');
          assert.match(r.body.detail.error.invalid_fields[member] ?? '', /U\+0000|surrogate/, `${url} ${member}`);
        }
        // A purchase commits whatever its optional members (SPEC §10): the bad one is a warning, not stored.
        const p = await keyCall(t.app, key, 'POST', P, {
          cart_type: 'course',
          email: 'a@example.com',
          order_id: `nul-${bad.indexOf(s)}`,
          currency: s,
          name: s,
        });
        assert.equal(p.status, 200, JSON.stringify(p.body));
        assert.deepEqual(p.body.warning_details.map((w: { member: string }) => w.member).sort(), ['currency', 'name']);
        const route = await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/course-categories`, {
          categories: [{ id: '3', list_id: lists.cat, slug: s, title: 't' }],
        });
        envelope(route, 422, 'validation_error');
        assert.ok(route.body.detail.error.invalid_fields['categories.0.slug']);
        const keyName = await adminCall(t.app, 'POST', '/api/contacts/upsert', {
          site_key: site,
          email: 'a@example.com',
          fields: { [s]: 1 },
        });
        envelope(keyName, 422, 'validation_error');
      }
      // A refused gateway request carrying U+0000 is in the chronology: the payload keeps it (escaped),
      // the searchable order_id column leaves it out.
      const logged = await events(t.app, `?site_key=${site}&status=rejected&limit=200`);
      const nul = logged.find((e) => e.payload?.order_id === 'a\u0000b');
      assert.ok(nul, 'the refusal with a NUL order_id was logged');
      assert.equal(nul.order_id, null);
      const contacts = await t.deps.db.db.selectFrom('contacts').select(['name', 'fields']).execute();
      assert.ok(
        contacts.every((c) => !/[\ufffd\0]/u.test(c.name ?? '') && !c.fields.includes('\\u0000')),
        'nothing was stored with such a character, or with it replaced',
      );
    });

    it('case 5: U+0000 and unpaired surrogates in a path or query are 400 naming the member', async () => {
      for (const url of [
        '/api/admin/external-events?order_id=a%00b',
        '/api/admin/external-events?event_type=%00',
        '/api/admin/emails?order_id=a%00b',
        '/api/admin/emails?to=%00',
        '/api/admin/contacts?email=a%00b',
        '/api/admin/projects/a%00b/routing',
        '/api/admin/keys?site_key=a%00b',
      ]) {
        const r = await adminCall(t.app, 'GET', url);
        envelope(r, 400, 'validation_error');
        const names = Object.keys(r.body.detail.error.invalid_fields);
        assert.ok(names.length === 1 && /^(querystring|params)\.\w+$/.test(names[0]), `${url}: ${names.join(',')}`);
      }
      // An unpaired surrogate cannot be percent-encoded as UTF-8: that path is not a URL at all.
      envelope(await adminCall(t.app, 'GET', '/api/admin/projects/%ED%A0%80/routing'), 400, 'bad_request');
    });

    it('case 6: ids out of range, non-finite ids and forged cursors are refused, never a database error', async () => {
      for (const url of [
        '/api/admin/emails/9223372036854775808',
        '/api/admin/emails/9007199254740993',
        '/api/admin/emails/Infinity',
        '/api/admin/emails/1e400',
        '/api/campaigns/1e400/stats',
        '/api/admin/external-events/99999999999999999999999',
        '/api/admin/contacts/-1',
        '/api/admin/emails?event_id=1e400',
        '/api/admin/emails?limit=Infinity',
      ]) {
        envelope(await adminCall(t.app, 'GET', url), 422, 'validation_error');
      }
      const cursor = (s: string) => Buffer.from(s).toString('base64url');
      for (const c of [cursor('id:12345678901234567890123'), cursor('id:0'), cursor('id:-5'), 'garbage', cursor('x')]) {
        for (const base of ['/api/admin/external-events', '/api/admin/emails', '/api/admin/contacts']) {
          const r = await adminCall(t.app, 'GET', `${base}?cursor=${c}`);
          envelope(r, 422, 'validation_error');
          assert.ok(r.body.detail.error.invalid_fields['querystring.cursor']);
        }
      }
      const ok = await adminCall(t.app, 'GET', `/api/admin/emails?cursor=${cursor('id:9007199254740991')}`);
      assert.equal(ok.status, 200);
      // Ajv would take 1e400 as an integer (Infinity); the input rule refuses it first.
      for (const body of ['{"contact_id":1e400}', '{"contact_id":9223372036854775808}', '{"contact_id":-1e400}']) {
        const r = await adminCall(t.app, 'POST', `/api/lists/${lists.leads}/contacts`, body);
        envelope(r, 422, 'validation_error');
        assert.ok(r.body.detail.error.invalid_fields.contact_id, JSON.stringify(r.body));
      }
      const nf = await keyCall(
        t.app,
        key,
        'POST',
        T,
        `{"event_type":"contest_results","email":"a@example.com","fields":{"event_title":"E","work_title":"W","n":1e400}}`,
      );
      envelope(nf, 422, 'validation_error');
      assert.equal(nf.body.detail.error.invalid_fields['fields.n'], 'must be a finite number');
      const leap = await adminCall(t.app, 'GET', '/api/admin/external-events?since=2026-06-30T23:59:60Z');
      envelope(leap, 422, 'validation_error');
    });

    it('case 7: malformed HTTP is answered with the envelope and the right status', async () => {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = t.app.server.address() as AddressInfo;
      const send = (raw: string) =>
        new Promise<{ status: number; body: any }>((resolve, reject) => {
          const s = connect(port, '127.0.0.1');
          let data = '';
          s.on('data', (c: Buffer) => (data += c.toString()));
          // The server may close while a large request is still being written; the answer is what counts.
          s.on('error', () => {});
          s.on('close', () => {
            const [head, ...rest] = data.split('\r\n\r\n');
            const body = rest.join('\r\n\r\n');
            try {
              resolve({ status: Number(head.split(' ')[1]), body: JSON.parse(body) });
            } catch {
              reject(new Error(`not JSON: ${data.slice(0, 300)}`));
            }
          });
          s.write(raw);
        });
      const h = `Host: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\n`;
      envelope(
        await send(
          `POST ${T} HTTP/1.1\r\n${h}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
        ),
        400,
        'bad_request',
      );
      envelope(
        await send(`POST ${T} HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`),
        400,
        'bad_request',
      );
      envelope(
        await send(`GET /api/admin/emails HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`),
        431,
        'headers_too_large',
      );
      const auth = `Host: x\r\nAuthorization: Bearer test-admin-token-0123456789\r\nConnection: close\r\n`;
      envelope(await send(`GET /api/admin/emails/%E0%A4%A HTTP/1.1\r\n${auth}\r\n`), 400, 'bad_request');
      envelope(
        await send(`GET /api/admin/projects/${'x'.repeat(150)}/routing HTTP/1.1\r\n${auth}\r\n`),
        414,
        'uri_too_long',
      );
    });
  });
}
