// One-click unsubscribe links (SPEC §4, RFC 8058). The token names a contact and its project and carries
// an HMAC over both plus the contact's address, so it can be neither forged nor edited to point at
// another contact: changing an id changes the address the MAC is checked against.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ContactRow } from '../db/schema.js';
import { signingForm } from '../domain/email.js';
import { findContact, setContactStatus } from '../repos/contacts.js';
import type { Executor } from '../repos/types.js';
import { contactNotice, enqueueSiteWebhooks } from '../services/webhooks/enqueue.js';

export interface TokenSubject {
  id: number;
  project_id: number;
  email: string;
}

const VERSION = 'u1';
// 128 bits of MAC: unforgeable, and keeps the link short enough for a List-Unsubscribe header.
const MAC_BYTES = 16;

function mac(secret: string, c: TokenSubject): Buffer {
  // Domain-separated so the same secret can sign other things without the MACs being interchangeable.
  return createHmac('sha256', secret)
    .update(`unsubscribe:${VERSION}:${c.id}:${c.project_id}:${signingForm(c.email)}`)
    .digest()
    .subarray(0, MAC_BYTES);
}

export function signUnsubscribeToken(secret: string, contact: TokenSubject): string {
  if (!secret) throw new Error('unsubscribe secret is empty');
  return `${VERSION}.${contact.id.toString(36)}.${contact.project_id.toString(36)}.${mac(secret, contact).toString('base64url')}`;
}

/** The ids a well-formed token claims (not yet verified), or null. */
export function parseUnsubscribeToken(token: string): { contactId: number; projectId: number; mac: Buffer } | null {
  const m = /^u1\.([0-9a-z]{1,12})\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{22})$/.exec(token);
  if (!m) return null;
  const contactId = parseInt(m[1], 36);
  const projectId = parseInt(m[2], 36);
  if (!Number.isSafeInteger(contactId) || !Number.isSafeInteger(projectId)) return null;
  const given = Buffer.from(m[3], 'base64url');
  return given.length === MAC_BYTES ? { contactId, projectId, mac: given } : null;
}

/** Constant-time check of a token against the contact it claims to belong to. */
export function verifyUnsubscribeToken(secret: string, token: string, contact: TokenSubject): boolean {
  const parsed = parseUnsubscribeToken(token);
  if (!parsed || parsed.contactId !== contact.id || parsed.projectId !== contact.project_id) return false;
  return timingSafeEqual(parsed.mac, mac(secret, contact));
}

export function unsubscribeUrl(publicUrl: string, secret: string, contact: TokenSubject): string {
  return `${publicUrl.replace(/\/+$/, '')}/u/${signUnsubscribeToken(secret, contact)}`;
}

/** The contact a token belongs to, or undefined for a malformed, forged or stale token. */
export async function resolveUnsubscribeToken(
  db: Executor,
  secret: string,
  token: string,
): Promise<ContactRow | undefined> {
  const parsed = parseUnsubscribeToken(token);
  if (!parsed) return undefined;
  const contact = await findContact(db, parsed.contactId);
  if (!contact) return undefined;
  return verifyUnsubscribeToken(secret, token, contact) ? contact : undefined;
}

/**
 * Unsubscribes the contact. `invalid` and `admin_blocked` already stop more than unsubscribing would,
 * so they are kept. Returns the status after the call. Pending cart and campaign e-mails need no
 * cancelling here: the worker checks the status at send time and records them as suppressed.
 */
export async function unsubscribeContact(
  db: Executor,
  contact: ContactRow,
  now: number,
): Promise<ContactRow['status']> {
  if (contact.status !== 'active') return contact.status;
  // The site hears of it through its webhooks, committed with the change itself (SPEC §13).
  await db.transaction().execute(async (trx) => {
    if (await setContactStatus(trx, contact.id, 'unsubscribed', now, ['active'], { reason: 'unsubscribe_link' }))
      await enqueueSiteWebhooks(trx, contact.project_id, 'contact.unsubscribed', contactNotice(contact, 'link'), now);
  });
  return 'unsubscribed';
}
