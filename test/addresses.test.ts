// SPEC §10, addresses: a Unicode domain and a non-ASCII local part (RFC 6531) are accepted; a Unicode domain
// and its punycode form are the same address and the same contact, stored and shown in Unicode. Everything
// else about validation is as strict as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { up as migrateAddresses } from '../src/db/migrations/006_inputs.js';
import { canonicalAddress, isValidAddress } from '../src/domain/email.js';
import { adminCall, createTestApp, DIALECTS, events, keyCall, setupProject, type TestApp } from './support/harness.js';

const T = '/api/scoped/send/transactional';
const OC = '/api/scoped/events/order-created';
const send = (email: string) => ({
  event_type: 'contest_results',
  email,
  name: 'Иван',
  fields: { event_title: 'Олимпиада', work_title: 'Эссе' },
});

// ajv-formats' email expression: what every address was checked against before.
const BEFORE =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

describe('address rules as properties', () => {
  const chars = (alphabet: string) => fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 12 });
  const ascii = fc
    .tuple(chars('abcAB09._-+@!"/ '), chars('ab09.-@x/?'), fc.constantFrom('', 'xn--', 'XN--'))
    .map(([l, d, x]) => `${l}@${x}${d}`);
  const unicode = fc
    .tuple(chars('abиИé.-+'), chars('примерРФ.-ab'), fc.constantFrom('.рф', '.РФ', '.ru', '.xn--p1ai', ''))
    .map(([l, d, tld]) => `${l}@${d}${tld}`);

  it('an ASCII address without xn-- passes exactly when it passed before', () => {
    fc.assert(
      fc.property(ascii, (a) => a.toLowerCase().includes('xn--') || isValidAddress(a) === BEFORE.test(a)),
      { numRuns: 2000 },
    );
  });

  it('whatever is valid has one canonical form, valid itself and stable', () => {
    fc.assert(
      fc.property(fc.oneof(ascii, unicode), (a) => {
        if (!isValidAddress(a)) return true;
        const c = canonicalAddress(a);
        return (
          isValidAddress(c) &&
          canonicalAddress(c) === c &&
          canonicalAddress(a.toUpperCase()) === canonicalAddress(c.toUpperCase())
        );
      }),
      { numRuns: 2000 },
    );
  });
});

