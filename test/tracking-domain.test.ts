// The tracking step's rules as plain functions (SPEC §17): tokens, the rewrite by source position, UTM,
// people and machines, truncated addresses. Generated URLs (fast-check) check that a tracked link always
// leads where the original did, Cyrillic and percent-encoded ones included.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { applyTracking, withoutOpenPixel } from '../src/delivery/tracking.js';
import { machineReason, truncateIp, uaCategory } from '../src/domain/machineHits.js';
import {
  signClick,
  signOpen,
  trackingKey,
  trackingKeys,
  verifyClick,
  verifyOpen,
  withUtm,
} from '../src/domain/trackingTokens.js';
import { linksOf } from './support/tracking.js';

const PUBLIC = 'https://gw.example.test';
const keys = trackingKeys('domain-test-secret-0123456789', null);
const input = (settings: Partial<{ opens: boolean; clicks: boolean; utm: any }> = {}) => ({
  publicUrl: PUBLIC,
  key: keys.current,
  emailId: 77,
  projectId: 3,
  templateKey: 'cart_1h',
  sentAt: 1_800_000_000_000,
  settings: { opens: true, clicks: true, utm: null, ...settings },
});
const destinationOf = (tracked: string) => verifyClick(keys, tracked.slice(`${PUBLIC}/c/`.length))?.url;
const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

describe('tracking tokens', () => {
  const claims = { emailId: 9, projectId: 2, position: 4, sentAt: 1_800_000_000, url: 'https://a.example/x?y=1#z' };

  it('verify what they sign, under the current or the previous key, and nothing edited', () => {
    const token = signClick(keys.current, claims);
    assert.deepEqual(verifyClick(keys, token), claims);
    const rotated = trackingKeys('the-new-secret-000000000000', 'domain-test-secret-0123456789');
    assert.deepEqual(verifyClick(rotated, token), claims, 'SECRET_KEY_PREVIOUS still honoured');
    assert.equal(verifyClick(trackingKeys('the-new-secret-000000000000', null), token), null);
    const parts = token.split('.');
    for (let i = 1; i < parts.length; i++) {
      const edited = [...parts];
      edited[i] =
        i === 5
          ? Buffer.from('https://evil.example/').toString('base64url')
          : edited[i].replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
      assert.equal(verifyClick(keys, edited.join('.')), null, `part ${i} edited`);
    }
    const open = signOpen(keys.current, claims);
    assert.deepEqual(verifyOpen(keys, open), { emailId: 9, projectId: 2, sentAt: 1_800_000_000 });
    assert.equal(verifyOpen(keys, token), null, 'a click token is no open token');
    assert.equal(verifyClick(keys, open), null);
  });

  it('never carry a destination that is not an absolute http(s) URL', () => {
    for (const url of ['javascript:alert(1)', '//evil.example/', '/relative', 'data:text/html,x', 'HTTPS://Ok.Example'])
      assert.equal(verifyClick(keys, signClick(keys.current, { ...claims, url })), null, url);
  });

  it('derive the key from the secret, never use it as is', () => {
    assert.notDeepEqual(trackingKey('s1-0123456789'), Buffer.from('s1-0123456789'));
    assert.throws(() => trackingKey(''));
  });
});

describe('the rewrite', () => {
  it('a tracked link leads where the original did, for any http(s) URL (generated, Cyrillic included)', () => {
    const cyrillic = fc.string({
      unit: fc.constantFrom('а', 'б', 'в', 'ж', 'я', 'Ё', ' ', '%D0%B0', '-', '_', '~', '&', '='),
      maxLength: 12,
    });
    const url = fc
      .tuple(
        fc.webUrl({ withQueryParameters: true, withFragments: true, validSchemes: ['http', 'https'] }),
        cyrillic,
        cyrillic,
        fc.boolean(),
      )
      .map(([u, a, b, idn]) => {
        const x = new URL(u);
        const host = idn ? 'пример.рф' : x.host;
        return `${x.protocol}//${host}${x.pathname}/${a}?${x.search.slice(1)}&q=${b}${x.hash || '#' + b}`;
      });
    fc.assert(
      fc.property(url, (original) => {
        const html = `<p>x</p><a class="b" href="${escapeAttr(original)}">go</a><p>y</p>`;
        const out = applyTracking({ subject: 's', html, text: '' }, input({ opens: false }));
        const [tracked] = linksOf(out.html).hrefs;
        assert.equal(destinationOf(tracked), new URL(original).href);
        // Everything but the attribute's value is the author's HTML.
        assert.equal(out.html.replace(tracked, 'X'), html.replace(escapeAttr(original), 'X'));
      }),
      { seed: 2026_11_25, numRuns: 300 },
    );
  });

  it('leaves mailto, relative, anchors and the gateway’s own links; the pixel goes before </body>', () => {
    const html =
      '<html><body><a href="mailto:a@b.c">m</a><a href="/rel">r</a><a href="#top">t</a><a href="https://gw.example.test/p/x">prefs</a><area href="https://x.example/map"></body></html>';
    const out = applyTracking({ subject: 's', html, text: '' }, input());
    const { hrefs, images } = linksOf(out.html);
    assert.deepEqual(hrefs.slice(0, 4), ['mailto:a@b.c', '/rel', '#top', 'https://gw.example.test/p/x']);
    assert.equal(destinationOf(hrefs[4]), 'https://x.example/map');
    assert.equal(images.length, 1);
    assert.ok(out.html.endsWith('</body></html>'));
    assert.equal(withoutOpenPixel(out.html, PUBLIC).replace(hrefs[4], 'https://x.example/map'), html);
  });

  it('without </body> the pixel ends the HTML; an empty HTML part gets none', () => {
    assert.match(
      applyTracking({ subject: 's', html: '<p>hi</p>', text: '' }, input()).html,
      /^<p>hi<\/p><img src="https:\/\/gw\.example\.test\/o\/o1\.[^"]+\.gif"/,
    );
    assert.equal(applyTracking({ subject: 's', html: '', text: 'hi' }, input()).html, '');
  });

  it('text part: the sentence’s punctuation and brackets stay outside the link', () => {
    const text =
      'See https://a.example/x?y=1. Or (https://a.example/p_(q)) and https://a.example/z!\nhttps://gw.example.test/u/t';
    const out = applyTracking({ subject: 's', html: '', text }, input()).text;
    const links = [...out.matchAll(/https:\/\/gw\.example\.test\/c\/c1(?:\.[A-Za-z0-9_-]+){6}/g)].map((m) =>
      destinationOf(m[0]),
    );
    assert.deepEqual(links, ['https://a.example/x?y=1', 'https://a.example/p_(q)', 'https://a.example/z']);
    assert.ok(out.includes('. Or ('), out);
    assert.ok(out.endsWith('!\nhttps://gw.example.test/u/t'));
  });

  it('nothing changes with opens, clicks and UTM all off', () => {
    const parts = { subject: 's', html: '<a href="https://a.example">a</a>', text: 'https://a.example' };
    assert.deepEqual(applyTracking(parts, input({ opens: false, clicks: false })), parts);
  });
});

