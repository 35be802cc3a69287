// VERP return paths (SPEC §12): each e-mail's envelope sender is `b-<id>-<signature>@BOUNCE_DOMAIN`, so
// a bounce names the e-mail it is about even when it quotes nothing of it. The signature (an HMAC of the
// id under the installation secret) makes the listener accept only addresses the gateway minted: nobody
// can use it to inject reports about arbitrary e-mails, nor as a relay.
import { createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE_CHARS = 16;

function signature(secret: string, emailId: number): string {
  // Lower-case hex: some MTAs lower-case the local part of the return path.
  return createHmac('sha256', `verp:${secret}`).update(String(emailId)).digest('hex').slice(0, SIGNATURE_CHARS);
}

export function verpAddress(emailId: number, secret: string, domain: string): string {
  return `b-${emailId}-${signature(secret, emailId)}@${domain.toLowerCase()}`;
}

/** The e-mail id a signed address of the bounce domain stands for; null for any other address. */
export function parseVerpAddress(address: string, secret: string, domain: string): number | null {
  const m = /^b-([1-9]\d{0,15})-([0-9a-f]+)@(.+)$/i.exec(address.trim());
  if (!m || m[3].toLowerCase() !== domain.toLowerCase()) return null;
  const id = Number(m[1]);
  if (!Number.isSafeInteger(id)) return null;
  const given = Buffer.from(m[2].toLowerCase());
  const expected = Buffer.from(signature(secret, id));
  return given.length === expected.length && timingSafeEqual(given, expected) ? id : null;
}
