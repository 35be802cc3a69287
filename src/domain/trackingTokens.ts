// Signed click and open tokens (SPEC §17), stateless as Keila's: everything the redirect needs (e-mail,
// project, link position, send time, destination) is in the token, and an HMAC over all of it means a
// forged, edited, truncated or another installation's token is refused without reading the database.
// The destination is the one the token was made for, so /c/ can never redirect anywhere else.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * What a new project stores (SPEC §22): no open pixel in transactional e-mails, where it costs spam
 * points and tells nothing a site needs (receipts and passwords are read anyway). Existing projects
 * have no `transactional_opens` and keep tracking opens of every topic as they did.
 */
export const NEW_PROJECT_TRACKING = JSON.stringify({
  opens: true,
  clicks: true,
  utm: null,
  transactional_opens: false,
});

const MAC_BYTES = 16;
/** Longest destination kept in a token; a longer link is left as it is (not tracked). */
export const MAX_TRACKED_URL = 2000;

export interface TrackingKeys {
  /** Signs; the first key. */
  current: Buffer;
  /** Also accepted: the key of SECRET_KEY_PREVIOUS, so links sent before a rotation keep working. */
  previous: Buffer | null;
}

/** The tracking key, derived from the installation secret (never the secret itself: domain separation). */
export function trackingKey(installationSecret: string): Buffer {
  if (!installationSecret) throw new Error('tracking secret is empty');
  return Buffer.from(hkdfSync('sha256', installationSecret, 'edu-gateway', 'egw/tracking/v1', 32));
}

export function trackingKeys(current: string, previous: string | null | undefined): TrackingKeys {
  return { current: trackingKey(current), previous: previous ? trackingKey(previous) : null };
}

export interface ClickClaims {
  emailId: number;
  projectId: number;
  position: number;
  /** Epoch seconds the e-mail was rendered for sending. */
  sentAt: number;
  url: string;
}
export type OpenClaims = Omit<ClickClaims, 'position' | 'url'>;

const b36 = (n: number) => n.toString(36);
const mac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest().subarray(0, MAC_BYTES);
const clickText = (c: ClickClaims) => `click:c1:${c.emailId}:${c.projectId}:${c.position}:${c.sentAt}:${c.url}`;
const openText = (c: OpenClaims) => `open:o1:${c.emailId}:${c.projectId}:${c.sentAt}`;

export function signClick(key: Buffer, c: ClickClaims): string {
  const url = Buffer.from(c.url, 'utf8').toString('base64url');
  return `c1.${b36(c.emailId)}.${b36(c.projectId)}.${b36(c.position)}.${b36(c.sentAt)}.${url}.${mac(key, clickText(c)).toString('base64url')}`;
}

export function signOpen(key: Buffer, c: OpenClaims): string {
  return `o1.${b36(c.emailId)}.${b36(c.projectId)}.${b36(c.sentAt)}.${mac(key, openText(c)).toString('base64url')}`;
}

const ID = '([0-9a-z]{1,11})';
const MAC = '([A-Za-z0-9_-]{22})';
const CLICK = new RegExp(
  `^c1\\.${ID}\\.${ID}\\.([0-9a-z]{1,4})\\.${ID}\\.([A-Za-z0-9_-]{1,${Math.ceil((MAX_TRACKED_URL * 4) / 3) + 4}})\\.${MAC}$`,
);
const OPEN = new RegExp(`^o1\\.${ID}\\.${ID}\\.${ID}\\.${MAC}$`);

function int36(s: string): number | null {
  const n = parseInt(s, 36);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

function verified(keys: TrackingKeys, text: string, given: string): boolean {
  const g = Buffer.from(given, 'base64url');
  if (g.length !== MAC_BYTES || g.toString('base64url') !== given) return false;
  if (timingSafeEqual(g, mac(keys.current, text))) return true;
  return keys.previous !== null && timingSafeEqual(g, mac(keys.previous, text));
}

/** The claims of a genuine click token, or null (malformed, forged, edited, another installation's). */
export function verifyClick(keys: TrackingKeys, token: string): ClickClaims | null {
  if (token.length > 4000) return null;
  const m = CLICK.exec(token);
  if (!m) return null;
  const [emailId, projectId, position, sentAt] = [m[1], m[2], m[3], m[4]].map(int36);
  if (emailId === null || projectId === null || position === null || sentAt === null) return null;
  const raw = Buffer.from(m[5], 'base64url');
  // One encoding per destination: a re-encoded variant is not the token that was sent.
  if (raw.toString('base64url') !== m[5]) return null;
  const url = raw.toString('utf8');
  if (Buffer.from(url, 'utf8').toString('base64url') !== m[5]) return null;
  const claims = { emailId, projectId, position, sentAt, url };
  if (!verified(keys, clickText(claims), m[6])) return null;
  // Only what the rewriter itself makes: an absolute http(s) URL (never javascript:, data: or a path).
  return safeDestination(url) === url ? claims : null;
}

export function verifyOpen(keys: TrackingKeys, token: string): OpenClaims | null {
  if (token.length > 200) return null;
  const m = OPEN.exec(token);
  if (!m) return null;
  const [emailId, projectId, sentAt] = [m[1], m[2], m[3]].map(int36);
  if (emailId === null || projectId === null || sentAt === null) return null;
  const claims = { emailId, projectId, sentAt };
  return verified(keys, openText(claims), m[4]) ? claims : null;
}

/**
 * What a browser would request for this link: the WHATWG URL serialisation (IDN host in punycode,
 * non-ASCII path, query and fragment percent-encoded, existing escapes kept), or null when it is not
 * an absolute http(s) URL. Redirecting to this is going where the original link goes.
 */
export function safeDestination(href: string): string | null {
  let u: URL;
  try {
    u = new URL(href);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if (!u.hostname) return null;
  return u.href;
}

export interface Utm {
  source?: string;
  medium?: string;
  campaign?: string;
}

/**
 * The destination with the project's UTM parameters, only when the link carries none of its own (an
 * author who set one meant the whole set). `{{ template_key }}` in the campaign becomes the template's key.
 * The parameters go at the end of the query; the fragment stays where it was.
 */
export function withUtm(destination: string, utm: Utm | null, templateKey: string): string {
  if (!utm) return destination;
  const pairs = (['source', 'medium', 'campaign'] as const)
    .map((k) => [k, utm[k]?.replace(/\{\{\s*template_key\s*\}\}/g, templateKey).trim()] as const)
    .filter((p): p is readonly [(typeof p)[0], string] => !!p[1]);
  if (pairs.length === 0) return destination;
  const u = new URL(destination);
  for (const name of u.searchParams.keys()) if (name.toLowerCase().startsWith('utm_')) return destination;
  const add = pairs.map(([k, v]) => `utm_${k}=${encodeURIComponent(v)}`).join('&');
  u.search = u.search.length > 1 ? `${u.search}&${add}` : `?${add}`;
  return u.href;
}
