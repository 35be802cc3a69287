// SPEC §22, every format a whole document in the project's language: MJML's output (which declares its
// charset only as http-equiv, with `lang="und"` or the author's `<mjml lang>`), an HTML fragment and an
// author's document with another charset all leave with `<html lang>` of the project and
// `<meta charset="utf-8">`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Parser } from 'htmlparser2';
import { compileMjml } from '../src/delivery/mjml.js';
import { renderEmail } from '../src/delivery/render.js';

/** `<html lang>` and the `<meta charset>` values of a document, as a parser reads them. */
function head(html: string) {
  let lang: string | undefined;
  const charsets: string[] = [];
  const p = new Parser({
    onopentag(name, a) {
      if (name === 'html') lang = a.lang;
      if (name === 'meta' && a.charset !== undefined) charsets.push(a.charset.toLowerCase());
      if (name === 'meta' && a['http-equiv']?.toLowerCase() === 'content-type')
        charsets.push(/charset=([\w-]+)/i.exec(a.content ?? '')?.[1].toLowerCase() ?? '');
    },
  });
  p.end(html);
  return { lang, charsets, metaCharset: /<meta charset="utf-8">/.test(html) };
}

const render = (html: string, compiled: string | null, locale: 'ru' | 'en') =>
  renderEmail({
    template: { subject: 'Тема', html, text: 'text', compiled_html: compiled },
    layout: null,
    context: { name: 'Анна' },
    settings: { locale, timezone: 'Europe/Moscow' },
  }).html;

test('MJML, a fragment and an author document: <html lang> of the project and <meta charset="utf-8">', async () => {
  for (const source of [
    '<mjml><mj-body><mj-section><mj-column><mj-text>Здравствуйте, {{ name }}</mj-text></mj-column></mj-section></mj-body></mjml>',
    '<mjml lang="en"><mj-body><mj-section><mj-column><mj-text>Hi {{ name }}</mj-text></mj-column></mj-section></mj-body></mjml>',
  ]) {
    const c = await compileMjml(source);
    assert.ok(c.ok, JSON.stringify(c));
    for (const locale of ['ru', 'en'] as const) {
      const h = head(render(source, c.html, locale));
      assert.equal(h.lang, locale, `MJML in a ${locale} project`);
      assert.ok(h.metaCharset, `MJML in a ${locale} project has <meta charset="utf-8">`);
      assert.ok(
        h.charsets.every((x) => x === 'utf-8'),
        `every declaration says utf-8: ${h.charsets.join(', ')}`,
      );
    }
  }
  const fragment = head(render('<p>Привет</p>', null, 'ru'));
  assert.deepEqual([fragment.lang, fragment.metaCharset], ['ru', true]);
  const cp1251 = head(
    render(
      '<html lang="en"><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251"><meta charset="windows-1251"></head><body>x</body></html>',
      null,
      'ru',
    ),
  );
  assert.equal(cp1251.lang, 'ru');
  assert.deepEqual(cp1251.charsets, ['utf-8', 'utf-8'], 'we send UTF-8: no part of the head may say otherwise');
});
