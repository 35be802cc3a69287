// The render plan of a template version (issue 38): the whole-document step and the CSS inlining done
// once on the Liquid source instead of on every e-mail's output. Every Liquid tag and output is swapped
// for an opaque placeholder, the placeholders' document is made whole and inlined (juice), and the
// placeholders are swapped back: per e-mail only Liquid runs on that source, then the unsafe-link step
// and the subject as <title>.
//
// The result equals the per-e-mail path only when inlining cannot depend on what Liquid prints. So a
// template is planned only when (else buildPlan returns null and each e-mail takes the per-e-mail path):
// - every output and tag stands in text or inside an attribute value, never in a tag, a comment, <style>,
//   <script> or <title>, nor in `style`, `class` or `id` (which selectors and inlining read);
// - no output prints unescaped HTML (`| raw`), and only tags that print nothing themselves are used
//   (if/unless/case/for/assign: no raw, capture, echo, liquid, comment, cycle, increment…);
// - each if/for/case opens, branches and closes inside one element (what a branch holds is balanced),
//   and holds none of the elements the whole-document step or the inlining reads (html, head, title,
//   meta, body, style, link);
// - with such blocks, no selector depends on an element's siblings (`:first-child`, `+`, `~`, …), and no
//   selector reads an attribute whose value Liquid prints, nor href/src (the unsafe-link step drops a
//   link Liquid prints before inlining in the per-e-mail path, after it here);
// - the layout prints `{{ content }}` once, outside any block, and every placeholder survives inlining
//   once and in order.
// The plan also marks where each link's href stands, for the tracking step (linkMarks.ts).
import { randomBytes } from 'node:crypto';
import { Parser } from 'htmlparser2';
import { TokenKind, Tokenizer, type Liquid, type TagToken, type TopLevelToken } from 'liquidjs';

/** liquidjs does not export its OutputToken type; this is the member read here. */
type OutputToken = TopLevelToken & { content: string };
import { inlineCss, wholeDocument } from './document.js';
import { markLinks } from './linkMarks.js';
import { dropUnsafeLinks } from '../domain/safeLinks.js';

export interface RenderPlan {
  /** The template's HTML source with the layout's CSS inlined (Liquid intact). */
  html: string;
  /** The layout's HTML source, inlined, printing `{{ content }}` where the template goes; null: none. */
  layoutHtml: string | null;
  /** Stands where the escaped subject goes (the <title>). */
  title: string;
  /**
   * Opens every attribute made of Liquid alone (null: none). Printed empty, the per-e-mail path's
   * serializer writes such an attribute bare (`alt`, not `alt=""`); renderEmail does the same with it.
   */
  bare: string | null;
  /**
   * Stands before the href of every link of the source (linkMarks.ts), so the tracking step finds them
   * without parsing each e-mail; null: not marked (the tracking step parses).
   */
  links: string | null;
}

const OPENS = new Set(['if', 'unless', 'case', 'for']);
const MIDDLES = new Set(['elsif', 'else', 'when']);
const ENDS: Record<string, string> = { endif: 'if', endunless: 'unless', endcase: 'case', endfor: 'for' };
const STANDALONE = new Set(['assign', 'break', 'continue']);
const SIBLING_SELECTOR = /:(?:nth|first|last|only|empty|not|has|is|where)|[+~]/i;
const LINK_ATTRIBUTES = new Set(['href', 'src', 'xlink:href']);
/** Elements the whole-document step or the inlining reads: never inside an if/for (shown or not by data). */
const DOCUMENT_ELEMENTS = new Set(['html', 'head', 'title', 'meta', 'body', 'style', 'link']);

interface Construct {
  text: string;
  /** 'out', a block role, or 'plain' (assign, break, continue). */
  role: 'out' | 'open' | 'middle' | 'end' | 'plain';
  name: string;
}

class Unplannable extends Error {}

function constructsOf(engine: Liquid, source: string): (string | Construct)[] {
  const tokens: TopLevelToken[] = new Tokenizer(source, engine.options.operators).readTopLevelTokens(engine.options);
  const pieces: (string | Construct)[] = [];
  for (const t of tokens) {
    const text = source.slice(t.begin, t.end);
    if (t.kind === TokenKind.HTML) pieces.push(text);
    else if (t.kind === TokenKind.Output) {
      if (/\|\s*raw\b/.test((t as OutputToken).content)) throw new Unplannable('raw output');
      pieces.push({ text, role: 'out', name: (t as OutputToken).content.trim() });
    } else {
      const name = (t as TagToken).name;
      const role = OPENS.has(name)
        ? 'open'
        : MIDDLES.has(name)
          ? 'middle'
          : name in ENDS
            ? 'end'
            : STANDALONE.has(name)
              ? 'plain'
              : null;
      if (!role) throw new Unplannable(`tag ${name}`);
      pieces.push({ text, role, name });
    }
  }
  return pieces;
}

