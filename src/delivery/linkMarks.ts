// Where the click-tracking step (tracking.ts) finds its links, found once per template version (issue 38):
// the render plan (renderPlan.ts) marks each link of its inlined source, and per e-mail the tracking step
// finds the marks with indexOf instead of reading the whole rendered HTML with htmlparser2 (~60 µs an
// e-mail, most of the step's cost).
//
// The marks stand for what the parser would find: in a planned template Liquid neither adds nor removes
// an element or an attribute (outputs are escaped and never stand in a tag; if/for blocks hold whole
// elements), so the links of an e-mail are its source's links, in the same order; the parser of both is
// one configuration (PARSE_OPTIONS). Only two steps change the HTML after the render: the unsafe-link
// step, which may drop a marked href (the mark then stands alone and is skipped), and SPEC §22's footer,
// whose links are the gateway's own (never rewritten). The open pixel goes before `</body>`, which the plan
// checks the source has once, as the parser reads it.
import { Parser } from 'htmlparser2';

export const PARSE_OPTIONS = {
  decodeEntities: true,
  lowerCaseTags: true,
  lowerCaseAttributeNames: true,
  recognizeSelfClosing: true,
} as const;

/** The elements whose href is a link. */
export const LINK_ELEMENTS = new Set(['a', 'area']);
const BODY_CLOSE = '</body>';

/** An attribute value as the tracking step writes it between double quotes. */
export const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
/** An href as the inlined source writes it, after the space that parts it from what precedes it. */
const HREF = ' href="';

/**
 * The source with `mark` written before the href of each link (`<a MARK href="…">`), or null when its
 * links cannot be marked safely (then the tracking step reads each e-mail with the parser, as before).
 * `mark` is a bare attribute with its leading space (` egw…_l`, a per-plan nonce): the unsafe-link step
 * keeps it when it drops the href after it, and removing it gives back the bytes of the unmarked tag.
 */
export function markLinks(source: string, mark: string): string | null {
  const hrefs: number[] = [];
  let pending: { name: string; start: number }[] = [];
  let bodyClose = -1;
  let bodies = 0;
  const parser: Parser = new Parser(
    {
      onattribute(name) {
        pending.push({ name, start: parser.startIndex });
      },
      onopentag(name) {
        // The first href, as the tracking step's parser takes it.
        const href = LINK_ELEMENTS.has(name) ? pending.find((a) => a.name === 'href') : undefined;
        if (href) hrefs.push(href.start);
        pending = [];
      },
      onclosetag(name, implied) {
        if (name !== 'body' || implied) return;
        bodyClose = parser.startIndex;
        bodies++;
      },
    },
    PARSE_OPTIONS,
  );
  parser.end(source);
  if (bodies !== 1 || source.indexOf(BODY_CLOSE) !== bodyClose) return null;
  if (source.toLowerCase().split('</body').length !== 2) return null;
  let out = '';
  let last = 0;
  for (const at of hrefs) {
    // The inlined source writes every attribute `name="value"`; any other form is left to the parser.
    if (!source.startsWith(HREF, at - 1)) return null;
    out += source.slice(last, at - 1) + mark;
    last = at - 1;
  }
  return out + source.slice(last);
}

/** One parser, reused, that reads an attribute value as the tracking step's parser does (entities). */
let decoded = '';
const decoder = new Parser(
  {
    onattribute(_name, value) {
      decoded = value;
    },
  },
  PARSE_OPTIONS,
);

function attributeValue(raw: string): string {
  if (!raw.includes('&')) return raw;
  decoded = '';
  decoder.reset();
  decoder.end(`<a href="${raw}">`);
  return decoded;
}

/**
 * The marked HTML with each marked link given `link`'s new form (null: left as written), the pixel put
 * before `</body>` and every mark removed; null when the HTML has no `</body>` (never expected: then the
 * caller reads it with the parser, and `link` has not been called).
 */
export function rewriteMarked(
  html: string,
  mark: string,
  link: (href: string) => string | null,
  pixel: string | null,
): string | null {
  if (pixel !== null && !html.includes(BODY_CLOSE)) return null;
  let out = '';
  let last = 0;
  for (let at = html.indexOf(mark); at >= 0; at = html.indexOf(mark, last)) {
    out += html.slice(last, at);
    last = at + mark.length;
    // A mark alone: the unsafe-link step dropped its href.
    if (!html.startsWith(HREF, last)) continue;
    const end = html.indexOf('"', last + HREF.length);
    if (end < 0) continue;
    const next = link(attributeValue(html.slice(last + HREF.length, end)));
    if (next === null) continue;
    out += ` href="${escapeAttr(next)}"`;
    last = end + 1;
  }
  out += html.slice(last);
  if (pixel === null) return out;
  const at = out.indexOf(BODY_CLOSE);
  return out.slice(0, at) + pixel + out.slice(at);
}
