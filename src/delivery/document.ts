// The HTML of every e-mail is a whole document (SPEC §16): `<!doctype html>`, `<html lang>`,
// `<meta charset="utf-8">`, a `<title>` holding the subject, and the CSS of <style> blocks inlined into
// the elements (Gmail and others drop <style>). A fragment is wrapped; a document (MJML's output, or an
// author's own) keeps its head and gets what it lacks. Positions come from htmlparser2's tokenizer, so
// markup inside comments, scripts or attribute values is never mistaken for a tag.
import { createRequire } from 'node:module';
import type Juice from 'juice';
import { Parser } from 'htmlparser2';

// The five characters that matter in text and quoted attribute values (the subject in <title>, lang).
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c]);

interface Found {
  /** Offsets of `<html …>` (start and end, exclusive), its attributes. */
  html?: { start: number; end: number; attribs: Record<string, string> };
  headOpenEnd?: number;
  title?: { openEnd: number; closeStart: number };
  /** `<meta charset>` itself: MJML writes only the http-equiv form, which SPEC §22 does not count. */
  charset: boolean;
  /** Charset declarations (either form) that name another charset than UTF-8: rewritten, we send UTF-8. */
  wrongCharset: { start: number; end: number; text: string }[];
  doctype: boolean;
}

function scan(source: string): Found {
  const found: Found = { charset: false, wrongCharset: [], doctype: false };
  let titleOpenEnd = -1;
  const parser = new Parser(
    {
      onprocessinginstruction(name) {
        if (name.toLowerCase() === '!doctype') found.doctype = true;
      },
      onopentag(name, attribs) {
        if (name === 'html' && !found.html)
          found.html = { start: parser.startIndex, end: parser.endIndex + 1, attribs };
        else if (name === 'head' && found.headOpenEnd === undefined) found.headOpenEnd = parser.endIndex + 1;
        else if (name === 'title' && titleOpenEnd < 0) titleOpenEnd = parser.endIndex + 1;
        else if (name === 'meta' && 'charset' in attribs) {
          found.charset = true;
          if (!/^utf-?8$/i.test(attribs.charset.trim()))
            found.wrongCharset.push({
              start: parser.startIndex,
              end: parser.endIndex + 1,
              text: '<meta charset="utf-8">',
            });
        } else if (
          name === 'meta' &&
          attribs['http-equiv']?.toLowerCase() === 'content-type' &&
          !/charset\s*=\s*["']?utf-?8\b/i.test(attribs.content ?? '')
        )
          found.wrongCharset.push({
            start: parser.startIndex,
            end: parser.endIndex + 1,
            text: '<meta http-equiv="Content-Type" content="text/html; charset=utf-8">',
          });
      },
      onclosetag(name, implied) {
        if (name === 'title' && titleOpenEnd >= 0 && !found.title && !implied)
          found.title = { openEnd: titleOpenEnd, closeStart: parser.startIndex };
      },
    },
    { decodeEntities: false, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(source);
  return found;
}

// What a wrapped fragment's head says besides its charset, as mail-client templates (MJML's among them)
// say it: the phone's width; Outlook on Windows renders with its current engine and at 96 dpi (else a
// 600 px table is scaled on a high-DPI screen); iOS Mail does not shrink the letter; light colours only,
// so a dark-mode client does not invert the header's blue. The body's margins and text-size adjustment
// are inline, where Gmail keeps them.
const MAIL_HEAD =
  '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
  '<meta http-equiv="X-UA-Compatible" content="IE=edge">\n' +
  '<meta name="x-apple-disable-message-reformatting">\n' +
  '<meta name="color-scheme" content="light">\n<meta name="supported-color-schemes" content="light">\n';
const OUTLOOK_DPI =
  '<!--[if mso]><xml><o:OfficeDocumentSettings><o:AllowPNG/><o:PixelsPerInch>96</o:PixelsPerInch>' +
  '</o:OfficeDocumentSettings></xml><![endif]-->\n';

const attr = (k: string, v: string) => (v === '' ? ` ${k}` : ` ${k}="${escapeHtml(v)}"`);

/** The rendered HTML as a whole document in the project's language, with the subject as its title. */
export function wholeDocument(html: string, subject: string, lang: string): string {
  const title = escapeHtml(subject);
  const f = scan(html);
  if (!f.html) {
    return (
      `<!doctype html>\n<html lang="${escapeHtml(lang)}" xmlns:o="urn:schemas-microsoft-com:office:office">\n` +
      `<head>\n<meta charset="utf-8">\n${MAIL_HEAD}<title>${title}</title>\n${OUTLOOK_DPI}</head>\n` +
      `<body style="margin:0;padding:0;-webkit-text-size-adjust:100%;-ms-text-size-adjust:100%">\n${html}\n</body>\n</html>\n`
    );
  }
  // Edits from the end backwards, so earlier offsets stay valid.
  const edits: { at: number; to: number; text: string }[] = [];
  const head = `${f.charset ? '' : '\n<meta charset="utf-8">'}${f.title ? '' : `\n<title>${title}</title>`}`;
  if (f.title) edits.push({ at: f.title.openEnd, to: f.title.closeStart, text: title });
  for (const w of f.wrongCharset) edits.push({ at: w.start, to: w.end, text: w.text });
  if (f.headOpenEnd !== undefined) {
    if (head) edits.push({ at: f.headOpenEnd, to: f.headOpenEnd, text: head });
  } else {
    edits.push({ at: f.html.end, to: f.html.end, text: `\n<head>${head}\n</head>` });
  }
  const attribs = { ...f.html.attribs, lang };
  const open = `<html${Object.entries(attribs)
    .map(([k, v]) => attr(k, v))
    .join('')}>`;
  edits.push({ at: f.html.start, to: f.html.end, text: open });
  let out = html;
  for (const e of edits.sort((a, b) => b.at - a.at)) out = out.slice(0, e.at) + e.text + out.slice(e.to);
  return f.doctype ? out : `<!doctype html>\n${out}`;
}

/** <style> rules inlined into the elements; media queries stay in a <style> block (juice). */
// juice (with cheerio under it, ~25 MiB resident) is loaded with the first e-mail rendered, not at start:
// an API-only process may never render one (issue 29). require keeps rendering synchronous.
const require = createRequire(import.meta.url);
let juice: typeof Juice | null = null;

/** Loads juice now (a render thread does before a render's CPU budget starts: loading is not rendering). */
export function loadInlineCss(): typeof Juice {
  return (juice ??= require('juice') as typeof Juice);
}

export function inlineCss(html: string): string {
  return loadInlineCss()(html, { preserveMediaQueries: true, preserveFontFaces: true, applyWidthAttributes: true });
}
