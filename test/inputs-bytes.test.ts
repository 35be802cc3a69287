// SPEC §10, bytes: bodies are UTF-8; windows-1251 and KOI8-R are decoded when declared; any other charset
// is 415; bytes that are not UTF-8 are 400 invalid_json saying where they start. No U+FFFD ever reaches
// the database: checked in the contact, the outbox row and the chronology, on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { createTestApp, DIALECTS, events, setupProject, type TestApp } from './support/harness.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';

const body = (email: string, name: string) =>
  JSON.stringify({
    event_type: 'contest_results',
    email,
    name,
    fields: { event_title: 'Весенний конкурс "Педагог года"', work_title: 'Моё эссе' },
  });

for (const d of DIALECTS) {
  describe(`request bytes and charsets [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    before(async () => {
      t = await createTestApp(d.name);
      ({ key, site } = await setupProject(t.app));
    });
    after(() => t.close());

    const send = async (payload: Buffer | string, contentType: string, url = T) => {
      const res = await t.app.inject({
        method: 'POST',
        url,
        headers: { 'x-api-key': key, 'content-type': contentType },
        payload,
      });
      return { status: res.statusCode, body: JSON.parse(res.body) };
    };
    const contact = (email: string) =>
      t.deps.db.db.selectFrom('contacts').selectAll().where('email', '=', email).executeTakeFirst();
    const noReplacementCharacters = async () => {
      for (const [table, column] of [
        ['contacts', 'name'],
        ['scheduled_emails', 'context'],
        ['events', 'payload'],
      ] as const) {
        const rows = await t.deps.db.db.selectFrom(table).select(column).where(column, 'like', '%\uFFFD%').execute();
        assert.equal(rows.length, 0, `no U+FFFD in ${table}.${column}`);
      }
    };

    it('UTF-8, with or without charset=utf-8, and with a byte-order mark', async () => {
      const utf8 = Buffer.from(body('anna@example.com', 'Анна Иванова'));
      for (const [payload, ct] of [
        [utf8, 'application/json'],
        [utf8, 'application/json; charset=utf-8'],
        [utf8, 'application/json;charset="UTF-8"'],
        [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8]), 'application/json'],
      ] as const) {
        const r = await send(payload, ct);
        assert.equal(r.status, 200, `${ct}: ${JSON.stringify(r.body)}`);
      }
      assert.equal((await contact('anna@example.com'))?.name, 'Анна Иванова');
    });

    it('windows-1251 and KOI8-R bodies are decoded when declared', async () => {
      for (const [charset, email] of [
        ['windows-1251', 'cp1251@example.com'],
        ['WINDOWS-1251', 'cp1251-upper@example.com'],
        ['cp1251', 'cp1251-alias@example.com'],
        ['koi8-r', 'koi8@example.com'],
      ]) {
        const bytes = iconv.encode(body(email, 'Пётр Щукин'), charset.toLowerCase() === 'koi8-r' ? 'koi8-r' : 'cp1251');
        assert.ok(!bytes.toString('utf8').includes('Пётр'), 'the bytes are not UTF-8');
        const r = await send(bytes, `application/json; charset=${charset}`);
        assert.equal(r.status, 200, `${charset}: ${JSON.stringify(r.body)}`);
        assert.equal((await contact(email))?.name, 'Пётр Щукин', charset);
        const row = await t.deps.db.db
          .selectFrom('scheduled_emails')
          .select('context')
          .where('id', '=', r.body.scheduled_email_id)
          .executeTakeFirstOrThrow();
        assert.equal(JSON.parse(row.context).event_title, 'Весенний конкурс "Педагог года"');
      }
      const logged = await events(t.app, `?site_key=${site}&email=koi8@example.com`);
      assert.equal(logged[0].payload.name, 'Пётр Щукин', 'the chronology keeps the decoded text');
    });

    it('windows-1251 without the charset: 400 invalid_json naming the byte offset, nothing stored', async () => {
      const bytes = iconv.encode(body('no-charset@example.com', 'Мария'), 'cp1251');
      const offset = bytes.indexOf(iconv.encode('Мария', 'cp1251'));
      const r = await send(bytes, 'application/json');
      assert.equal(r.status, 400);
      assert.equal(r.body.detail.error.code, 'invalid_json');
      assert.equal(r.body.detail.error.byte_offset, offset);
      assert.match(r.body.detail.error.message, new RegExp(`offset ${offset}\\b`));
      assert.match(r.body.detail.error.message, /must be UTF-8/);
      assert.match(r.body.detail.error.message, /windows-1251/, 'the likely cause is named');
      assert.equal(await contact('no-charset@example.com'), undefined);
      // Refused, and logged as refused (no payload: there is no text to show).
      const logged = await events(t.app, `?site_key=${site}&status=rejected`);
      assert.ok(logged.some((e) => e.error_code === 'invalid_json' && e.payload === null));
    });

    it('invalid UTF-8 of every kind is 400 with the offset of the first bad byte', async () => {
      const prefix = Buffer.from('{"event_type":"contest_results","email":"x@example.com","name":"Аня ');
      const cases: [string, Buffer][] = [
        ['lone continuation byte', Buffer.from([0x80])],
        ['truncated sequence', Buffer.from([0xd0])],
        ['overlong encoding', Buffer.from([0xc0, 0xaf])],
        ['UTF-16 surrogate as UTF-8', Buffer.from([0xed, 0xa0, 0x80])],
        ['byte that never occurs', Buffer.from([0xff])],
      ];
      for (const [what, bad] of cases) {
        const payload = Buffer.concat([prefix, Buffer.from('\uFFFD'), bad, Buffer.from('"}')]);
        const r = await send(payload, 'application/json');
        assert.equal(r.status, 400, what);
        assert.equal(r.body.detail.error.code, 'invalid_json', what);
        // The real U+FFFD before the bad bytes is valid UTF-8 and is not taken for them.
        assert.equal(r.body.detail.error.byte_offset, prefix.length + 3, what);
      }
    });

    it('a byte windows-1251 does not define (0x98) is 400, not a replacement character', async () => {
      const bytes = Buffer.concat([
        Buffer.from('{"event_type":"contest_results","email":"u98@example.com","name":"'),
        Buffer.from([0xc8, 0x98]),
        Buffer.from('"}'),
      ]);
      const r = await send(bytes, 'application/json; charset=windows-1251');
      assert.equal(r.status, 400);
      assert.equal(r.body.detail.error.code, 'invalid_json');
      assert.equal(r.body.detail.error.byte_offset, bytes.indexOf(0x98));
      assert.equal(await contact('u98@example.com'), undefined);
    });

    it('any other declared charset is 415 unsupported_media_type, even when the bytes are ASCII', async () => {
      for (const charset of ['iso-8859-1', 'latin1', 'utf-16', 'us-ascii', 'koi8-u', '']) {
        const r = await send(body('cs@example.com', 'Anna'), `application/json; charset=${charset}`);
        assert.equal(r.status, 415, charset);
        assert.equal(r.body.detail.error.code, 'unsupported_media_type', charset);
        if (charset) assert.match(r.body.detail.error.message, new RegExp(`charset=${charset}`));
      }
    });

    it('the same for the cart endpoints, and nothing with U+FFFD was stored anywhere', async () => {
      const order = JSON.stringify({
        cart_type: 'course',
        email: 'cart-1251@example.com',
        name: 'Ёлкина Жанна',
        order_id: 'W-1',
        course_name: 'Инклюзивное образование',
      });
      const bad = await send(iconv.encode(order, 'cp1251'), 'application/json', OC);
      assert.equal(bad.status, 400);
      const good = await send(iconv.encode(order, 'cp1251'), 'application/json; charset=windows-1251', OC);
      assert.equal(good.status, 200, JSON.stringify(good.body));
      assert.equal((await contact('cart-1251@example.com'))?.name, 'Ёлкина Жанна');
      await noReplacementCharacters();
    });
  });
}
