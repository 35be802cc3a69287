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

/** The path of a gateway URL (what a browser would request of the app). */
export const pathOf = (url: string) => url.slice(TRACK_PUBLIC_URL.length);
