// The admin UI in Russian and English: no user-facing text outside the message catalogue (a static scan
// that is itself tested on strings it must and must not report), the two catalogues agree key for key
// and placeholder for placeholder, every key the code asks for exists, and the server's HTML shell comes
// in the language the browser's Accept-Language asks for.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CATALOG, EXTRA_EVENT_TYPES } from '../src/domain/catalog.js';
import {
  CONTACT_STATUS_REASONS,
  EMAIL_STATUSES,
  REPORT_KINDS,
  REPORT_SOURCES,
  WEBHOOK_PROVIDERS,
} from '../src/domain/statuses.js';
import { pickLanguage, UI_ROOT } from '../src/http/routes/ui.js';
import { en, ru, type Entry } from './support/catalogues.js';
import { createTestApp, rawCall, type TestApp } from './support/harness.js';
import { cssClassesOf, isProse, scanHtml, scanJs, type Finding } from './support/uiStrings.js';

const CATALOGUES: Record<string, Record<string, Entry>> = { en, ru };
const JS_ROOT = join(UI_ROOT, 'assets', 'js');
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
const CSS = cssClassesOf(readFileSync(join(UI_ROOT, 'assets', 'app.css'), 'utf8'));
const uiScripts = files(JS_ROOT).filter((f) => f.endsWith('.js') && !relative(JS_ROOT, f).startsWith('i18n'));
const show = (fs: Finding[]) => fs.map((f) => `${f.file}:${f.line} ${f.why} ${JSON.stringify(f.text)}`).join('\n');
const placeholders = (e: Entry) =>
  [
    ...new Set(
      (typeof e === 'string' ? [e] : Object.values(e)).flatMap((s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1])),
    ),
  ].sort();

describe('UI strings come from the message catalogue', () => {
  it('no UI script shows a literal outside the catalogue', () => {
    assert.ok(uiScripts.length >= 15, `only ${uiScripts.length} scripts found`);
    const findings = uiScripts.flatMap((f) => scanJs(relative(UI_ROOT, f), readFileSync(f, 'utf8'), CSS));
    assert.equal(findings.length, 0, `literal UI text outside the catalogue:\n${show(findings)}`);
  });

  it('index.html holds only {{key}} placeholders of the catalogue in its text', () => {
    const { findings, keys } = scanHtml('index.html', readFileSync(join(UI_ROOT, 'index.html'), 'utf8'));
    assert.equal(findings.length, 0, show(findings));
    assert.ok(keys.length >= 4);
    for (const k of keys.filter((x) => x !== 'lang'))
      for (const [lang, c] of Object.entries(CATALOGUES)) assert.equal(typeof c[k], 'string', `${lang}: ${k}`);
  });

  // The scan itself: what it must report, and CSS classes, ids, selectors and code it must leave alone.
  it('the scan reports every kind of literal UI text', () => {
    const bad = `
      h('p', {}, 'Hello');
      h('p', {}, ok ? 'Yes' : t('no'));
      h('button', { title: 'Close', class: 'x' }, t('a'));
      el.textContent = 'Saved';
      document.title = \`Admin \${x}\`;
      toast(\`Saved \${x}\`);
      field('Name', input, 'hint');
      select([['', 'All projects'], ['a', t('b')]], v);
      const MSG = 'Something went wrong';
      const lower = 'not routed';
      const almost = 'card overdue';
      const ru = 'Привет';
      confirmDialog(q, 'Yes');
      table(cols, rows, { empty: 'none' });
      badge('none');
      const col = { label: 'Status', cell: (r) => 'yes' };
      h('ul', {}, xs.map(() => 'item'));
      throw new ApiError(404, { code: 'not_found', message: 'gone' });
      el.setAttribute('aria-label', 'Close');
      function f(label = 'Filters') {}
      const cells = { cell: (r) => { if (r) return 'shown'; return t('x'); } };
    `;
    const found = scanJs('bad.js', bad, CSS).map((f) => f.text);
    assert.deepEqual(found, [
      'Hello',
      'Yes',
      'Close',
      'Saved',
      'Admin  ',
      'Saved  ',
      'Name',
      'hint',
      'All projects',
      'Something went wrong',
      'not routed',
      'card overdue',
      'Привет',
      'Yes',
      'none',
      'none',
      'Status',
      'yes',
      'item',
      'gone',
      'Close',
      'Filters',
      'shown',
    ]);
  });

  it('the scan leaves CSS classes, ids, selectors, paths, keys and comparisons alone', () => {
    const good = `
      import { t } from './i18n.js';
      h('div', { class: 'card alert', id: 'main-nav', role: 'region', 'data-note': 'Some Thing' }, t('x'));
      h('span', { class: \`badge \${tone}\` }, text);
      h('a', { href: \`/ui/projects/\${enc(site)}\`, 'aria-current': on ? 'page' : null }, site);
      h('p', {}, ' · ', '—', \`#\${id}\`, \`\${a} (#\${b})\`);
      el.classList.add('table-wrap');
      el.classList.toggle('only-missing', on);
      document.querySelector('.email-actions button, h1');
      target.querySelector('[data-autofocus]');
      ctx.navigate(url, { focus: 'select[name="status"]', replace: true });
      if (ev.key === 'Escape' || method !== 'GET') go();
      api('GET', '/api/admin/projects', { name: 'Some Name' });
      const STATUS = { sent: 'ok', failed: 'bad', admin_blocked: 'bad' };
      console.error('i18n: missing key');
      new Intl.DateTimeFormat('en', { month: 'long', timeZone: 'UTC' });
      localStorage.setItem('egw.lang', l);
      const NS = 'http://www.w3.org/2000/svg';
      s('svg', { preserveAspectRatio: 'xMinYMin meet', 'text-anchor': 'end' });
      select(options, 'Europe/Moscow', { name: 'timezone', 'aria-label': t('tz') });
      x.replace(/a/, 'b c');
      headers['content-type'] = 'application/json';
      const k = t('nav.dashboard');
      const classes = 'card alert';
      const tone = cond ? 'small danger' : 'button primary';
    `;
    assert.deepEqual(scanJs('good.js', good, CSS), []);
    assert.ok(CSS.has('card') && CSS.has('alert') && CSS.has('danger'), 'the classes come from app.css');
    assert.deepEqual(
      ['card alert', 'table-wrap', '.a b, h1', 'egw_live_x', 'text/html; charset=utf-8', '/ui/login?next='].filter(
        (x) => isProse(x, CSS),
      ),
      [],
    );
  });

  it('index.html text outside a placeholder is reported', () => {
    const { findings } = scanHtml(
      'x.html',
      '<html lang="{{lang}}"><title>Admin</title><!-- a comment --><p>{{ok}}</p><a title="Go" href="#x">{{a}} b</a></html>',
    );
    assert.deepEqual(findings.map((f) => f.text).sort(), ['Admin', 'Go', '{{a}} b'].sort());
  });
});

