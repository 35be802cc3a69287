// The bytes of a message nodemailer's MailComposer compiled, written synchronously. MimeNode.build()
// streams every part through a chain of Transform streams, pipelines and setImmediate hops (each
// pipeline's end also makes an AbortController throw a DOMException away): ~0.5 ms of CPU per e-mail in
// the e2e profile for a few KiB of text (issue 38). The tree, its headers (MimeNode.buildHeaders) and the
// transfer encodings (nodemailer's own qp and base64 encoders) are still nodemailer's; only the walk over
// the tree is ours. Anything this walk does not handle (raw nodes, streamed content, transforms, newline
// conversion) returns null and the caller uses MimeNode.build(). test/mime-bytes.test.ts compares the
// bytes with MimeNode.build() for the messages the gateway sends.
import type MimeNode from 'nodemailer/lib/mime-node';
import { encode as base64Encode } from 'nodemailer/lib/base64';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';

const LINE = 76;

/** What MimeNode keeps on itself beyond its published type. */
interface NodeInternals {
  _raw?: unknown;
  _transforms: unknown[];
  _processFuncs: unknown[];
  newline?: unknown;
  contentType?: string;
}

const wrapBase64 = (s: string): string => {
  if (s.length <= LINE) return s;
  const lines: string[] = [];
  for (let i = 0; i < s.length; i += LINE) lines.push(s.slice(i, i + LINE));
  return lines.join('\r\n');
};

function walk(node: MimeNode, out: string[]): boolean {
  const n = node as MimeNode & NodeInternals;
  if (n._raw || n._transforms.length || n._processFuncs.length || n.newline) return false;
  const content = node.content;
  if (content !== undefined && content !== null && content !== '' && typeof content !== 'string') return false;
  out.push(node.buildHeaders() + '\r\n\r\n');
  if (content) {
    const encoding = node.getTransferEncoding();
    if (encoding === 'base64') out.push(wrapBase64(base64Encode(content)));
    else if (encoding === 'quoted-printable') {
      // Binary QP (a lone CR or LF is data) is nodemailer's rule outside text/*; the gateway sends text only.
      if (!/^text\//i.test(n.contentType ?? '')) return false;
      out.push(qpWrap(qpEncode(content), LINE));
    } else out.push(content);
  }
  if (node.multipart) {
    for (const [i, child] of node.childNodes.entries()) {
      out.push(`${i > 0 ? '\r\n' : ''}--${String(node.boundary)}\r\n`);
      if (!walk(child, out)) return false;
    }
    out.push(`\r\n--${String(node.boundary)}--\r\n`);
  }
  return true;
}

/** The message's bytes as MimeNode.build() gives them, or null when the tree needs nodemailer's streams. */
export function mimeBytes(root: MimeNode): Buffer | null {
  const out: string[] = [];
  if (!walk(root, out)) return null;
  const text = out.join('');
  // nodemailer's LastNewline stage: the message ends with a line break.
  return Buffer.from(text.endsWith('\n') ? text : `${text}\r\n`, 'utf8');
}
