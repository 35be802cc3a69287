// Secrets kept at rest (webhook signing secrets): AES-256-GCM under a key derived with HKDF-SHA256 from
// the installation's secret (SECRET_KEY, or the one kept in the database). A per-purpose `info` keeps
// keys of different uses apart; the sealed form is `v1.<iv>.<tag>.<ciphertext>` in base64url.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

function keyFor(installationSecret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', installationSecret, 'edu-gateway secret box', purpose, 32));
}

export function seal(installationSecret: string, purpose: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(installationSecret, purpose), iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), data]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/** Throws when the sealed text was altered or sealed under another secret. */
export function open(installationSecret: string, purpose: string, sealed: string): string {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || data === undefined) throw new Error('not a sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', keyFor(installationSecret, purpose), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}