interface Seen {
  /** Where it stands: an element's id (text) or an attribute's. */
  where: string;
  count: number;
}

/** Builds the plan, or null when the template cannot be planned safely (see the file's comment). */
export function buildPlan(engine: Liquid, templateHtml: string, layoutHtml: string | null, lang: string) {
  try {
    return plan(engine, templateHtml, layoutHtml, lang);
  } catch (err) {
    if (err instanceof Unplannable) return null;
    throw err;
  }
}

function plan(engine: Liquid, templateHtml: string, layoutHtml: string | null, lang: string): RenderPlan {
  const nonce = `egw${randomBytes(6).toString('hex')}`;
  const all: Construct[] = [];
  const mark = (i: number | string) => `${nonce}_${i}_`;
  const protect = (pieces: (string | Construct)[]) =>
    pieces.map((p) => (typeof p === 'string' ? p : mark(all.push(p) - 1))).join('');

  const template = constructsOf(engine, templateHtml);
  let skeleton: string;
  let contentAt = -1;
  let afterAt = -1;
  if (layoutHtml === null) skeleton = protect(template);
  else {
    const layout = constructsOf(engine, layoutHtml);
    let depth = 0;
    const at: number[] = [];
    layout.forEach((p, i) => {
      if (typeof p === 'string') return;
      if (p.role === 'open') depth++;
      if (p.role === 'end') depth--;
      if (p.name === 'content' || (p.role === 'out' && /\bcontent\b/.test(p.name))) at.push(depth === 0 ? i : -1);
    });
    if (at.length !== 1 || at[0] < 0 || (layout[at[0]] as Construct).name !== 'content')
      throw new Unplannable('content');
    const before = protect(layout.slice(0, at[0]));
    contentAt = all.push(layout[at[0]] as Construct) - 1;
    const body = protect(template);
    afterAt = all.length;
    const after = protect(layout.slice(at[0] + 1));
    // The template between two markers, so the inlined source splits back into layout and template.
    skeleton = `${before}${mark('b')}${body}${mark('e')}${after}`;
  }
  const title = mark('t');
  // Static unsafe links dropped before inlining, as the per-e-mail path does (an empty href would be
  // written bare by it, and then not seen by the unsafe-link step); those Liquid prints, per e-mail.
  const document = wholeDocument(
    dropUnsafeLinks(skeleton, (raw) => raw.includes(nonce)),
    title,
    lang,
  );
  const bareAt = new Set<string>();
  const seen = inspect(document, nonce, all, bareAt);
  const bare = bareAt.size ? `${nonce}_a_` : null;
  checkBlocks(all, seen, layoutHtml !== null ? contentAt : -1);

  const inlinedOnly = inlineCss(document);
  const linkMark = ` ${nonce}_l`;
  const marked = markLinks(inlinedOnly, linkMark);
  const inlined = marked ?? inlinedOnly;
  const links = marked === null ? null : linkMark;
  // Every placeholder once and in order (the template's markers where the content stood); then the
  // Liquid put back.
  const pattern = new RegExp(`${nonce}_(\\d+|[bet])_`, 'g');
  let next = 0;
  let out = '';
  let last = 0;
  let template0 = -1;
  let template1 = -1;
  let titles = 0;
  for (const m of inlined.matchAll(pattern)) {
    const id = m[1];
    out += inlined.slice(last, m.index);
    last = m.index + m[0].length;
    if (id === 't') {
      titles++;
      out += m[0];
    } else if (id === 'b') {
      if (next !== contentAt || template0 >= 0) throw new Unplannable('order');
      template0 = out.length;
      next++;
    } else if (id === 'e') {
      if (next !== afterAt || template1 >= 0) throw new Unplannable('order');
      template1 = out.length;
    } else {
      if (Number(id) !== next) throw new Unplannable('order');
      if (bareAt.has(id)) out += bare;
      out += all[next++].text;
    }
  }
  out += inlined.slice(last);
  if (titles !== 1 || next !== all.length) throw new Unplannable('lost placeholder');
  if (layoutHtml === null) return { html: out, layoutHtml: null, title, bare, links };
  if (template0 < 0 || template1 < template0) throw new Unplannable('markers');
  const html = out.slice(template0, template1);
  const layoutOut = out.slice(0, template0) + all[contentAt].text + out.slice(template1);
  return { html, layoutHtml: layoutOut, title, bare, links };
}

