// The tracking step (SPEC §17): one pure function between Liquid and DKIM signing. Every http(s) link of
// the HTML and text parts, but the gateway's own (unsubscribe, preferences), becomes a signed
// `{PUBLIC_URL}/c/{token}`; an open pixel `{PUBLIC_URL}/o/{token}.gif` ends the HTML.
//
// The HTML is read with htmlparser2 (never a regular expression over HTML) and edited by source
// position: only the href attributes that change and the pixel are written, every other byte of the
// author's HTML stays as it was. A planned template's links were found once, by the same parser, when
// its version was planned (linkMarks.ts): then its e-mails are not parsed again. The text part is plain
// text, where a link is a run of non-space characters after http:// or https://.
import { Parser } from 'htmlparser2';
import { escapeAttr, LINK_ELEMENTS, PARSE_OPTIONS, rewriteMarked } from './linkMarks.js';
import type { RenderedParts } from './render.js';
import { TRANSACTIONAL } from '../domain/consent.js';
import { MAX_TRACKED_URL, safeDestination, signClick, signOpen, withUtm, type Utm } from '../domain/trackingTokens.js';

export interface TrackingSettings {
  opens: boolean;
  clicks: boolean;
  utm: Utm | null;
}

export interface TrackingInput {
  publicUrl: string;
  /** The signing key (domain/trackingTokens.ts trackingKey). */
  key: Buffer;
  emailId: number;
  projectId: number;
  templateKey: string;
  /** Epoch ms the e-mail is rendered for sending: hits sooner than the minimum delay are machines'. */
  sentAt: number;
  settings: TrackingSettings;
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** Applies edits (sorted, not overlapping) to the source. */
function applyEdits(source: string, edits: Edit[]): string {
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += source.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + source.slice(at);
}

function makeLinker(i: TrackingInput) {
  const base = i.publicUrl.replace(/\/+$/, '');
  const own = `${base}/`;
  let position = 0;
  const sentAt = Math.floor(i.sentAt / 1000);
  /** The link's new form, or null to leave it as written. */
  return (href: string): string | null => {
    const trimmed = href.trim();
    const destination = safeDestination(trimmed);
    if (destination === null || destination.startsWith(own) || trimmed.startsWith(own)) return null;
    const withParams = withUtm(destination, i.settings.utm, i.templateKey);
    if (!i.settings.clicks || withParams.length > MAX_TRACKED_URL)
      return withParams === destination ? null : withParams;
    const token = signClick(i.key, {
      emailId: i.emailId,
      projectId: i.projectId,
      position: position++,
      sentAt,
      url: withParams,
    });
    return `${base}/c/${token}`;
  };
}

function openPixel(i: TrackingInput): string {
  const token = signOpen(i.key, { emailId: i.emailId, projectId: i.projectId, sentAt: Math.floor(i.sentAt / 1000) });
  const src = `${i.publicUrl.replace(/\/+$/, '')}/o/${token}.gif`;
  return `<img src="${escapeAttr(src)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0">`;
}

function rewriteHtml(html: string, link: (href: string) => string | null, pixel: string | null): string {
  const edits: Edit[] = [];
  let pending: { name: string; value: string; start: number; end: number }[] = [];
  let bodyClose = -1;
  let htmlClose = -1;
  const parser: Parser = new Parser(
    {
      onattribute(name, value) {
        pending.push({ name, value, start: parser.startIndex, end: parser.endIndex });
      },
      onopentag(name) {
        if (LINK_ELEMENTS.has(name)) {
          const href = pending.find((a) => a.name === 'href');
          const next = href ? link(href.value) : null;
          if (href && next !== null) {
            const written = html.slice(href.start, href.start + href.name.length);
            edits.push({ start: href.start, end: href.end, text: `${written}="${escapeAttr(next)}"` });
          }
        }
        pending = [];
      },
      onclosetag(name, implied) {
        if (implied) return;
        if (name === 'body') bodyClose = parser.startIndex;
        if (name === 'html') htmlClose = parser.startIndex;
      },
    },
    PARSE_OPTIONS,
  );
  parser.end(html);
  if (pixel !== null) {
    const at = bodyClose >= 0 ? bodyClose : htmlClose >= 0 ? htmlClose : html.length;
    edits.push({ start: at, end: at, text: pixel });
  }
  edits.sort((a, b) => a.start - b.start);
  return applyEdits(html, edits);
}

// Plain text only (never HTML): a URL runs to the next white space or angle bracket/quote.
const TEXT_URL = /https?:\/\/[^\s<>"'`]+/gi;
const TRAILING = /[.,;:!?]+$/;

/** Trailing punctuation and an unbalanced closing bracket end the sentence, not the link. */
function trimTextUrl(raw: string): string {
  let url = raw.replace(TRAILING, '');
  for (const [open, close] of [
    ['(', ')'],
    ['[', ']'],
  ] as const) {
    while (url.endsWith(close) && url.split(open).length < url.split(close).length) {
      url = url.slice(0, -1).replace(TRAILING, '');
    }
  }
  return url;
}

function rewriteText(text: string, link: (href: string) => string | null): string {
  const edits: Edit[] = [];
  for (const m of text.matchAll(TEXT_URL)) {
    const url = trimTextUrl(m[0]);
    const next = link(url);
    if (next !== null) edits.push({ start: m.index, end: m.index + url.length, text: next });
  }
  return applyEdits(text, edits);
}

/** The parts as sent: links rewritten and the pixel added as the settings ask; the subject untouched. */
export function applyTracking(parts: RenderedParts, i: TrackingInput): RenderedParts {
  const { opens, clicks, utm } = i.settings;
  const { subject, linkMark } = parts;
  // The render's link marks never leave this step, whatever the settings.
  const unmarked = () => (linkMark ? parts.html.replaceAll(linkMark, '') : parts.html);
  if (!opens && !clicks && !utm) return { subject, html: unmarked(), text: parts.text };
  const link = makeLinker(i);
  const pixel = opens && parts.html.trim() !== '' ? openPixel(i) : null;
  const html =
    (linkMark ? rewriteMarked(parts.html, linkMark, link, pixel) : null) ?? rewriteHtml(unmarked(), link, pixel);
  return { subject, html, text: rewriteText(parts.text, link) };
}

/** What the project stores in projects.tracking (JSON); absent members take the defaults. */
export interface StoredTracking {
  opens?: boolean;
  clicks?: boolean;
  utm?: Utm | null;
  /** With `opens`, the pixel also ends transactional e-mails; absent (projects made before issue 39): as `opens`. */
  transactional_opens?: boolean;
}

export function projectTracking(stored: string | null | undefined): Required<StoredTracking> {
  let s: StoredTracking;
  try {
    s = stored ? (JSON.parse(stored) as StoredTracking) : {};
  } catch {
    s = {};
  }
  const opens = s.opens !== false;
  return {
    opens,
    clicks: s.clicks !== false,
    utm: s.utm ?? null,
    transactional_opens: typeof s.transactional_opens === 'boolean' ? s.transactional_opens : opens,
  };
}

/**
 * The settings one e-mail is sent with: the project's, unless its template opts out (documents,
 * passwords, receipts: then nothing of the message is touched, UTM included) or it is a test send.
 */
export function trackingSettings(
  project: { tracking: string | null },
  template: { tracking: boolean },
  email: { is_test: boolean },
  topic: string,
): TrackingSettings {
  if (!template.tracking || email.is_test) return { opens: false, clicks: false, utm: null };
  const t = projectTracking(project.tracking);
  // `opens` is the switch for every topic; `transactional_opens` narrows it for the transactional one.
  return { opens: t.opens && (topic !== TRANSACTIONAL || t.transactional_opens), clicks: t.clicks, utm: t.utm };
}

/**
 * The HTML without the open pixel(s) this installation added: what an administrator's preview shows,
 * so that looking at an e-mail in the admin UI never counts as its addressee opening it.
 */
export function withoutOpenPixel(html: string, publicUrl: string): string {
  const prefix = `${publicUrl.replace(/\/+$/, '')}/o/`;
  const edits: Edit[] = [];
  const parser: Parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'img' && attrs.src?.startsWith(prefix))
          edits.push({ start: parser.startIndex, end: parser.endIndex + 1, text: '' });
      },
    },
    PARSE_OPTIONS,
  );
  parser.end(html);
  return applyEdits(html, edits);
}
