// Administrator passwords (SPEC §14): scrypt from node:crypto, parameters in docs/decisions.md. The
// parameters are stored with each hash (scrypt$N$r$p$salt$hash) so they can be raised later without
// invalidating existing passwords.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { ErrorParams, ErrorReason, Said } from '../errors.js';

export const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keyLength: 32, saltBytes: 16 } as const;
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 1000;

// The most common passwords of public breach lists that are long enough to pass the length rule; a
// small list on purpose: the length rule does most of the work.
const COMMON = new Set([
  '1234567890',
  '12345678910',
  '123456789a',
  '0123456789',
  '1q2w3e4r5t',
  '1qaz2wsx3edc',
  'qwertyuiop',
  'qwerty1234',
  'qwerty123456',
  'password12',
  'password123',
  'password1234',
  'passw0rd123',
  'iloveyou12',
  'administrator',
  'admin12345',
  'admin123456',
  'letmein123',
  'welcome123',
  'changeme123',
  'abcdefghij',
  'abc1234567',
  'zaq12wsxcde',
  'asdfghjkl1',
  'qazwsxedcrfv',
  '1111111111',
  '0000000000',
  'йцукенгшщз',
  'пароль1234',
  'parol12345',
]);

/** Why a password is refused (the reason of the error catalogue and the field's words), or null when acceptable. */
export function passwordProblem(password: string, email?: string): { said: Said; text: string } | null {
  const problem = (reason: ErrorReason, text: string, params: ErrorParams = {}) => ({
    said: { reason, params: { field: 'password', ...params } },
    text,
  });
  if ([...password].length < PASSWORD_MIN_LENGTH)
    return problem('password_too_short', `must be at least ${PASSWORD_MIN_LENGTH} characters long`, {
      min: PASSWORD_MIN_LENGTH,
    });
  if (password.length > PASSWORD_MAX_LENGTH)
    return problem('password_too_long', `must be at most ${PASSWORD_MAX_LENGTH} characters long`, {
      max: PASSWORD_MAX_LENGTH,
    });
  const lower = password.toLowerCase();
  if (COMMON.has(lower) || /^(.)\1+$/.test(password))
    return problem('password_too_common', 'is too common; choose another');
  if (email && lower === email.toLowerCase()) return problem('password_is_email', 'must not be the e-mail address');
  return null;
}

function derive(password: string, salt: Buffer, n: number, r: number, p: number, len: number): Promise<Buffer> {
  const opts: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, len, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SCRYPT.saltBytes);
  const key = await derive(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p, SCRYPT.keyLength);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number);
  const expected = Buffer.from(parts[5], 'base64url');
  // Parameters come from our own rows; bounded anyway so a damaged row cannot allocate gigabytes.
  if (!(n >= 2 && n <= 2 ** 20 && r >= 1 && r <= 32 && p >= 1 && p <= 16 && expected.length >= 16)) return false;
  const key = await derive(password, Buffer.from(parts[4], 'base64url'), n, r, p, expected.length);
  return timingSafeEqual(key, expected);
}

/** A stored hash nobody's password matches: compared against when the e-mail is unknown, so timing tells nothing. */
export const DUMMY_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;
