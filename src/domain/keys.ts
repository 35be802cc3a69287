// API key format (SPEC §2): "egw_live_" + 40 base62 characters from a CSPRNG + a 6-character base62
// checksum. The checksum lets the service reject typos and lets secret scanners recognise real keys
// without a database lookup. Stored: SHA-256 of the whole key and last4. With 238 random bits a pepper
// adds nothing against guessing, and a plain hash survives rotating any server secret.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'egw_live_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LEN = 40;
const CHECK_LEN = 6;
const KEY_RE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${SECRET_LEN + CHECK_LEN}}$`);

function randomBase62(len: number): string {
  let out = '';
  while (out.length < len) {
    // Rejection sampling: bytes >= 248 would bias the alphabet (248 = 4 * 62).
    for (const b of randomBytes(len * 2)) {
      if (b < 248 && out.length < len) out += ALPHABET[b % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  const digest = createHash('sha256').update(body).digest();
  let out = '';
  for (let i = 0; i < CHECK_LEN; i++) out += ALPHABET[digest[i] % 62];
  return out;
}

export function generateKey(): string {
  const body = KEY_PREFIX + randomBase62(SECRET_LEN);
  return body + checksum(body);
}

/** Shape and checksum only; says nothing about whether the key exists. */
export function isWellFormedKey(key: string): boolean {
  if (!KEY_RE.test(key)) return false;
  const body = key.slice(0, -CHECK_LEN);
  const a = Buffer.from(checksum(body));
  const b = Buffer.from(key.slice(-CHECK_LEN));
  return timingSafeEqual(a, b);
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

export function last4(key: string): string {
  return key.slice(-4);
}
