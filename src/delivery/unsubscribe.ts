// One-click unsubscribe links (SPEC §4, RFC 8058). The token names a contact and its project and carries
// an HMAC over both plus the contact's address, so it can be neither forged nor edited to point at
// another contact: changing an id changes the address the MAC is checked against.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ContactRow } from '../db/schema.js';
import { signingForm } from '../domain/email.js';
import { findContact } from '../repos/contacts.js';
import type { Executor } from '../repos/types.js';
import { leaveAll, recordChoices } from '../services/consent.js';

export interface TokenSubject {
  id: number;
  project_id: number;
  email: string;
}

const VERSION = 'u1';
// 128 bits of MAC: unforgeable, and keeps the link short enough for a List-Unsubscribe header.
const MAC_BYTES = 16;

/**
 * The MAC of a link. `u1` links (sent before topics existed) leave every topic but transactional; `u2`
 * links name the one topic of their e-mail (SPEC §18); `p1` opens the preference page. Each is
 * domain-separated so a MAC of one kind never passes for another.
 */
function mac(secret: string, c: TokenSubject, kind: 'u1' | 'u2' | 'p1' = VERSION, topic = ''): Buffer {
  const purpose = kind === 'p1' ? 'preferences' : 'unsubscribe';
  const what = kind === 'u2' ? `${c.id}:${c.project_id}:${topic}` : `${c.id}:${c.project_id}`;
  return createHmac('sha256', secret)
    .update(`${purpose}:${kind}:${what}:${signingForm(c.email)}`)
    .digest()
    .subarray(0, MAC_BYTES);
}

const ids = (c: TokenSubject) => `${c.id.toString(36)}.${c.project_id.toString(36)}`;

export function signUnsubscribeToken(secret: string, contact: TokenSubject, topic?: string): string {
  if (!secret) throw new Error('unsubscribe secret is empty');
  if (topic) return `u2.${ids(contact)}.${topic}.${mac(secret, contact, 'u2', topic).toString('base64url')}`;
  return `${VERSION}.${ids(contact)}.${mac(secret, contact).toString('base64url')}`;
}

/** The preference page's token: the contact and project, valid until the contact is erased. */
export function signPreferenceToken(secret: string, contact: TokenSubject): string {
  if (!secret) throw new Error('unsubscribe secret is empty');
  return `p1.${ids(contact)}.${mac(secret, contact, 'p1').toString('base64url')}`;
}

interface ParsedToken {
  kind: 'u1' | 'u2' | 'p1';
  contactId: number;
  projectId: number;
  topic: string | null;
  mac: Buffer;
}

/** The ids a well-formed token claims (not yet verified), or null. */
export function parseUnsubscribeToken(token: string): ParsedToken | null {
  const m = /^(u1|u2|p1)\.([0-9a-z]{1,12})\.([0-9a-z]{1,12})(?:\.([a-z][a-z0-9_]{0,39}))?\.([A-Za-z0-9_-]{22})$/.exec(
    token,
  );
  if (!m) return null;
  const kind = m[1] as ParsedToken['kind'];
  // Only u2 names a topic, and it always does.
  if ((kind === 'u2') !== (m[4] !== undefined)) return null;
  const contactId = parseInt(m[2], 36);
  const projectId = parseInt(m[3], 36);
  if (!Number.isSafeInteger(contactId) || !Number.isSafeInteger(projectId)) return null;
  const given = Buffer.from(m[5], 'base64url');
  return given.length === MAC_BYTES ? { kind, contactId, projectId, topic: m[4] ?? null, mac: given } : null;
}

/** Constant-time check of a token against the contact it claims to belong to. */
export function verifyUnsubscribeToken(secret: string, token: string, contact: TokenSubject): boolean {
  const parsed = parseUnsubscribeToken(token);
  if (!parsed || parsed.contactId !== contact.id || parsed.projectId !== contact.project_id) return false;
  return timingSafeEqual(parsed.mac, mac(secret, contact, parsed.kind, parsed.topic ?? ''));
}

export function unsubscribeUrl(publicUrl: string, secret: string, contact: TokenSubject, topic?: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/u/${signUnsubscribeToken(secret, contact, topic)}`;
}

export function preferencesUrl(publicUrl: string, secret: string, contact: TokenSubject): string {
  return `${publicUrl.replace(/\/+$/, '')}/p/${signPreferenceToken(secret, contact)}`;
}

/**
 * The contact a token belongs to and the topic it names (null: every topic but transactional), or
 * undefined for a malformed, forged or stale token, or one of the other kind (`preferences` or not).
 * An erased contact has no address left to check the MAC against: its links are dead.
 */
export async function resolveLinkToken(
  db: Executor,
  secret: string,
  token: string,
  want: 'unsubscribe' | 'preferences' = 'unsubscribe',
): Promise<{ contact: ContactRow; topic: string | null } | undefined> {
  const parsed = parseUnsubscribeToken(token);
  if (!parsed || (parsed.kind === 'p1') !== (want === 'preferences')) return undefined;
  const contact = await findContact(db, parsed.contactId);
  if (!contact || contact.erased_at != null) return undefined;
  return verifyUnsubscribeToken(secret, token, contact) ? { contact, topic: parsed.topic } : undefined;
}

/** The contact an unsubscribe token belongs to, or undefined. */
export async function resolveUnsubscribeToken(db: Executor, secret: string, token: string) {
  return (await resolveLinkToken(db, secret, token))?.contact;
}

/**
 * Unsubscribes the contact from `topic`, or from every topic but transactional when null (an old link,
 * or the preference page's "leave all"). A withdrawal record says where it came from (`unsubscribe_link`
 * for a click, `list_unsubscribe` for a mail client's one-click POST). `invalid` and `admin_blocked`
 * already stop more than unsubscribing would: the record is kept, the status too. The contact's e-mails
 * of the topic still waiting are suppressed in the same transaction.
 */
export async function unsubscribeContact(
  db: Executor,
  contact: ContactRow,
  topic: string | null,
  source: 'unsubscribe_link' | 'list_unsubscribe',
  now: number,
  meta: { ip?: string | null; user_agent?: string | null } = {},
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (topic === null) await leaveAll(trx, contact, source, now, meta);
    else await recordChoices(trx, contact, [{ topic, granted: false, ...meta }], source, now);
  });
}
