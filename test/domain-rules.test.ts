// The rules that live in src/domain as plain functions, and the places that must agree with them: the
// suppression rule and the campaign fan-out's SQL, the cart-chain choice, the composed envelope, the
// statuses the UI is offered, the gateway's body assertion and the configured limits of `fields`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { cartChain, defaultChainKeys } from '../src/domain/cartChain.js';
import { CONTACT_STATUSES, EMAIL_KINDS, EMAIL_STATUSES } from '../src/domain/statuses.js';
import { mayReceive, receivingStatuses, suppressionReason } from '../src/domain/suppression.js';
import { assertBody, assertNoProblems, bodyProblems } from '../src/domain/validation.js';
import { composeEmail } from '../src/delivery/compose.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { mayReceiveSql } from '../src/repos/campaigns.js';
import { DEFAULT_FIELD_LIMITS } from '../src/schemas/common.js';
import { ScopedListContactBody, TransactionalBody } from '../src/schemas/gateway.js';
import { AppError } from '../src/errors.js';
import {
  adminCall,
  createTestApp,
  DIALECTS,
  events,
  keyCall,
  setupProject,
  testDatabase,
  type TestApp,
} from './support/harness.js';

describe('suppression rule (SPEC §4)', () => {
  it('an active contact receives every kind; invalid and blocked ones none', () => {
    for (const kind of EMAIL_KINDS) {
      assert.equal(suppressionReason('active', kind), null);
      assert.match(suppressionReason('invalid', kind) ?? '', /invalid/);
      assert.match(suppressionReason('admin_blocked', kind) ?? '', /blocked/);
    }
  });

  it('an unsubscribed contact still receives transactional e-mails, but no cart or campaign e-mails', () => {
    assert.equal(mayReceive('unsubscribed', 'transactional'), true);
    assert.equal(mayReceive('unsubscribed', 'cart'), false);
    assert.equal(mayReceive('unsubscribed', 'campaign'), false);
    assert.deepEqual(receivingStatuses('campaign'), ['active']);
    assert.deepEqual(receivingStatuses('transactional'), ['active', 'unsubscribed']);
  });
});