/** Where each placeholder stands in the document; throws when one stands where inlining could read it. */
function inspect(document: string, nonce: string, all: Construct[], bare: Set<string>): Map<string, Seen> {
  const find = new RegExp(`${nonce}_(\\d+|[bet])_`, 'g');
  const seen = new Map<string, Seen>();
  /** if/for/case blocks open at this point of the document. */
  let depth = 0;
  const note = (where: string, s: string) => {
    for (const m of s.matchAll(find)) {
      const role = /^\d+$/.test(m[1]) ? all[Number(m[1])].role : null;
      if (role === 'open') depth++;
      if (role === 'end') depth--;
      const prev = seen.get(m[1]);
      if (prev) prev.count++;
      else seen.set(m[1], { where, count: 1 });
    }
  };
  const stack: string[] = ['root'];
  let elements = 0;
  let attributes = 0;
  const attrNames = new Set<string>();
  let css = '';
  let hasBlocks = false;
  for (const c of all) if (c.role !== 'out' && c.role !== 'plain') hasBlocks = true;
  const openNames: string[] = [];
  const parser = new Parser(
    {
      onopentagname(name) {
        if (name.includes(nonce)) throw new Unplannable('in a tag name');
      },
      onattribute(name, value) {
        if (name.includes(nonce)) throw new Unplannable('in a tag');
        if (!value.includes(nonce)) return;
        if (name === 'style' || name === 'class' || name === 'id') throw new Unplannable(`in ${name}`);
        if (!LINK_ATTRIBUTES.has(name) && value.replace(find, '') === '') bare.add(/^\S+?_(\d+)_/.exec(value)![1]);
        attrNames.add(name);
        note(`a${attributes++}`, value);
      },
      onopentag(name) {
        if (depth > 0 && DOCUMENT_ELEMENTS.has(name)) throw new Unplannable(`<${name}> inside a block`);
        stack.push(`e${elements++}`);
        openNames.push(name);
      },
      onclosetag() {
        stack.pop();
        openNames.pop();
      },
      ontext(text) {
        const inside = openNames.at(-1);
        if (inside === 'style') css += text;
        if (!text.includes(nonce)) return;
        if (inside === 'title') {
          // Only the subject's own placeholder may stand in the title.
          if (text.replace(new RegExp(`${nonce}_t_`, 'g'), '').includes(nonce)) throw new Unplannable('in title');
        } else if (inside === 'style' || inside === 'script' || inside === 'textarea')
          throw new Unplannable(`in ${inside}`);
        note(stack.at(-1)!, text);
      },
      oncomment(text) {
        if (text.includes(nonce)) throw new Unplannable('in a comment');
      },
      onprocessinginstruction(_name, data) {
        if (data.includes(nonce)) throw new Unplannable('in a declaration');
      },
    },
    { decodeEntities: false, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(document);
  for (const [, s] of seen) if (s.count !== 1) throw new Unplannable('twice');
  if (hasBlocks && SIBLING_SELECTOR.test(css)) throw new Unplannable('sibling selectors');
  // An unsafe link Liquid prints is dropped before inlining in the per-e-mail path and after it here.
  for (const m of css.matchAll(/\[\s*([\w:-]+)/g)) {
    const name = m[1].toLowerCase();
    if (attrNames.has(name) || LINK_ATTRIBUTES.has(name)) throw new Unplannable('attribute selector');
  }
  return seen;
}

/** Each block's opening, branches and end stand in one element (or one attribute). */
function checkBlocks(all: Construct[], seen: Map<string, Seen>, contentAt: number): void {
  const where = (i: number | string) => {
    const s = seen.get(String(i));
    if (!s) throw new Unplannable('lost');
    return s.where;
  };
  const stack: { name: string; where: string }[] = [];
  all.forEach((c, i) => {
    if (i === contentAt) {
      if (where('b') !== where('e') || stack.length) throw new Unplannable('template not balanced');
      return;
    }
    const w = where(i);
    if (c.role === 'open') stack.push({ name: c.name, where: w });
    else if (c.role === 'middle' || c.role === 'end') {
      const top = stack.at(-1);
      if (!top || top.where !== w) throw new Unplannable('block spans elements');
      if (c.role === 'end') {
        if (ENDS[c.name] !== top.name) throw new Unplannable('block mismatch');
        stack.pop();
      }
    }
  });
  if (stack.length) throw new Unplannable('open block');
}
