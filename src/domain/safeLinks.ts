// Links in e-mails (SPEC §21 "Links"): after rendering, an `href` or `src` whose value is not http:,
// https:, mailto: or tel: is dropped from its element (the element and its text stay), so a request
// member printed into `<a href="{{ doc_url }}">` cannot make a `javascript:` or `data:` link. And the
// save-time warning: a template that lets a request member decide the whole of an `href`.
import { memberOf, SUPPLIED_MEMBERS } from './templateContract.js';

const ALLOWED_SCHEMES = /^(https?|mailto|tel):/i;

/** A start tag, its attributes matched whole (quoted values may hold `>`). */
const START_TAG = /<([a-zA-Z][\w:-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)(\s*\/?)>/g;
const LINK_ATTRIBUTE = /(\s+)((?:xlink:)?href|src)(\s*=\s*)("([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/gi;

const NAMED: Record<string, string> = { colon: ':', tab: '\t', newline: '\n', sol: '/', lpar: '(', rpar: ')' };

/** The value as a browser reads it: character references decoded (`javascript&#58;` is `javascript:`). */
function decode(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);?/gi, (all, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : '';
    }
    if (ref.toLowerCase() === 'amp') return '&';
    return NAMED[ref.toLowerCase()] ?? all;
  });
}

/** Whether a link's value may stay: browsers ignore ASCII whitespace and controls inside a scheme. */
export function isSafeLink(raw: string): boolean {
  // eslint-disable-next-line no-control-regex
  const value = decode(raw).replace(/[\u0000-\u0020\u007f]/g, '');
  return ALLOWED_SCHEMES.test(value);
}

/** The HTML with every unsafe `href`/`src` attribute removed (but those whose raw value `keep` says to keep). */
export function dropUnsafeLinks(html: string, keep?: (raw: string) => boolean): string {
  return html.replace(START_TAG, (tag, name: string, attributes: string, end: string) => {
    let changed = false;
    const kept = attributes.replace(
      LINK_ATTRIBUTE,
      (all, _space: string, _attr: string, _eq: string, _q: string, dq?: string, sq?: string, bare?: string) => {
        const raw = dq ?? sq ?? bare ?? '';
        if (isSafeLink(raw) || keep?.(raw)) return all;
        changed = true;
        return '';
      },
    );
    return changed ? `<${name}${kept}${end}>` : tag;
  });
}

/** An `href` value that begins with a Liquid output: the member printed there decides the link's scheme. */
const HREF_FROM_MEMBER = /\bhref\s*=\s*["']?\s*\{\{-?\s*([A-Za-z_][\w.]*)/g;

/** The request members a template puts at the start of an `href` (they must be URLs), in order. */
export function membersInHref(html: string): string[] {
  const out = new Set<string>();
  for (const m of html.matchAll(HREF_FROM_MEMBER)) {
    const path = m[1].split('.');
    if (SUPPLIED_MEMBERS.has(path[0])) continue;
    const member = memberOf(path);
    if (member) out.add(member);
  }
  return [...out];
}
