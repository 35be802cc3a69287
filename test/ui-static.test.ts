// The admin UI's shell and assets: security headers, no inline script, caching, every module import
// resolvable, no path reaching the file system, and no HTML-parsing sinks anywhere in the UI code.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { UI_ROOT } from '../src/http/routes/ui.js';
import { createTestApp, rawCall, type TestApp } from './support/harness.js';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
}

describe('admin UI shell and assets', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp('sqlite');
  });
  after(() => t.close());

  it('every UI path serves the shell with a strict Content-Security-Policy', async () => {
    for (const path of ['/ui/', '/ui/events', '/ui/projects/a%20b/templates/x', '/ui/login?next=/ui/emails']) {
      const r = await rawCall(t.app, 'GET', path, {});
      assert.equal(r.status, 200, path);
      assert.match(String(r.headers['content-type']), /^text\/html/);
      const csp = String(r.headers['content-security-policy']);
      assert.match(csp, /(^|; )script-src 'self'(;|$)/, 'scripts only from this origin, none inline');
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /base-uri 'none'/);
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.equal(r.headers['x-frame-options'], 'DENY');
    }
    const root = await rawCall(t.app, 'GET', '/', {});
    assert.equal(root.status, 302);
    assert.equal(root.headers.location, '/ui/');
  });

  it('the shell has no inline script or event-handler attribute (the CSP would block them anyway)', () => {
    const html = readFileSync(join(UI_ROOT, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.ok(scripts.length >= 1);
    for (const [, attrs, body] of scripts) {
      assert.match(attrs, /\bsrc="\/ui\/assets\//);
      assert.equal(body.trim(), '');
    }
    assert.doesNotMatch(html, /\son[a-z]+=/i);
    assert.doesNotMatch(html, /https?:\/\//, 'nothing from another host');
  });

  it('assets are served with their type and an ETag; a repeat is 304; unknown paths are 404, never the disk', async () => {
    const js = await rawCall(t.app, 'GET', '/ui/assets/js/app.js', {});
    assert.equal(js.status, 200);
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    assert.equal(js.headers['cache-control'], 'no-cache');
    const again = await rawCall(t.app, 'GET', '/ui/assets/js/app.js', { 'if-none-match': String(js.headers.etag) });
    assert.equal(again.status, 304);
    assert.match(String((await rawCall(t.app, 'GET', '/ui/assets/app.css', {})).headers['content-type']), /^text\/css/);
    for (const bad of [
      '/ui/assets/nope.js',
      '/ui/assets/../../../package.json',
      '/ui/assets/%2e%2e/%2e%2e/config.ts',
      '/ui/assets/js/',
    ]) {
      const r = await rawCall(t.app, 'GET', bad, {});
      assert.notEqual(r.status, 200, bad);
      if (r.status === 404) assert.equal(r.body.detail.error.code, 'not_found');
    }
  });

  it('every module the UI imports is served (no build step, so a wrong path would only show in a browser)', async () => {
    const seen = new Set<string>();
    const queue = ['/ui/assets/js/app.js'];
    while (queue.length) {
      const url = queue.pop()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const r = await rawCall(t.app, 'GET', url, {});
      assert.equal(r.status, 200, `${url} is imported but not served`);
      for (const m of String(r.body).matchAll(/^import\s[^'"]*['"](\.{1,2}\/[^'"]+)['"]/gm))
        queue.push(new URL(m[1], `http://x${url}`).pathname);
    }
    assert.ok(seen.size >= 10, `only ${seen.size} modules reached`);
  });

  it('no UI code parses data as HTML: only text nodes and DOM attributes', () => {
    const sinks =
      /\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write|\beval\(|new Function\(|createContextualFragment|DOMParser/;
    const sources = files(join(UI_ROOT, 'assets')).filter((f) => f.endsWith('.js'));
    assert.ok(sources.length >= 10);
    for (const f of sources) assert.doesNotMatch(readFileSync(f, 'utf8'), sinks, f);
  });
});