describe('UTM', () => {
  const utm = { source: 'gw', medium: 'email', campaign: '{{ template_key }}' };
  it('added at the end of the query, before the fragment, only where the link has none', () => {
    assert.equal(
      withUtm('https://a.example/p#f', utm, 'k'),
      'https://a.example/p?utm_source=gw&utm_medium=email&utm_campaign=k#f',
    );
    assert.equal(
      withUtm('https://a.example/p?x=%D0%B0&y', utm, 'k'),
      'https://a.example/p?x=%D0%B0&y&utm_source=gw&utm_medium=email&utm_campaign=k',
    );
    assert.equal(withUtm('https://a.example/?UTM_Source=own', utm, 'k'), 'https://a.example/?UTM_Source=own');
    assert.equal(
      withUtm('https://a.example/', { campaign: 'весна {{template_key}}' }, 'k'),
      'https://a.example/?utm_campaign=%D0%B2%D0%B5%D1%81%D0%BD%D0%B0%20k',
    );
    assert.equal(withUtm('https://a.example/', null, 'k'), 'https://a.example/');
  });
});

describe('people and machines', () => {
  it('User-Agent categories', () => {
    const cases: [string | undefined, string][] = [
      ['Mozilla/5.0', 'apple_proxy'],
      ['Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)', 'google_proxy'],
      ['Mozilla/5.0 (compatible; YandexImageResizer/2.0)', 'yandex_proxy'],
      ['YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html', 'yahoo_proxy'],
      ['Mozilla/5.0 (Windows NT 10.0) Chrome/120 Safari/537.36 BingPreview/1.0b', 'security_scanner'],
      ['Barracuda Sentinel (EE)', 'security_scanner'],
      ['Mimecast Browser Isolation', 'security_scanner'],
      ['Proofpoint URL Defense', 'security_scanner'],
      ['TelegramBot (like TwitterBot)', 'link_preview'],
      ['curl/8.5.0', 'script'],
      ['python-requests/2.31.0', 'script'],
      ['Wget/1.21', 'script'],
      ['Mozilla/5.0 (compatible; Googlebot/2.1)', 'script'],
      ['Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/120.0 Safari/537.36', 'script'],
      ['Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17328)', 'mail_client'],
      [
        'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
        'browser',
      ],
      [
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 YaBrowser/24.6 Safari/537.36',
        'browser',
      ],
      ['', 'empty'],
      [undefined, 'empty'],
      ['SomethingNew/1.0', 'other'],
    ];
    for (const [ua, want] of cases) assert.equal(uaCategory(ua), want, String(ua));
  });

  it('machine rules: HEAD, a machine User-Agent, too soon after sending; else a person', () => {
    const base = { method: 'GET', category: 'browser' as const, at: 100_000, sentAt: 0, minDelayMs: 10_000 };
    assert.equal(machineReason(base), null);
    assert.equal(machineReason({ ...base, method: 'HEAD' }), 'head_request');
    assert.equal(machineReason({ ...base, category: 'apple_proxy' }), 'user_agent');
    assert.equal(machineReason({ ...base, category: 'other' }), null);
    assert.equal(machineReason({ ...base, at: 9_999 }), 'too_soon');
    assert.equal(machineReason({ ...base, at: 10_000 }), null);
  });

  it('keeps the network, not the address', () => {
    assert.equal(truncateIp('203.0.113.77'), '203.0.113.0/24');
    assert.equal(truncateIp('::ffff:198.51.100.9'), '198.51.100.0/24');
    assert.equal(truncateIp('2001:db8:85a3:8d3:1319:8a2e:370:7348'), '2001:db8:85a3::/48');
    assert.equal(truncateIp('2001:db8::1'), '2001:db8:0::/48');
    assert.equal(truncateIp('::1'), '0:0:0::/48');
    assert.equal(truncateIp('fe80::1%eth0'), 'fe80:0:0::/48');
    assert.equal(truncateIp('not an address'), null);
    assert.equal(truncateIp(undefined), null);
  });
});
