// The unsubscribe link end to end over HTTP: GET only asks, POST (RFC 8058 one-click) unsubscribes at
// once, and a token works for its own contact only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { signUnsubscribeToken, unsubscribeUrl } from '../src/delivery/unsubscribe.js';
import { unsubscribeRoutes } from '../src/http/routes/unsubscribe.js';
import {
  PUBLIC_URL,
  SECRET,
  TestClock,
  addContact,
  contactStatus,
  openTestDb,
  seedProject,
  type TestDb,
} from './fixtures/delivery-support.js';

describe('unsubscribe routes', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let projectId: number;
  const clock = new TestClock(1_800_000_000_000);

  before(async () => {
    t = await openTestDb('sqlite');
    projectId = (await seedProject(t.db, { name: 'Pedsovet <Academy>' })).projectId;
    app = Fastify();
    await app.register(unsubscribeRoutes, { db: t.db, secret: SECRET, clock });
    await app.ready();
  });
  after(async () => {
    await app?.close();
    await t?.cleanup();
  });

  const tokenFor = async (email: string, status: 'active' | 'admin_blocked' = 'active') => {
    const id = await addContact(t.db, projectId, email, 'Anna', status);
    return { id, token: signUnsubscribeToken(SECRET, { id, project_id: projectId, email }) };
  };

  it('GET shows a confirmation form and changes nothing', async () => {
    const { id, token } = await tokenFor('get@example.org');
    const res = await app.inject({ method: 'GET', url: `/u/${token}` });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
    assert.match(res.body, /<form method="post"/);
    assert.match(res.body, /Pedsovet &lt;Academy&gt;/, 'the project name is escaped');
    assert.match(res.body, /g\*\*\*@example\.org/);
    assert.ok(!res.body.includes('get@example.org'), 'the full address is not shown');
    assert.ok(!/<link|<script|src=/.test(res.body), 'inline styles only, nothing loaded');
    assert.equal(await contactStatus(t.db, id), 'active');
  });

  it('POST with the RFC 8058 one-click body unsubscribes at once', async () => {
    const { id, token } = await tokenFor('post@example.org');
    const res = await app.inject({
      method: 'POST',
      url: `/u/${token}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /Вы отписались/, "in the project's language (ru by default)");
    assert.equal(await contactStatus(t.db, id), 'unsubscribed');
    const updated = await t.db.db
      .selectFrom('contacts')
      .select('updated_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(updated.updated_at), clock.now());

    const again = await app.inject({ method: 'POST', url: `/u/${token}` });
    assert.equal(again.statusCode, 200, 'repeating is harmless');
    const page = await app.inject({ method: 'GET', url: `/u/${token}` });
    assert.match(page.body, /Вы отписались/);
    assert.ok(!page.body.includes('<form'));
  });

  it("speaks the project's language: Russian by default, English for an English project", async () => {
    const ru = await tokenFor('lang-ru@example.org');
    const page = await app.inject({ method: 'GET', url: `/u/${ru.token}` });
    assert.match(page.body, /<html lang="ru">/);
    assert.match(page.body, />Отписаться<\/button>/);
    assert.match(page.body, /Письма о ваших заказах, курсах и документах будут приходить как прежде/);
    await t.db.db.updateTable('projects').set({ locale: 'en' }).where('id', '=', projectId).execute();
    try {
      const en = await tokenFor('lang-en@example.org');
      const ask = await app.inject({ method: 'GET', url: `/u/${en.token}` });
      assert.match(ask.body, /<html lang="en">/);
      assert.match(ask.body, />Unsubscribe<\/button>/);
      const done = await app.inject({ method: 'POST', url: `/u/${en.token}` });
      assert.match(done.body, /You are unsubscribed/);
    } finally {
      await t.db.db.updateTable('projects').set({ locale: 'ru' }).where('id', '=', projectId).execute();
    }
  });

  it('names the sender in Russian with «от отправителя», quotes inside the name nested (issue 37)', async () => {
    const name = 'Педагогические курсы «Развитие»';
    await t.db.db.updateTable('projects').set({ name }).where('id', '=', projectId).execute();
    try {
      const { token } = await tokenFor('quotes@example.org');
      const ask = await app.inject({ method: 'GET', url: `/u/${token}` });
      assert.ok(ask.body.includes('от <strong>отправителя «Педагогические курсы „Развитие“»</strong>'), ask.body);
      const done = await app.inject({ method: 'POST', url: `/u/${token}` });
      assert.ok(done.body.includes('от отправителя «Педагогические курсы „Развитие“».'), done.body);
    } finally {
      await t.db.db.updateTable('projects').set({ name: 'Pedsovet <Academy>' }).where('id', '=', projectId).execute();
    }
  });

  it('accepts a multipart one-click body too', async () => {
    const { id, token } = await tokenFor('multipart@example.org');
    const boundary = 'xYzZY';
    const res = await app.inject({
      method: 'POST',
      url: `/u/${token}`,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`,
    });
    assert.equal(res.statusCode, 200);
    assert.equal(await contactStatus(t.db, id), 'unsubscribed');
  });

  it('refuses forged tokens and tokens edited to name another contact', async () => {
    const anna = await tokenFor('anna2@example.org');
    const boris = await tokenFor('boris2@example.org');
    const [v, , p, mac] = anna.token.split('.');
    const edited = [v, boris.id.toString(36), p, mac].join('.');
    const forged = signUnsubscribeToken('not-the-secret', {
      id: boris.id,
      project_id: projectId,
      email: 'boris2@example.org',
    });
    for (const token of [edited, forged, 'u1.1.1.AAAAAAAAAAAAAAAAAAAAAA', 'garbage']) {
      for (const method of ['GET', 'POST'] as const) {
        const res = await app.inject({ method, url: `/u/${token}` });
        assert.equal(res.statusCode, 404, `${method} ${token}`);
        assert.match(res.body, /not valid/);
      }
    }
    assert.equal(await contactStatus(t.db, boris.id), 'active');
    assert.equal(await contactStatus(t.db, anna.id), 'active');
  });

  it('keeps a stronger status than unsubscribed', async () => {
    const { id, token } = await tokenFor('blocked@example.org', 'admin_blocked');
    const res = await app.inject({ method: 'POST', url: `/u/${token}` });
    assert.equal(res.statusCode, 200);
    assert.equal(await contactStatus(t.db, id), 'admin_blocked');
  });

  it('serves the links the worker puts in e-mails', async () => {
    const id = await addContact(t.db, projectId, 'link@example.org');
    const url = unsubscribeUrl(PUBLIC_URL, SECRET, { id, project_id: projectId, email: 'link@example.org' });
    const res = await app.inject({ method: 'POST', url: new URL(url).pathname });
    assert.equal(res.statusCode, 200);
    assert.equal(await contactStatus(t.db, id), 'unsubscribed');
  });
});