describe('the catalogues', () => {
  it('have the same keys and the same placeholders in every language; plurals have their forms', () => {
    assert.deepEqual(Object.keys(ru).sort(), Object.keys(en).sort());
    for (const key of Object.keys(en)) {
      assert.deepEqual(placeholders(ru[key]), placeholders(en[key]), key);
      for (const [lang, c] of Object.entries(CATALOGUES)) {
        const e = c[key];
        if (typeof e === 'string') assert.ok(e.trim() || key === 'x', `${lang}: ${key} is empty`);
        else {
          const need = lang === 'ru' ? ['one', 'few', 'many', 'other'] : ['one', 'other'];
          assert.deepEqual(Object.keys(e).sort(), need.sort(), `${lang}: ${key} plural forms`);
        }
      }
    }
  });

  it('Russian is translated: an entry equal to the English one is a name, a code or a symbol', () => {
    const same = Object.keys(en).filter((k) => JSON.stringify(en[k]) === JSON.stringify(ru[k]));
    const allowed =
      /^(lang\.|common\.(email|json|id)$|error\.http$|emails\.messageId$|templates\.htmlShort$|pager\.range$|contacts\.statusOption$|events\.why$|emails\.source\.(ses|postmark|sendgrid|mailgun|unisender_go)$)/;
    assert.deepEqual(
      same.filter((k) => !allowed.test(k)),
      [],
    );
    for (const [k, v] of Object.entries(ru))
      if (typeof v === 'string' && !allowed.test(k)) assert.match(v, /[а-яё]|^\W*$/i, `ru ${k} has no Russian: ${v}`);
  });

  it('every key the UI asks for exists, and every family of keys covers its values', () => {
    const used = new Set<string>();
    for (const f of uiScripts) {
      const src = readFileSync(f, 'utf8');
      for (const m of src.matchAll(/\b(?:t|tNodes|hasKey)\('([\w.]+)'/g)) used.add(m[1]);
    }
    assert.ok(used.size > 250, `only ${used.size} keys found`);
    const missing = [...used].filter((k) => !(k in en) || !(k in ru));
    assert.deepEqual(missing, []);

    const family = (prefix: string, values: readonly string[]) =>
      values.map((v) => `${prefix}.${v}`).filter((k) => !(k in en) || !(k in ru));
    assert.deepEqual(family('nav', ['dashboard', 'projects', 'events', 'emails', 'contacts']), []);
    assert.deepEqual(
      family('project.tab', ['keys', 'routing', 'templates', 'lists', 'categories', 'paid', 'chain']),
      [],
    );
    assert.deepEqual(family('cart', ['course', 'diploma', 'portal']), []);
    assert.deepEqual(family('lang', ['ru', 'en']), []);
    assert.deepEqual(family('project.locale', ['ru', 'en']), []);
    assert.deepEqual(family('emails.kind', ['transactional', 'cart', 'campaign']), []);
    const statuses = ['active', 'unsubscribed', 'invalid', 'admin_blocked', 'disabled'];
    const emailStatuses = ['scheduled', 'queued', 'sending', 'sent', 'failed', 'cancelled', 'suppressed'];
    assert.deepEqual(family('status', [...statuses, ...emailStatuses, 'accepted', 'rejected', 'pending']), []);
    assert.deepEqual(family('contacts.help', statuses.slice(0, 4)), []);
    assert.deepEqual(family('status', [...EMAIL_STATUSES, ...REPORT_KINDS]), []);
    assert.deepEqual(family('emails.source', REPORT_SOURCES), []);
    assert.deepEqual(family('project.reportsAuth', WEBHOOK_PROVIDERS), []);
    assert.deepEqual(family('contacts.cause', CONTACT_STATUS_REASONS), []);
    assert.deepEqual(
      family(
        'catalog',
        CATALOG.map((e) => e.event_type),
      ),
      [],
    );
    assert.ok(!EXTRA_EVENT_TYPES.some((x) => `catalog.${x}` in en), 'further event types share one description');
    for (const code of ['invalid_json', 'validation_error', 'api_key_disabled', 'rate_limited', 'unknown_event_type'])
      assert.ok(`why.${code}` in ru, code);
  });
});

describe('the HTML shell speaks the browser language', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp('sqlite');
  });
  after(() => t.close());

  it('Accept-Language picks the language with the highest weight among ru and en; English otherwise', () => {
    assert.equal(pickLanguage('ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7'), 'ru');
    assert.equal(pickLanguage('en-GB,en;q=0.9,ru;q=0.8'), 'en');
    assert.equal(pickLanguage('de-DE, ru;q=0.5, en;q=0.3'), 'ru');
    assert.equal(pickLanguage('en;q=0.2, RU;q=0.9'), 'ru');
    assert.equal(pickLanguage('ru;q=0, en;q=0.1'), 'en');
    assert.equal(pickLanguage('de, fr'), 'en');
    assert.equal(pickLanguage(''), 'en');
    assert.equal(pickLanguage(undefined), 'en');
    assert.equal(pickLanguage('*'), 'en');
    assert.equal(pickLanguage('ru;q=abc'), 'en');
  });

  it('GET /ui/ answers in that language: lang, title and texts filled in, Vary and Content-Language set', async () => {
    const ruPage = await rawCall(t.app, 'GET', '/ui/events', { 'accept-language': 'ru-RU,ru;q=0.9,en;q=0.8' });
    assert.equal(ruPage.status, 200);
    const html = String(ruPage.body);
    assert.match(html, /<html lang="ru">/);
    assert.match(html, /<title>Почтовый шлюз · администрирование<\/title>/);
    assert.match(html, />Перейти к содержимому</);
    assert.match(html, />Загрузка…</);
    assert.doesNotMatch(html, /\{\{/);
    assert.equal(ruPage.headers['content-language'], 'ru');
    assert.match(String(ruPage.headers.vary), /Accept-Language/i);

    const enPage = await rawCall(t.app, 'GET', '/ui/events', { 'accept-language': 'de' });
    assert.match(String(enPage.body), /<html lang="en">/);
    assert.match(String(enPage.body), /<title>Mail gateway · admin<\/title>/);
    assert.notEqual(enPage.headers.etag, ruPage.headers.etag, 'each language has its own ETag');
    const again = await rawCall(t.app, 'GET', '/ui/', {
      'accept-language': 'ru',
      'if-none-match': String(ruPage.headers.etag),
    });
    assert.equal(again.status, 304);
  });

  it('the catalogues are served to the browser as modules', async () => {
    for (const lang of ['ru', 'en']) {
      const r = await rawCall(t.app, 'GET', `/ui/assets/js/i18n/${lang}.js`, {});
      assert.equal(r.status, 200);
      assert.match(String(r.headers['content-type']), /^text\/javascript/);
    }
  });
});
