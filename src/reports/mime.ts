// A small MIME walker for report messages. mailparser (used for the human-readable text) folds
// `message/delivery-status` and `message/feedback-report` parts into the body text; reading a report's
// fields needs the parts themselves, with their content types. Bounded: depth, parts and sizes.
import iconv from 'iconv-lite';

export interface MimePart {
  contentType: string;
  params: Record<string, string>;
  headers: Map<string, string>;
  /** Decoded body as text (transfer encoding and charset undone); multiparts have parts instead. */
  body: string;
  parts: MimePart[];
}

const MAX_DEPTH = 8;
const MAX_PARTS = 50;

/** Header block to a map of lower-cased names (first occurrence wins) with folded lines joined. */
export function parseHeaderBlock(block: string): Map<string, string> {
  const out = new Map<string, string>();
  const unfolded = block.replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const m = /^([!-9;-~]+)[ \t]*:[ \t]*(.*)$/.exec(line);
    if (m && !out.has(m[1].toLowerCase())) out.set(m[1].toLowerCase(), m[2].trim());
  }
  return out;
}

/** `type/subtype; a=b; c="d"` to the lower-cased type and its parameters. */
export function parseContentType(value: string | undefined): { type: string; params: Record<string, string> } {
  const [head, ...rest] = (value ?? 'text/plain').split(';');
  const params: Record<string, string> = {};
  for (const p of rest) {
    const m = /^\s*([^=\s]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]*))/.exec(p);
    if (m) params[m[1].toLowerCase()] = (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1');
  }
  return { type: head.trim().toLowerCase() || 'text/plain', params };
}

function splitHead(raw: string): [string, string] {
  const m = /\r?\n\r?\n/.exec(raw);
  if (!m) return [raw, ''];
  return [raw.slice(0, m.index), raw.slice(m.index + m[0].length)];
}

function decodeBody(body: string, encoding: string, charset: string | undefined): string {
  let bytes: Buffer;
  const enc = encoding.toLowerCase();
  if (enc === 'base64') bytes = Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  else if (enc === 'quoted-printable')
    bytes = Buffer.from(
      body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    );
  else bytes = Buffer.from(body, 'latin1');
  const cs = (charset ?? 'utf-8').toLowerCase();
  return iconv.encodingExists(cs) ? iconv.decode(bytes, cs) : bytes.toString('utf8');
}

/** Parses a message (read as latin1 so bytes survive until the charset is known) into its parts. */
export function parseMime(raw: string, depth = 0, budget = { parts: 0 }): MimePart {
  const [head, body] = splitHead(raw);
  const headers = parseHeaderBlock(head);
  const { type, params } = parseContentType(headers.get('content-type'));
  budget.parts++;
  const part: MimePart = { contentType: type, params, headers, body: '', parts: [] };
  const boundary = type.startsWith('multipart/') ? usedBoundary(body, params.boundary) : null;
  if (boundary && depth < MAX_DEPTH) {
    // Some MTAs indent a delimiter line; RFC 2046 does not allow it, but the part is still meant.
    const delimiter = `^[ \\t]?--${escapeRegExp(boundary)}`;
    const chunks = body.split(new RegExp(`${delimiter}(?:--)?[ \\t]*\\r?$`, 'm'));
    // The first chunk is the preamble and, after a closing delimiter, the last is the epilogue.
    const closed = new RegExp(`${delimiter}--[ \\t]*\\r?$`, 'm').test(body);
    for (const chunk of closed ? chunks.slice(1, -1) : chunks.slice(1)) {
      if (budget.parts >= MAX_PARTS) break;
      part.parts.push(parseMime(chunk.replace(/^\r?\n/, ''), depth + 1, budget));
    }
    return part;
  }
  const encoding = headers.get('content-transfer-encoding') ?? '7bit';
  // An attached message keeps its own header block; a report or text part is decoded to text.
  part.body = decodeBody(body, encoding, params.charset);
  return part;
}

/**
 * The boundary the body really uses. Real bounces declare one boundary and write another (an MTA that
 * rewrote the header but not the body); then the first `--token` line followed by a part header is it.
 */
function usedBoundary(body: string, declared: string | undefined): string | null {
  if (declared && new RegExp(`^[ \\t]?--${escapeRegExp(declared)}(?:--)?[ \\t]*\\r?$`, 'm').test(body)) return declared;
  const m = /^--([^\s]{1,100})[ \t]*\r?\n(?:content-[a-z-]+[ \t]*:)/im.exec(body);
  return m ? m[1] : null;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Every leaf part, depth first. */
export function leaves(p: MimePart): MimePart[] {
  return p.parts.length ? p.parts.flatMap(leaves) : [p];
}
