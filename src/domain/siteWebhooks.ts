// Rules of webhook delivery (SPEC §13), as plain functions: when to retry, when to give up, when an
// endpoint is disabled, which addresses are refused, and what a delivery's body is.
import { BlockList, isIP } from 'node:net';
import type { ErrorReason } from './errorCatalog.js';
import type { WebhookKind } from './statuses.js';

const HOUR = 3_600_000;
/** A delivery is retried for 3 days from its creation (SPEC: at least 24 hours), then it is failed. */
export const RETRY_WINDOW_MS = 72 * HOUR;
/** An endpoint whose attempts have all failed for this long is disabled. */
export const DISABLE_AFTER_MS = 72 * HOUR;
/** The longest wait between two attempts, before jitter. */
export const MAX_DELAY_MS = 6 * HOUR;

/**
 * The wait before attempt `attempts + 1`: base·2^(attempts-1), at most 6 hours, times a jitter in
 * [0.5, 1.5) so endpoints that failed together do not all come back at the same instant.
 */
export function webhookBackoff(attempts: number, baseMs: number, random: () => number = Math.random): number {
  const exp = Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.max(0, Math.min(attempts - 1, 30)));
  return Math.round(exp * (0.5 + random()));
}

export type AttemptNext = { status: 'delivered' } | { status: 'pending'; dueAt: number } | { status: 'failed' };

/** What follows an attempt: a 2xx ends it; otherwise retried until the window is over. */
export function afterAttempt(o: {
  ok: boolean;
  now: number;
  createdAt: number;
  attempts: number;
  baseMs: number;
  random?: () => number;
}): AttemptNext {
  if (o.ok) return { status: 'delivered' };
  const dueAt = o.now + webhookBackoff(o.attempts, o.baseMs, o.random);
  return dueAt - o.createdAt > RETRY_WINDOW_MS ? { status: 'failed' } : { status: 'pending', dueAt };
}

/** True when this failure means the endpoint has failed for DISABLE_AFTER_MS without a success. */
export function shouldDisable(failingSince: number | null, now: number): boolean {
  return failingSince !== null && now - Number(failingSince) >= DISABLE_AFTER_MS;
}

// Loopback, private, link-local, CGNAT, multicast and reserved ranges: nothing a site's public
// endpoint lives on, and where an installation's own services (metadata, databases) do.
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

/** True for an address a webhook may not be sent to (unless WEBHOOKS_ALLOW_PRIVATE). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1], 'ipv4');
  return blocked.check(address, 'ipv6');
}

/** Why a URL is refused: the reason of the error catalogue and the words of `invalid_fields.url`. */
export interface UrlProblem {
  reason: ErrorReason;
  text: string;
}

/** Problems of a URL as entered, before any name is resolved; null when it may be saved. */
export function urlProblem(raw: string): UrlProblem | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { reason: 'webhook_url_invalid', text: 'is not a URL' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { reason: 'webhook_url_scheme', text: 'must be an http:// or https:// URL' };
  if (u.username || u.password)
    return { reason: 'webhook_url_credentials', text: 'must not carry a user name or password' };
  if (!u.hostname) return { reason: 'webhook_url_no_host', text: 'has no host' };
  return null;
}

/** The host of a URL without IPv6 brackets. */
export const hostOf = (u: URL): string => u.hostname.replace(/^\[|\]$/g, '');

/** The signed body: the type, when it happened, and the data with the delivery's sequence number. */
export function webhookBody(o: {
  kind: WebhookKind;
  createdAt: number;
  sequence: number;
  data: Record<string, unknown>;
}): string {
  return JSON.stringify({
    type: o.kind,
    timestamp: new Date(Number(o.createdAt)).toISOString(),
    data: { ...o.data, sequence: o.sequence },
  });
}