for (const d of DIALECTS) {
  describe(`campaign fan-out SQL agrees with the suppression rule [${d.name}]`, { skip: d.skip }, () => {
    let t: Awaited<ReturnType<typeof testDatabase>>;
    before(async () => {
      t = await testDatabase(d.name);
      await migrateToLatest(t.db);
      const db = t.db.db;
      const now = Date.now();
      const p = await db
        .insertInto('projects')
        .values({ site_key: 's', name: 'S', from_email: 'n@s.example', created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      for (const status of CONTACT_STATUSES) {
        await db
          .insertInto('contacts')
          .values({
            project_id: p.id,
            email: `${status}@s.example`,
            name: null,
            fields: '{}',
            status,
            created_at: now,
            updated_at: now,
          })
          .execute();
      }
    });
    after(() => t.cleanup());

    it('for every contact status and e-mail kind, the SQL decides as mayReceive does', async () => {
      let compared = 0;
      for (const kind of EMAIL_KINDS) {
        const rows = await t.db.db
          .selectFrom('contacts')
          .select(['contacts.status', sql<number>`case when ${mayReceiveSql(kind)} then 1 else 0 end`.as('ok')])
          .execute();
        assert.equal(rows.length, CONTACT_STATUSES.length);
        for (const r of rows) {
          assert.equal(Number(r.ok) === 1, mayReceive(r.status, kind), `${r.status} × ${kind}`);
          compared++;
        }
      }
      assert.equal(compared, CONTACT_STATUSES.length * EMAIL_KINDS.length);
    });
  });
}

describe('cart chain choice', () => {
  const own = (id: number) => ({ id, project_id: 1 });
  const foreign = { id: 99, project_id: 2 };

  it('without a configured sequence: the routed 1h/1d/3d templates, skipping unrouted steps', () => {
    assert.deepEqual(defaultChainKeys('course'), [
      'course_abandoned_cart_1h',
      'course_abandoned_cart_1d',
      'course_abandoned_cart_3d',
    ]);
    const routed = new Map([
      ['course_abandoned_cart_1h', own(1)],
      ['course_abandoned_cart_3d', own(3)],
      ['diploma_abandoned_cart_1d', own(7)],
    ]);
    assert.deepEqual(cartChain(1, 'course', null, routed), [
      { template: own(1), delayMinutes: 60, step: '1h' },
      { template: own(3), delayMinutes: 4320, step: '3d' },
    ]);
    assert.deepEqual(cartChain(1, 'portal', null, routed), []);
  });

  it("a configured sequence replaces the default; deleted or other projects' templates are skipped", () => {
    const routed = new Map([['course_abandoned_cart_1h', own(1)]]);
    const configured = [
      { template: own(5), delay_minutes: 30 },
      { template: undefined, delay_minutes: 60 },
      { template: foreign, delay_minutes: 90 },
      { template: own(6), delay_minutes: 120 },
    ];
    assert.deepEqual(cartChain(1, 'course', configured, routed), [
      { template: own(5), delayMinutes: 30, step: 'step1' },
      { template: own(6), delayMinutes: 120, step: 'step4' },
    ]);
    // Chosen but unusable: nothing is sent rather than the chain it replaced.
    assert.deepEqual(cartChain(1, 'course', [{ template: foreign, delay_minutes: 5 }], routed), []);
  });
});

describe('composeEmail', () => {
  const project = { name: 'Academy "A"', from_email: 'noreply@a.example' };
  const parts = { subject: 'Hello', html: '<p>Hi</p>', text: 'Hi' };

  it('names sender and recipient, falling back to the contact name, with quotes removed', () => {
    const c = composeEmail({
      project,
      email: { kind: 'transactional', to_email: 'v@x.example', to_name: null },
      contact: { name: 'Vera "V"' },
      parts,
    });
    assert.deepEqual(c.from, { name: 'Academy "A"', address: 'noreply@a.example' });
    assert.deepEqual(c.to, { name: 'Vera "V"', address: 'v@x.example' });
    assert.deepEqual(c.shown, {
      From: '"Academy A" <noreply@a.example>',
      To: '"Vera V" <v@x.example>',
      Subject: 'Hello',
    });
    assert.deepEqual(c.headers, {});
    const bare = composeEmail({
      project,
      email: { kind: 'cart', to_email: 'b@x.example', to_name: null },
      contact: null,
      parts,
    });
    assert.equal(bare.shown.To, 'b@x.example');
  });

  it('cart and campaign e-mails announce one-click unsubscribe; transactional ones never do', () => {
    for (const kind of EMAIL_KINDS) {
      const c = composeEmail({
        project,
        email: { kind, to_email: 'v@x.example', to_name: 'Vera' },
        contact: null,
        parts,
        unsubscribeUrl: 'https://g.example/u/tok',
        messageId: '<m@g.example>',
      });
      assert.equal(c.shown['Message-ID'], '<m@g.example>');
      if (kind === 'transactional') assert.deepEqual(c.headers, {});
      else {
        assert.deepEqual(c.headers, {
          'List-Unsubscribe': '<https://g.example/u/tok>',
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        });
        assert.equal(c.shown['List-Unsubscribe'], '<https://g.example/u/tok>');
      }
    }
  });
});

describe('assertBody', () => {
  const check = {
    required: ['event_type', 'email', 'fields.event_title'],
    eventType: 'olympiad_results',
    what: 'event type olympiad_results',
    limits: DEFAULT_FIELD_LIMITS,
  };

  it('passes a valid body (trimming the address) and names every problem of an invalid one at once', () => {
    const body: Record<string, unknown> = {
      event_type: 'olympiad_results',
      email: ' a@b.example ',
      fields: { event_title: 'Spring' },
    };
    assertBody(TransactionalBody, body, check);
    // The assertion typed the body: no cast needed to read it as a string.
    assert.equal(body.email.toUpperCase(), 'A@B.EXAMPLE');

    const bad = { event_type: 'olympiad_results', email: 'nope', amount: 'x', fields: {} };
    assert.throws(
      () => assertBody(TransactionalBody, bad, check),
      (e: unknown) => {
        assert.ok(e instanceof AppError);
        assert.equal(e.status, 422);
        const body = e.toBody().detail.error as Record<string, unknown>;
        assert.deepEqual(body.missing_fields, ['fields.event_title']);
        assert.deepEqual(Object.keys(body.invalid_fields as object).sort(), ['amount', 'email']);
        return true;
      },
    );
  });

  it('a tolerant caller refuses only on the problems it passes on (a purchase)', () => {
    const body = { email: 'a@b.example', name: 5 };
    const problems = bodyProblems(ScopedListContactBody, body, { required: ['email'], limits: DEFAULT_FIELD_LIMITS });
    assert.deepEqual(problems, { missing: [], invalid: { name: 'must be a string' } });
    const report = { required: ['email'], eventType: null, what: 'purchase' };
    assertNoProblems<{ email: string }>(body, { missing: problems.missing, invalid: {} }, report);
    assert.equal(body.email.length, 11);
    assert.throws(() => assertNoProblems(body, problems, report), /invalid name/);
  });

  it('applies the limits it is given to the members of fields', () => {
    const body = { event_type: 'x', email: 'a@b.example', fields: { a: '1', b: '12345', c: '3' } };
    assert.throws(
      () => assertBody(TransactionalBody, body, { ...check, required: [], limits: { maxMembers: 2, maxString: 4 } }),
      (e: unknown) => {
        const invalid = (e as AppError).toBody().detail.error.invalid_fields as Record<string, string>;
        assert.equal(invalid.fields, 'must have at most 2 members');
        assert.equal(invalid['fields.b'], 'must be at most 4 characters');
        return true;
      },
    );
  });
});

describe('configured limits of fields, through HTTP', () => {
  let t: TestApp;
  let key: string;
  let site: string;
  before(async () => {
    t = await createTestApp('sqlite', { FIELDS_MAX_MEMBERS: '2', FIELDS_MAX_STRING: '5' });
    ({ key, site } = await setupProject(t.app));
  });
  after(() => t.close());

  it('the gateway, the admin API and the OpenAPI document use the configured limits', async () => {
    const three = { a: '1', b: '2', c: '3' };
    const g = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
      event_type: 'course_paid',
      email: 'a@b.example',
      fields: three,
    });
    assert.equal(g.status, 422, JSON.stringify(g.body));
    assert.equal(g.body.detail.error.invalid_fields.fields, 'must have at most 2 members');
    const long = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
      event_type: 'course_paid',
      email: 'a@b.example',
      fields: { a: '123456' },
    });
    assert.equal(long.body.detail.error.invalid_fields['fields.a'], 'must be at most 5 characters');

    const a = await adminCall(t.app, 'POST', '/api/contacts/upsert', {
      site_key: site,
      email: 'c@d.example',
      fields: three,
    });
    assert.equal(a.status, 422);
    assert.equal(a.body.detail.error.invalid_fields.fields, 'must have at most 2 members');
    const ok = await adminCall(t.app, 'POST', '/api/contacts/upsert', {
      site_key: site,
      email: 'c@d.example',
      fields: { a: '1' },
    });
    assert.equal(ok.status, 200);

    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const fields =
      doc.paths['/api/scoped/send/transactional'].post.requestBody.content['application/json'].schema.properties.fields;
    assert.equal(fields.maxProperties, 2);
    assert.match(fields.description, /at most 2 members, strings at most 5 characters/);
  });
});

