// Secrets at rest (issue 13): relay passwords, DKIM private keys and provider webhook credentials are
// stored as AES-256-GCM ciphertext under a key derived with HKDF-SHA256 from the installation secret
// (SECRET_KEY, or the one generated into the database when unset). The stored form names a short id of
// the key, so a value written under another key is reported as such instead of as garbage.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { getOrCreateSecret } from '../repos/projects.js';
import type { Deps } from './context.js';

/**
 * The installation's secret (unsubscribe links, Message-IDs, and the key of every stored secret):
 * SECRET_KEY, or one made once and kept in the database so that every process shares it.
 */
export async function installationSecret(deps: Pick<Deps, 'db' | 'config'>): Promise<string> {
  return deps.config.secretKey ?? getOrCreateSecret(deps.db.db, 'unsubscribe_secret');
}

const INFO = 'egw/delivery-secrets/v1';
const PREFIX = 'v1';

export interface SecretBox {
  readonly keyId: string;
  seal(plain: string): string;
  open(sealed: string): string;
}

export class SecretKeyMismatch extends Error {}

export function secretBox(installationSecret: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', installationSecret, 'edu-gateway', INFO, 32));
  const keyId = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return {
    keyId,
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [PREFIX, keyId, iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join('.');
    },
    open(sealed) {
      const [v, kid, iv, tag, ct] = sealed.split('.');
      if (v !== PREFIX || ct === undefined) throw new Error('not an encrypted secret');
      if (kid !== keyId)
        throw new SecretKeyMismatch(
          `secret encrypted under key ${kid}, this installation's key is ${keyId} (SECRET_KEY changed?)`,
        );
      const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      d.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
    },
  };
}
