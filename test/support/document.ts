// The body of a whole HTML document as e-mails now carry it (SPEC §16), for assertions on the content
// alone; parsed with htmlparser2, so the assertion does not depend on the head's formatting.
import { DomUtils, parseDocument } from 'htmlparser2';

export function bodyOf(html: string): string {
  const doc = parseDocument(html);
  const body = DomUtils.findOne((e) => e.name === 'body', doc.children);
  if (!body) throw new Error(`not a whole document: ${html.slice(0, 200)}`);
  return DomUtils.getInnerHTML(body, { encodeEntities: 'utf8' }).trim();
}

/** The document's language, title and charset, as a reader (or a test) sees them. */
export function documentHead(html: string): { lang: string | null; title: string | null; charset: string | null } {
  const doc = parseDocument(html);
  const el = (name: string) => DomUtils.findOne((e) => e.name === name, doc.children);
  const meta = DomUtils.findOne((e) => e.name === 'meta' && 'charset' in e.attribs, doc.children);
  const title = el('title');
  return {
    lang: el('html')?.attribs.lang ?? null,
    title: title ? DomUtils.textContent(title) : null,
    charset: meta?.attribs.charset ?? null,
  };
}
