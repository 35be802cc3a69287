// The per-recipient fields of a DSN (RFC 3464 §2.3) as real MTAs write them: after the per-message
// block or in one single block with it (McAfee, AOL), with a leading blank line (SurfControl), several
// delivery-status parts in one report, or no MIME structure left at all (a relay that dropped the
// boundaries), in which case the fields are found in the text itself.
import { parseHeaderBlock } from './mime.js';

export interface DsnRecipient {
  action: string | null;
  status: string | null;
  diagnostic: string | null;
  finalRecipient: string | null;
  originalRecipient: string | null;
}

const ADDRESS = /[A-Za-z0-9._%+'=-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/;

/** `rfc822; user@example.org` (or `<user@example.org>`) to the lower-cased address. */
export function addressField(v: string | undefined | null): string | null {
  if (!v) return null;
  const m = ADDRESS.exec(v.includes(';') ? v.replace(/^[^;]*;/, '') : v);
  return m ? m[0].toLowerCase() : null;
}

const oneLine = (s: string | undefined) => (s ? s.replace(/\s+/g, ' ').trim() || null : null);

/** Every block of fields in a text, blank-line separated; with `loose`, indented field lines count too. */
function blocks(text: string, loose: boolean): Map<string, string>[] {
  const lines = text.split(/\r?\n/);
  const out: Map<string, string>[] = [];
  let current: string[] = [];
  const flush = () => {
    if (current.length) out.push(parseHeaderBlock(current.join('\n')));
    current = [];
  };
  for (const line of lines) {
    // A recipient field already in the block starts the next recipient (AOL writes them with no blank
    // line between), else the second recipient would be lost in the first's block.
    const field = /^(final|original)-recipient\s*:/i.exec(line)?.[1].toLowerCase();
    if (field && current.some((l) => new RegExp(`^\\s*${field}-recipient\\s*:`, 'i').test(l))) flush();
    if (!line.trim()) flush();
    else current.push(loose && /^\s+[A-Za-z-]+:/.test(line) ? line.trimStart() : line);
  }
  flush();
  return out;
}

const isRecipientBlock = (b: Map<string, string>) =>
  b.has('final-recipient') || b.has('original-recipient') || (b.has('action') && b.has('status'));

/**
 * At most this many recipients are read from one message: the gateway sends one recipient per e-mail,
 * so more is an expansion or an attack, and each becomes a stored report.
 */
export const MAX_RECIPIENTS = 50;

/** The per-recipient blocks of delivery-status text; `loose` when the text is a whole message body. */
export function dsnRecipients(text: string, loose = false): DsnRecipient[] {
  return blocks(text, loose)
    .filter(isRecipientBlock)
    .slice(0, MAX_RECIPIENTS)
    .map((b) => ({
      action: oneLine(b.get('action'))?.toLowerCase().split(/[\s(]/)[0] ?? null,
      status: oneLine(b.get('status')),
      diagnostic: oneLine(b.get('diagnostic-code')?.replace(/^\s*[a-z0-9-]+\s*;\s*/i, '')),
      finalRecipient: addressField(b.get('final-recipient')),
      originalRecipient: addressField(b.get('original-recipient')),
    }));
}