describe('statuses and the refusal log, through HTTP', () => {
  let t: TestApp;
  let key: string;
  let site: string;
  before(async () => {
    t = await createTestApp('sqlite');
    ({ key, site } = await setupProject(t.app));
  });
  after(() => t.close());

  it('the admin UI is offered the statuses of src/domain, and the API accepts exactly those', async () => {
    const meta = (await adminCall(t.app, 'GET', '/api/admin/ui/meta')).body;
    assert.deepEqual(meta.contact_statuses, [...CONTACT_STATUSES]);
    assert.deepEqual(meta.email_statuses, [...EMAIL_STATUSES]);
    for (const status of EMAIL_STATUSES)
      assert.equal((await adminCall(t.app, 'GET', `/api/admin/emails?status=${status}`)).status, 200, status);
    assert.equal((await adminCall(t.app, 'GET', '/api/admin/emails?status=lost')).status, 422);
  });

  it('every gateway request is logged exactly once, whether accepted or refused, and by whom', async () => {
    const before = (await events(t.app, `?site_key=${site}&limit=500`)).length;
    const T = '/api/scoped/send/transactional';
    const accepted = await keyCall(t.app, key, 'POST', T, { event_type: 'course_paid', email: 'a@b.example' });
    assert.equal(accepted.status, 200);
    const refused = [
      await keyCall(t.app, key, 'POST', T, { event_type: 'course_paid' }), // service: 422
      await keyCall(t.app, key, 'POST', T, '{not json'), // Fastify: 400
      await keyCall(t.app, key, 'POST', '/api/scoped/lists/0/contacts', { email: 'a@b.example' }), // params: 422
    ];
    assert.deepEqual(
      refused.map((r) => r.status),
      [422, 400, 422],
    );
    const logged = (await events(t.app, `?site_key=${site}&limit=500`)).slice(0, 4);
    assert.equal((await events(t.app, `?site_key=${site}&limit=500`)).length, before + 4);
    assert.deepEqual(logged.map((e) => [e.http_status, e.error_code, e.accepted]).reverse(), [
      [200, null, true],
      [422, 'validation_error', false],
      [400, 'invalid_json', false],
      [422, 'validation_error', false],
    ]);
  });
});
