// Every row of SPEC §1: status, code, envelope, check order, and that refused requests are logged.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  adminCall,
  createTestApp,
  DIALECTS,
  events,
  keyCall,
  newKey,
  rawCall,
  setupProject,
  type TestApp,
} from './support/harness.js';

const T = '/api/scoped/send/transactional';
const contest = {
  event_type: 'contest_results',
  email: 'anna@example.com',
  name: 'Anna',
  fields: { event_title: 'Spring', work_title: 'Poem' },
};

function envelope(body: any, code: string) {
  assert.equal(body.detail.ok, false);
  assert.equal(body.detail.error.code, code);
  assert.equal(typeof body.detail.error.message, 'string');
  assert.ok(!JSON.stringify(body).includes('    at '), 'no stack trace in the body');
}

for (const d of DIALECTS) {
  describe(`gateway errors [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    let site: string;
    before(async () => {
      t = await createTestApp(d.name, { BODY_LIMIT_BYTES: '65536' });
      ({ key, site } = await setupProject(t.app));
    });
    after(() => t.close());

    it('401 missing_api_key without the header, and nothing is logged', async () => {
      const r = await keyCall(t.app, null, 'POST', T, contest);
      assert.equal(r.status, 401);
      envelope(r.body, 'missing_api_key');
    });

    it('401 invalid_api_key for malformed, mistyped and unknown keys', async () => {
      for (const k of ['nope', key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a'), 'egw_live_' + 'A'.repeat(46)]) {
        const r = await keyCall(t.app, k, 'POST', T, contest);
        assert.equal(r.status, 401, k);
        envelope(r.body, 'invalid_api_key');
      }
    });

    it('401 comes before a bad body (key is checked first)', async () => {
      const r = await keyCall(t.app, 'nope', 'POST', T, '{not json');
      assert.equal(r.status, 401);
    });

    it('400 invalid_json for unparsable bodies and non-objects, logged as rejected', async () => {
      for (const bad of ['{not json', '[1,2]', '"text"', 'null']) {
        const r = await keyCall(t.app, key, 'POST', T, bad);
        assert.equal(r.status, 400, bad);
        envelope(r.body, 'invalid_json');
      }
      const logged = await events(t.app, `?site_key=${site}&status=rejected`);
      assert.ok(logged.filter((e) => e.error_code === 'invalid_json').length >= 4);
    });

    it('413 payload_too_large over 64 KiB', async () => {
      const r = await keyCall(t.app, key, 'POST', T, {
        ...contest,
        fields: { ...contest.fields, big: 'x'.repeat(70_000) },
      });
      assert.equal(r.status, 413);
      envelope(r.body, 'payload_too_large');
    });

    it('415 unsupported_media_type without application/json', async () => {
      const r = await rawCall(t.app, 'POST', T, { 'x-api-key': key, 'content-type': 'text/plain' }, 'event_type=x');
      assert.equal(r.status, 415);
      envelope(r.body, 'unsupported_media_type');
    });

    it('403 permission_denied names the permission, before any validation', async () => {
      const { key: cartOnly } = await newKey(
        t.app,
        site,
        { permissions: ['cart_events_write'], allowed_cart_types: ['course'] },
        'cart only',
      );
      const r = await keyCall(t.app, cartOnly, 'POST', T, { event_type: 'nope' });
      assert.equal(r.status, 403);
      envelope(r.body, 'permission_denied');
      assert.equal(r.body.detail.error.permission, 'transactional_send');
      const { key: txOnly } = await newKey(
        t.app,
        site,
        { permissions: ['transactional_send'], allowed_api_events: ['contest_results'] },
        'tx only',
      );
      const r2 = await keyCall(t.app, txOnly, 'POST', '/api/scoped/events/order-created', {});
      assert.equal(r2.status, 403);
      assert.equal(r2.body.detail.error.permission, 'cart_events_write');
      const r3 = await keyCall(t.app, txOnly, 'POST', '/api/scoped/lists/1/contacts', { email: 'a@b.example' });
      assert.equal(r3.body.detail.error.permission, 'list_contacts_write');
    });

    it('422 validation_error when event_type is absent, listing every missing name', async () => {
      const r = await keyCall(t.app, key, 'POST', T, {});
      assert.equal(r.status, 422);
      envelope(r.body, 'validation_error');
      assert.deepEqual(r.body.detail.error.missing_fields, ['event_type', 'email']);
    });

    it('422 unknown_event_type for a type that exists nowhere, even when the key does not allow it', async () => {
      const r = await keyCall(t.app, key, 'POST', T, { event_type: 'no_such_event', email: 'a@b.example' });
      assert.equal(r.status, 422);
      envelope(r.body, 'unknown_event_type');
      assert.equal(r.body.detail.error.event_type, 'no_such_event');
    });

    it('403 event_type_not_allowed for a known type outside allowed_api_events, before fields', async () => {
      const r = await keyCall(t.app, key, 'POST', T, { event_type: 'webinar_registration_created' });
      assert.equal(r.status, 403);
      envelope(r.body, 'event_type_not_allowed');
      assert.equal(r.body.detail.error.event_type, 'webinar_registration_created');
    });

    it('the 422 body of the document: contest_results without its fields', async () => {
      const r = await keyCall(t.app, key, 'POST', T, { event_type: 'contest_results' });
      assert.equal(r.status, 422);
      const e = r.body.detail.error;
      assert.equal(r.body.detail.ok, false);
      assert.equal(e.code, 'validation_error');
      assert.equal(e.event_type, 'contest_results');
      assert.match(e.message, /contest_results/);
      assert.deepEqual(e.missing_fields, ['email', 'fields.event_title', 'fields.work_title']);
      assert.deepEqual(e.required_fields, ['event_type', 'email', 'fields.event_title', 'fields.work_title']);
    });

    it('422 invalid_fields for present-but-wrong values, together with missing ones', async () => {
      const r = await keyCall(t.app, key, 'POST', T, {
        event_type: 'contest_results',
        email: 'not-an-email',
        name: 5,
        fields: { event_title: 7 },
      });
      assert.equal(r.status, 422);
      const e = r.body.detail.error;
      assert.deepEqual(e.missing_fields, ['fields.work_title']);
      assert.equal(e.invalid_fields.email, 'must be a valid e-mail address');
      assert.ok(e.invalid_fields.name);
      assert.ok(e.invalid_fields['fields.event_title']);
    });

    it('422 on blank required values and on fields limits', async () => {
      const r = await keyCall(t.app, key, 'POST', T, { ...contest, fields: { event_title: '  ', work_title: 'x' } });
      assert.deepEqual(r.body.detail.error.missing_fields, ['fields.event_title']);
      const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i]));
      const r2 = await keyCall(t.app, key, 'POST', T, { ...contest, fields: { ...contest.fields, ...many } });
      assert.equal(r2.status, 422);
      assert.match(r2.body.detail.error.invalid_fields.fields, /at most 100/);
      const r3 = await keyCall(t.app, key, 'POST', T, {
        ...contest,
        fields: { ...contest.fields, note: 'y'.repeat(10_001) },
      });
      assert.equal(r3.status, 422);
      assert.ok(r3.body.detail.error.invalid_fields['fields.note']);
    });

    it('cart endpoints: 403 cart_type_not_allowed for a known type, 422 for an unknown one, list_id refused', async () => {
      const { key: courseOnly } = await newKey(
        t.app,
        site,
        { permissions: ['cart_events_write'], allowed_cart_types: ['course'] },
        'course carts',
      );
      const r = await keyCall(t.app, courseOnly, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'diploma',
        email: 'a@b.example',
        order_id: '1',
      });
      assert.equal(r.status, 403);
      envelope(r.body, 'cart_type_not_allowed');
      assert.equal(r.body.detail.error.cart_type, 'diploma');
      const r2 = await keyCall(t.app, courseOnly, 'POST', '/api/scoped/events/order-created', {
        cart_type: 'boat',
        email: 'a@b.example',
      });
      assert.equal(r2.status, 422);
      assert.deepEqual(r2.body.detail.error.missing_fields, ['order_id']);
      assert.ok(r2.body.detail.error.invalid_fields.cart_type);
      const r3 = await keyCall(t.app, courseOnly, 'POST', '/api/scoped/events/purchase', {
        cart_type: 'course',
        email: 'a@b.example',
        order_id: '1',
        list_id: 35,
      });
      assert.equal(r3.status, 422);
      assert.ok(r3.body.detail.error.invalid_fields.list_id);
      const r4 = await keyCall(t.app, courseOnly, 'POST', '/api/scoped/events/purchase', {});
      assert.deepEqual(r4.body.detail.error.missing_fields, ['email', 'order_id', 'cart_type']);
    });

    it('403 template_not_allowed when the routed template is outside allowed_template_keys', async () => {
      const { key: limited } = await newKey(
        t.app,
        site,
        {
          permissions: ['transactional_send'],
          allowed_api_events: ['contest_results', 'olympiad_results'],
          allowed_template_keys: ['other_tpl'],
        },
        'limited',
      );
      const r = await keyCall(t.app, limited, 'POST', T, contest);
      assert.equal(r.status, 403);
      envelope(r.body, 'template_not_allowed');
      assert.equal(r.body.detail.error.template_key, 'contest_tpl');
      // An event with no routed template is not restricted by template keys.
      const r2 = await keyCall(t.app, limited, 'POST', T, {
        event_type: 'olympiad_results',
        email: 'a@b.example',
        fields: { event_title: 'X' },
      });
      assert.equal(r2.status, 200);
      assert.equal(r2.body.status, 'no_template');
    });

    it('422 idempotency_key_reused for the same key with another body', async () => {
      const body = { ...contest, idempotency_key: 'k-reuse' };
      assert.equal((await keyCall(t.app, key, 'POST', T, body)).status, 200);
      const r = await keyCall(t.app, key, 'POST', T, { ...body, name: 'Someone else' });
      assert.equal(r.status, 422);
      envelope(r.body, 'idempotency_key_reused');
    });

    it('404 not_found for unknown paths and resources, in the envelope', async () => {
      const r = await keyCall(t.app, key, 'GET', '/api/scoped/nothing-here');
      assert.equal(r.status, 404);
      envelope(r.body, 'not_found');
      const r2 = await adminCall(t.app, 'GET', '/api/admin/emails/999999');
      assert.equal(r2.status, 404);
      envelope(r2.body, 'not_found');
      const r3 = await adminCall(t.app, 'GET', '/api/admin/projects/unknown-site/routing');
      assert.equal(r3.status, 404);
    });

    it('403 api_key_disabled on the next request after disabling; logged; other keys unaffected', async () => {
      const { key: k, id } = await newKey(
        t.app,
        site,
        { permissions: ['transactional_send'], allowed_api_events: ['contest_results'] },
        'to disable',
      );
      assert.equal((await keyCall(t.app, k, 'POST', T, contest)).status, 200);
      const dis = await adminCall(t.app, 'POST', `/api/admin/keys/${id}/disable`);
      assert.deepEqual(dis.body, { id, status: 'disabled' });
      const r = await keyCall(t.app, k, 'POST', T, contest);
      assert.equal(r.status, 403);
      envelope(r.body, 'api_key_disabled');
      assert.equal((await keyCall(t.app, k, 'GET', '/api/scoped/events/catalog')).status, 403);
      assert.equal((await keyCall(t.app, key, 'POST', T, contest)).status, 200);
      const logged = await events(t.app, `?site_key=${site}&status=rejected`);
      assert.ok(logged.some((e) => e.error_code === 'api_key_disabled' && e.key_id === id));
    });

    it('rejected requests are in the chronology with their payload and code', async () => {
      await keyCall(t.app, key, 'POST', T, {
        event_type: 'contest_results',
        email: 'debug@example.com',
        order_id: 'dbg-1',
      });
      const logged = await events(t.app, `?site_key=${site}&order_id=dbg-1`);
      assert.equal(logged.length, 1);
      assert.equal(logged[0].accepted, false);
      assert.equal(logged[0].http_status, 422);
      assert.equal(logged[0].error_code, 'validation_error');
      assert.equal(logged[0].payload.email, 'debug@example.com');
      assert.equal(logged[0].key_last4, key.slice(-4));
    });

    it('admin endpoints refuse without the token, and everything when no token is configured', async () => {
      const r = await rawCall(t.app, 'GET', '/api/admin/emails', {});
      assert.equal(r.status, 401);
      envelope(r.body, 'unauthorized');
      const r2 = await rawCall(t.app, 'GET', '/api/admin/emails', { authorization: 'Bearer wrong-token-000000000' });
      assert.equal(r2.status, 401);
      const noToken = await createTestApp(d.name, { ADMIN_TOKEN: '' });
      try {
        const r3 = await rawCall(
          noToken.app,
          'POST',
          '/api/sites',
          { authorization: 'Bearer ' },
          { site_key: 'x', name: 'x', from_email: 'a@b.example' },
        );
        assert.equal(r3.status, 401);
        assert.match(r3.body.detail.error.message, /ADMIN_TOKEN/);
      } finally {
        await noToken.close();
      }
    });

    it('500 internal_error without internals when the database fails', async () => {
      const broken = await createTestApp(d.name);
      const { key: k } = await setupProject(broken.app);
      // Break the outbox table under the app: the request must fail whole, without leaking SQL.
      await broken.deps.db.db.schema.dropTable('scheduled_emails').execute();
      const r = await keyCall(broken.app, k, 'POST', T, contest);
      assert.equal(r.status, 500);
      envelope(r.body, 'internal_error');
      assert.ok(!/scheduled_emails|SQL|sqlite|relation/i.test(JSON.stringify(r.body)));
      const accepted = await events(broken.app, '?status=accepted');
      assert.equal(accepted.length, 0, 'the failed request left no accepted event behind');
      await broken.close();
    });
  });
}
