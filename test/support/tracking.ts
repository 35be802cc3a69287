// Helpers of the tracking tests: the links and images of a sent HTML part, read with the same parser the
// gateway uses, and a stack of real components (app, SMTP server, workers) around one database.
import { Parser } from 'htmlparser2';

export const TRACK_PUBLIC_URL = 'https://gw.example.test';
export const TRACK_SECRET = 'tracking-test-secret-0123456789abcdef';

/** hrefs of <a>/<area> and srcs of <img>, in document order. */
export function linksOf(html: string): { hrefs: string[]; images: string[] } {
  const hrefs: string[] = [];
  const images: string[] = [];
  const p = new Parser({
    onopentag(name, attrs) {
      if ((name === 'a' || name === 'area') && attrs.href !== undefined) hrefs.push(attrs.href);
      if (name === 'img' && attrs.src !== undefined) images.push(attrs.src);
    },
  });
  p.end(html);
  return { hrefs, images };
}

/**
 * The document as a reader's parser sees it, links aside: tags with their attributes, texts and comments,
 * with each link's href replaced by its position and the open pixel left out. Two renderings of one
 * template that differ only in tracking have the same shape (issue 25 makes e-mails whole documents with
 * their CSS inlined, which re-serialises the author's markup, so the comparison is by structure).
 */
export function shapeOf(html: string): string {
  const out: string[] = [];
  let link = 0;
  const p = new Parser({
    onopentag(name, attrs) {
      if (name === 'img' && attrs.src?.startsWith(`${TRACK_PUBLIC_URL}/o/`)) return;
      const a = { ...attrs };
      if ((name === 'a' || name === 'area') && a.href !== undefined) a.href = `#link${link++}`;
      out.push(
        `<${name}${Object.entries(a)
          .map(([k, v]) => ` ${k}=${JSON.stringify(v)}`)
          .join('')}>`,
      );
    },
    ontext: (t) => void out.push(t),
    oncomment: (c) => void out.push(`<!--${c}-->`),
    onclosetag(name, implied) {
      if (name !== 'img' && !implied) out.push(`</${name}>`);
    },
  });
  p.end(html);
  return out.join('');
}

/** The path of a gateway URL (what a browser would request of the app). */
export const pathOf = (url: string) => url.slice(TRACK_PUBLIC_URL.length);
