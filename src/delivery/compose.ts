// The envelope of an e-mail around its rendered parts: From, To, and the extra header lines, and the
// headers the admin API shows for it. One place for the worker, which sends it, and the preview, which
// shows an e-mail before it is sent, so both name sender and recipient the same way.
import type { ContactRow, EmailRow, Project } from '../db/schema.js';
import type { RenderedParts } from './render.js';

export interface ComposeInput {
  project: Pick<Project, 'name' | 'from_email'> & Partial<Pick<Project, 'reply_to'>>;
  email: Pick<EmailRow, 'kind' | 'to_email' | 'to_name'>;
  /** The recipient's contact; its name stands in when the e-mail names none. */
  contact: Pick<ContactRow, 'name'> | null;
  parts: RenderedParts;
  /** The recipient's one-click unsubscribe link; cart and campaign e-mails announce it in List-Unsubscribe. */
  unsubscribeUrl?: string;
  /** Known only when the e-mail is sent. */
  messageId?: string;
}

export interface Composed {
  from: { name: string; address: string };
  to: { name: string | null; address: string };
  /** Header lines beyond From, To, Subject and Message-ID, for the transport. */
  headers: Record<string, string>;
  /** Every header as the admin API shows it (From, To, Subject, Message-ID when known, the rest). */
  shown: Record<string, string>;
}

/** `"Name" <address>`, or the bare address without a name; quotes and line breaks cannot break out. */
function addressHeader(name: string | null | undefined, address: string): string {
  return name ? `"${name.replace(/["\\\r\n]/g, '')}" <${address}>` : address;
}

export function composeEmail(i: ComposeInput): Composed {
  const from = { name: i.project.name, address: i.project.from_email };
  const to = { name: i.email.to_name ?? i.contact?.name ?? null, address: i.email.to_email };
  const headers: Record<string, string> = {};
  // The project's own Reply-To; a relay's reply_to setting replaces it where the e-mail is sent.
  if (i.project.reply_to) headers['Reply-To'] = i.project.reply_to;
  // Transactional e-mails reach unsubscribed contacts too (SPEC §4), so they offer no unsubscribing.
  if (i.unsubscribeUrl && (i.email.kind === 'cart' || i.email.kind === 'campaign')) {
    headers['List-Unsubscribe'] = `<${i.unsubscribeUrl}>`;
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  }
  return {
    from,
    to,
    headers,
    shown: {
      From: addressHeader(from.name, from.address),
      To: addressHeader(to.name, to.address),
      Subject: i.parts.subject,
      ...(i.messageId ? { 'Message-ID': i.messageId } : {}),
      ...headers,
    },
  };
}