for (const d of DIALECTS) {
  describe(`internationalised addresses [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    let lists: { leads: number };
    before(async () => {
      t = await createTestApp(d.name);
      ({ key, site, lists } = await setupProject(t.app));
    });
    after(() => t.close());
    const post = (url: string, body: unknown) => keyCall(t.app, key, 'POST', url, body);
    const contacts = (like: string) =>
      t.deps.db.db.selectFrom('contacts').selectAll().where('email', 'like', like).execute();

    it('a Unicode domain and its punycode form are one contact, stored in Unicode', async () => {
      const ids = new Set<number>();
      for (const email of [
        'ivan@пример.рф',
        'ivan@xn--e1afmkfd.xn--p1ai',
        'IVAN@ПРИМЕР.РФ',
        ' Ivan@Xn--E1afmkfd.Xn--P1ai ',
      ]) {
        const r = await post(T, send(email));
        assert.equal(r.status, 200, `${email}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.email, 'ivan@пример.рф', email);
        const row = await t.deps.db.db
          .selectFrom('scheduled_emails')
          .select(['contact_id', 'to_email'])
          .where('id', '=', r.body.scheduled_email_id)
          .executeTakeFirstOrThrow();
        assert.equal(row.to_email, 'ivan@пример.рф');
        ids.add(row.contact_id);
      }
      assert.equal(ids.size, 1);
      assert.equal((await contacts('ivan@%')).length, 1);
    });

    it('a non-ASCII local part is accepted (RFC 6531), lower-cased and NFC-normalised', async () => {
      for (const email of ['иван@пример.рф', 'ИВАН@пример.рф', 'иван@xn--e1afmkfd.xn--p1ai']) {
        const r = await post(T, send(email));
        assert.equal(r.status, 200, email);
        assert.equal(r.body.email, 'иван@пример.рф');
      }
      const decomposed = 'jose\u0301@example.com';
      const r = await post(T, send(decomposed));
      assert.equal(r.status, 200);
      assert.equal(r.body.email, 'jos\u00e9@example.com');
      assert.equal((await contacts('иван@%')).length, 1);
      const oc = await post(OC, { cart_type: 'course', email: 'мария.петрова+курсы@школа.рф', order_id: 'IDN-1' });
      assert.equal(oc.status, 200);
    });

    it('everything else is as strict as before', async () => {
      for (const email of [
        'ivan@пример', // no top-level domain
        'ivan@-пример.рф',
        'ivan@пример-.рф',
        'ivan@пример..рф',
        'ivan@пример.рф.',
        'ив ан@пример.рф',
        'ivan＠пример.рф', // a full-width at sign
        'ivan@xn--zz.ru', // punycode that decodes to nothing
        'ivan@１２７.０.０.１', // full-width digits: an address literal in disguise
        'ivan@compa\u00adny.рф', // an invisible soft hyphen
        'ivan@xn--e1afmkfd.xn--p1ai/evil', // a URL host parser would cut this at the slash
        'ivan@пример.рф?x',
        'иван..петров@пример.рф',
        '"иван"@пример.рф',
        'a@b',
        'a..b@example.com',
        `${'я'.repeat(250)}@пример.рф`,
      ]) {
        const r = await post(T, send(email));
        assert.equal(r.status, 422, email);
        assert.match(r.body.detail.error.invalid_fields.email, /valid e-mail address|at most 254/, email);
      }
    });

    it('from_email with a Unicode domain or local part; stored in Unicode', async () => {
      for (const [from_email, stored] of [
        ['noreply@знание.рф', 'noreply@знание.рф'],
        ['noreply@xn--80akefxb.xn--p1ai', 'noreply@знание.рф'],
        ['почта@знание.рф', 'почта@знание.рф'],
      ]) {
        const r = await adminCall(t.app, 'POST', '/api/sites', { site_key: 'znanie', name: 'Знание', from_email });
        assert.ok(r.status < 300, JSON.stringify(r.body));
        const p = await t.deps.db.db
          .selectFrom('projects')
          .select('from_email')
          .where('site_key', '=', 'znanie')
          .executeTakeFirstOrThrow();
        assert.equal(p.from_email, stored);
      }
      const bad = await adminCall(t.app, 'POST', '/api/sites', {
        site_key: 'znanie',
        name: 'Знание',
        from_email: 'noreply@знание',
      });
      assert.equal(bad.status, 422);
    });

    it('admin filters find an address in either form; legacy and scoped-book writes use the same form', async () => {
      for (const q of ['ivan@xn--e1afmkfd.xn--p1ai', 'ivan@пример.рф', 'IVAN@ПРИМЕР.РФ']) {
        const ev = await events(t.app, `?site_key=${site}&email=${encodeURIComponent(q)}`);
        assert.equal(ev.length, 4, q);
        const em = await adminCall(t.app, 'GET', `/api/admin/emails?to=${encodeURIComponent(q)}`);
        assert.equal(em.body.items.length, 4, q);
        assert.equal(em.body.items[0].to, 'ivan@пример.рф');
        const found = await adminCall(t.app, 'GET', `/api/admin/contacts?email=${encodeURIComponent(q)}`);
        assert.equal(found.body.items.length, 1, q);
        assert.equal(found.body.items[0].email, 'ivan@пример.рф');
      }
      const up = await adminCall(t.app, 'POST', '/api/contacts/upsert', {
        site_key: site,
        email: 'IVAN@xn--e1afmkfd.xn--p1ai',
        name: 'Иван Петров',
      });
      assert.equal(up.status, 200, JSON.stringify(up.body));
      const book = await post(`/api/scoped/lists/${lists.leads}/contacts`, { email: 'ivan@ПРИМЕР.рф' });
      assert.equal(book.status, 200, JSON.stringify(book.body));
      assert.equal(book.body.contact_id, up.body.contact_id);
      assert.equal((await contacts('ivan@%')).length, 1);
    });

    it('migration 006 rewrites punycode addresses stored before, keeping a contact whose form is taken', async () => {
      const db = t.deps.db.db;
      const project = await db
        .selectFrom('projects')
        .select('id')
        .where('site_key', '=', site)
        .executeTakeFirstOrThrow();
      const now = Date.now();
      const add = (email: string) =>
        db
          .insertInto('contacts')
          .values({
            project_id: project.id,
            email,
            name: null,
            fields: '{}',
            status: 'active',
            created_at: now,
            updated_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
      const old = await add('olga@xn--80akefxb.xn--p1ai');
      const clash = await add('ivan@xn--e1afmkfd.xn--p1ai'); // ivan@пример.рф exists already
      const event = await db
        .insertInto('events')
        .values({
          project_id: project.id,
          endpoint: 'transactional',
          event_type: 'contest_results',
          email: 'olga@xn--80akefxb.xn--p1ai',
          http_status: 200,
          accepted: 1,
          effects: '{}',
          created_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await migrateAddresses(db);
      const email = async (id: number) =>
        (await db.selectFrom('contacts').select('email').where('id', '=', id).executeTakeFirstOrThrow()).email;
      assert.equal(await email(old.id), 'olga@знание.рф');
      assert.equal(await email(clash.id), 'ivan@xn--e1afmkfd.xn--p1ai', 'left as it was: the Unicode form is taken');
      const ev = await db.selectFrom('events').select('email').where('id', '=', event.id).executeTakeFirstOrThrow();
      assert.equal(ev.email, 'olga@знание.рф');
      await db.deleteFrom('contacts').where('id', '=', clash.id).execute();
    });
  });
}
