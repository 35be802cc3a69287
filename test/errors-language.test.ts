// Errors in the caller's language through the real HTTP layer (issue 28): Accept-Language: ru gives a
// Russian `message` with the same `code`, a stable `reason` and the `params` it names, for the cases an
// administrator meets first (a weak password, a bad SMTP URL, a webhook to a private address, a template
// that does not parse); a site that sends no Accept-Language gets the gateway's answers as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REASON_SENTENCES } from '../src/domain/errorCatalog.js';
import {
  ADMIN_TOKEN,
  DIALECTS,
  keyCall,
  rawCall,
  setupProject,
  createTestApp,
  type TestApp,
} from './support/harness.js';

const RU = { 'accept-language': 'ru-RU,ru;q=0.9,en;q=0.8' };
const admin = (t: TestApp, method: string, url: string, body: unknown, headers: Record<string, string> = {}) =>
  rawCall(t.app, method, url, { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers }, body);

for (const d of DIALECTS) {
  describe(`errors in the caller's language [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    let key: string;
    before(async () => {
      t = await createTestApp(d.name);
      ({ site, key } = await setupProject(t.app));
    });
    after(async () => t?.close());

    it('a weak password: Russian message, code, reason and params; English without the header', async () => {
      const body = { email: 'irina@school.example', name: 'Ирина', password: 'qwertyuiop', role: 'owner' };
      const ru = await admin(t, 'POST', '/api/admin/users', body, RU);
      assert.equal(ru.status, 422);
      const e = ru.body.detail.error;
      assert.equal(e.code, 'validation_error');
      assert.equal(e.reason, 'password_too_common');
      assert.deepEqual(e.params, { field: 'password' });
      assert.equal(e.message, 'Этот пароль слишком распространён: придумайте другой');
      assert.equal(e.invalid_fields.password, 'is too common; choose another', 'existing members unchanged');
      assert.equal(ru.headers['content-language'], 'ru');

      const en = await admin(t, 'POST', '/api/admin/users', { ...body, password: 'short' });
      assert.equal(en.status, 422);
      assert.equal(en.body.detail.error.message, 'The password must be at least 10 characters long');
      assert.deepEqual(en.body.detail.error.params, { field: 'password', min: 10 });
      const short = await admin(t, 'POST', '/api/admin/users', { ...body, password: 'short' }, RU);
      assert.equal(short.body.detail.error.message, 'Пароль слишком короткий: нужно не меньше 10 символов');
    });

    it('a bad SMTP URL names its field in params and reads in Russian', async () => {
      const url = `/api/admin/projects/${site}/delivery`;
      const r = await admin(t, 'PUT', url, { primary: { smtp_url: 'http://mail.school.example:587' } }, RU);
      assert.equal(r.status, 422);
      const e = r.body.detail.error;
      assert.equal(e.code, 'validation_error');
      assert.equal(e.reason, 'smtp_url_scheme');
      assert.deepEqual(e.params, { field: 'primary.smtp_url' });
      assert.equal(e.message, REASON_SENTENCES.smtp_url_scheme.ru);
      assert.match(e.message, /smtp:\/\/ или smtps:\/\//);
      const en = await admin(t, 'PUT', url, { primary: { smtp_url: 'http://mail.school.example:587' } });
      assert.equal(en.body.detail.error.message, 'primary.smtp_url must start with smtp:// or smtps://');
    });

    it('a webhook to a private address says where an owner may allow it, in Russian', async () => {
      const url = `/api/admin/projects/${site}/webhooks`;
      const body = { url: 'http://127.0.0.1:8080/hooks', events: ['event.rejected'] };
      const r = await admin(t, 'POST', url, body, RU);
      assert.equal(r.status, 422);
      const e = r.body.detail.error;
      assert.equal(e.reason, 'webhook_url_private');
      assert.deepEqual(e.params, { field: 'url' });
      assert.match(e.message, /внутреннюю сеть/);
      assert.match(e.message, /Вебхуки/);
      const en = await admin(t, 'POST', url, body);
      assert.match(en.body.detail.error.message, /^url points at a loopback or private address/);
      assert.equal(en.headers['content-language'], undefined);
    });

    it('a template syntax error names the tag and the line in Russian', async () => {
      const body = { site_key: site, name: 'broken', subject: 'Hi', html: '<p>\n{% if paid %}Оплачено</p>', text: 'x' };
      const r = await admin(t, 'POST', '/api/templates', body, RU);
      assert.equal(r.status, 422);
      const e = r.body.detail.error;
      assert.equal(e.code, 'validation_error');
      assert.equal(e.reason, 'template_tag_not_closed');
      assert.equal(e.params.tag, '{% if paid %}');
      assert.equal(e.params.line, 2);
      assert.equal(e.params.part, 'html');
      assert.equal(e.params.field, 'html');
      assert.equal(e.message, 'Шаблон не разобран: html, строка 2: тег {% if paid %} не закрыт (нет парного end-тега)');
      assert.deepEqual(e.template_problem, { part: 'html', line: 2, message: 'tag {% if paid %} not closed' });
      const en = await admin(t, 'POST', '/api/templates', body);
      assert.equal(
        en.body.detail.error.message,
        'The template does not parse: html, line 2: tag {% if paid %} not closed',
      );
    });

    it('a gateway call without Accept-Language is answered as before; with ru its message is Russian', async () => {
      const T = '/api/scoped/send/transactional';
      const plain = await keyCall(t.app, key, 'POST', T, { event_type: 'contest_results', email: 'a@b.example' });
      assert.equal(plain.status, 422);
      const e = plain.body.detail.error;
      assert.equal(e.code, 'validation_error');
      assert.equal(
        e.message,
        'Validation failed for event type contest_results: missing fields.event_title, fields.work_title',
      );
      assert.equal(e.event_type, 'contest_results');
      assert.deepEqual(e.missing_fields, ['fields.event_title', 'fields.work_title']);
      assert.deepEqual(e.required_fields, ['event_type', 'email', 'fields.event_title', 'fields.work_title']);
      assert.deepEqual(e.invalid_fields, {});
      assert.equal(plain.headers['content-language'], undefined);
      assert.equal(plain.headers.vary, undefined);

      const noKey = await keyCall(t.app, null, 'POST', T, { event_type: 'contest_results' });
      assert.deepEqual(Object.keys(noKey.body.detail.error), ['code', 'message']);
      assert.equal(noKey.body.detail.error.message, 'Send the project API key in the X-API-Key header');

      const ru = await keyCall(t.app, key, 'POST', T, { event_type: 'contest_results', email: 'a@b.example' }, RU);
      assert.equal(ru.body.detail.error.code, 'validation_error');
      assert.match(ru.body.detail.error.message, /^Данные не прошли проверку \(event type contest_results\)/);
      assert.deepEqual(ru.body.detail.error.missing_fields, e.missing_fields);
      const denied = await keyCall(t.app, 'not-a-key', 'POST', T, {}, RU);
      assert.equal(denied.body.detail.error.code, 'invalid_api_key');
      assert.equal(denied.body.detail.error.message, 'API-ключ не подходит');
    });
  });
}
