// Every error the admin API can return has a Russian and an English sentence (issue 28). The lists
// walked come from the code itself: the ErrorCode union is the runtime tuple ERROR_CODES, a reason is a
// key of the catalogue (AppError refuses anything else at compile time, checked below by an expected
// type error), and the sources are scanned so that no code or reason is used that is not there
// and no catalogue entry is left that nothing uses.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CHECK_REASONS,
  CHECK_SENTENCES,
  CODE_SENTENCES,
  ERROR_CODES,
  ERROR_REASONS,
  REASON_SENTENCES,
  fill,
  sentenceFor,
  type Sentence,
} from '../src/domain/errorCatalog.js';
import { AppError } from '../src/errors.js';
import { createTestApp, rawCall, type TestApp } from './support/harness.js';

const CYRILLIC = /[А-Яа-яЁё]/;
const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
const SOURCES = files('src')
  .filter((f) => f.endsWith('.ts') && !/error(Catalog|Reasons)\.ts$/.test(f))
  .map((f) => ({ f, text: readFileSync(f, 'utf8') }));
// A Liquid error's tag or filter is named in Russian only: the English sentence quotes liquidjs whole ({detail}).
const RUSSIAN_ONLY_PARAMS = new Set(['tag', 'filter']);

function checkSentence(what: string, s: Sentence): void {
  assert.ok(s.en.trim().length > 3, `${what}: no English sentence`);
  assert.ok(s.ru.trim().length > 3, `${what}: no Russian sentence`);
  assert.ok(CYRILLIC.test(s.ru), `${what}: the Russian sentence is not Russian: ${s.ru}`);
  assert.ok(!CYRILLIC.test(s.en), `${what}: the English sentence has Cyrillic: ${s.en}`);
  for (const p of placeholders(s.ru))
    assert.ok(
      placeholders(s.en).includes(p) || RUSSIAN_ONLY_PARAMS.has(p),
      `${what}: {${p}} in Russian is not a param the English sentence names`,
    );
}

describe('the error catalogue', () => {
  it('every error code has an English and a Russian sentence', () => {
    assert.ok(ERROR_CODES.length >= 25);
    for (const code of ERROR_CODES) checkSentence(`code ${code}`, CODE_SENTENCES[code]);
    assert.deepEqual(Object.keys(CODE_SENTENCES).sort(), [...ERROR_CODES].sort());
  });

  it('every reason and every connection-check outcome has an English and a Russian sentence', () => {
    assert.ok(ERROR_REASONS.length >= 60, `only ${ERROR_REASONS.length} reasons`);
    for (const r of ERROR_REASONS) checkSentence(`reason ${r}`, REASON_SENTENCES[r]);
    for (const r of CHECK_REASONS) checkSentence(`check ${r}`, CHECK_SENTENCES[r]);
  });

  it('no service answers with a code outside ERROR_CODES', () => {
    const used = new Set<string>();
    for (const { f, text } of SOURCES)
      for (const m of text.matchAll(/new AppError\(\s*\d{3},\s*'(\w+)'/g)) {
        used.add(m[1]);
        assert.ok((ERROR_CODES as readonly string[]).includes(m[1]), `${f}: code ${m[1]}`);
      }
    assert.ok(used.size >= 20, `only ${used.size} codes found in the sources`);
  });

  // The other way round (a reason given that the catalogue lacks) is the compiler's: see the next test.
  it('every reason and check outcome of the catalogue is given somewhere in the sources', () => {
    const all = SOURCES.map((s) => s.text).join('\n');
    for (const r of [...ERROR_REASONS, ...CHECK_REASONS])
      assert.ok(all.includes(`'${r}'`), `reason ${r} is in the catalogue but no source gives it`);
  });

  it('a reason outside the catalogue does not compile, and the English message is the catalogue sentence', () => {
    // Never called: it only has to fail to compile (tsc runs over the tests).
    const bad = () =>
      // @ts-expect-error: 'no_such_reason' is not a key of REASON_SENTENCES
      new AppError(422, 'validation_error', { reason: 'no_such_reason' });
    assert.equal(typeof bad, 'function');
    const e = new AppError(422, 'validation_error', { reason: 'password_too_short', params: { min: 10 } });
    assert.equal(e.message, 'The password must be at least 10 characters long');
    assert.equal(e.toBody('ru').detail.error.message, 'Пароль слишком короткий: нужно не меньше 10 символов');
    assert.deepEqual(e.toBody().detail.error.params, { min: 10 });
    // Without a reason: the code's sentence in Russian, the service's own words in English.
    const plain = new AppError(404, 'not_found', 'Contact 5 not found');
    assert.equal(plain.toBody().detail.error.message, 'Contact 5 not found');
    assert.equal(plain.toBody('ru').detail.error.message, CODE_SENTENCES.not_found.ru);
    assert.equal(sentenceFor('en', { code: 'conflict' }), CODE_SENTENCES.conflict.en);
    // One pass: a value that looks like a placeholder is not filled again.
    assert.equal(fill('{a} and {b}', { a: '{b}', b: 'x' }), '{b} and x');
  });
});

describe('the UI reads the same catalogue', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp('sqlite');
  });
  after(async () => t.close());

  it('the served module holds every code, reason and check outcome in both languages', async () => {
    const r = await rawCall(t.app, 'GET', '/ui/assets/js/i18n/errors.js', {});
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /javascript/);
    const json = /export default (\{[\s\S]*\});\s*$/.exec(String(r.body));
    assert.ok(json, 'an ES module with a default export');
    const served = JSON.parse(json[1]) as Record<'en' | 'ru', Record<string, string>>;
    for (const lang of ['en', 'ru'] as const) {
      for (const c of ERROR_CODES) assert.equal(served[lang][`code.${c}`], CODE_SENTENCES[c][lang]);
      for (const x of ERROR_REASONS) assert.equal(served[lang][`reason.${x}`], REASON_SENTENCES[x][lang]);
      for (const x of CHECK_REASONS) assert.equal(served[lang][`check.${x}`], CHECK_SENTENCES[x][lang]);
    }
  });
});
