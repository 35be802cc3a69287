// Request bodies from bytes to JSON (SPEC §10). JSON is UTF-8 (RFC 8259); old CMSs still send
// windows-1251 or KOI8-R, which are decoded when the Content-Type says so. Every other declared charset is
// 415, and bytes that are not UTF-8 are 400 naming where they start: nothing is decoded with U+FFFD in
// place of what the site meant, so a name can never be overwritten with "����".
// Then the depth limit (SPEC §10: 32 levels), checked on the text before anything is built, so a
// 10,000-deep body costs one linear scan and never reaches code that walks values (serialising, hashing,
// rendering): 400 invalid_json naming the limit.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import iconv from 'iconv-lite';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../domain/inputRules.js';
import { AppError } from '../errors.js';

/** Declared charset (lower case) -> iconv-lite's name; utf-8 is decoded by the platform. */
const CHARSETS: Record<string, string> = {
  'utf-8': 'utf8',
  utf8: 'utf8',
  'windows-1251': 'cp1251',
  cp1251: 'cp1251',
  'koi8-r': 'koi8-r',
};
const SINGLE_BYTE = new Set(['cp1251', 'koi8-r']);

/** The charset parameter of a Content-Type header, lower case, or null when none is declared. */
function declaredCharset(contentType: string | undefined): string | null {
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  return m ? (m[1] ?? m[2]).trim().toLowerCase() : null;
}

/**
 * Where the first byte that is not UTF-8 sits. The body was decoded with replacement characters; the
 * first U+FFFD that the bytes did not spell out themselves (EF BF BD) marks it, and everything before it
 * decoded cleanly, so its UTF-8 length is the offset. Written here because the platform's decoders only
 * say "invalid", not where.
 */
function firstInvalidUtf8Offset(buf: Buffer): number {
  const text = buf.toString('utf8');
  let bytes = 0;
  let chars = 0;
  for (let i = text.indexOf('\uFFFD'); i >= 0; i = text.indexOf('\uFFFD', i + 1)) {
    bytes += Buffer.byteLength(text.slice(chars, i));
    if (buf[bytes] === 0xef && buf[bytes + 1] === 0xbf && buf[bytes + 2] === 0xbd) {
      bytes += 3;
      chars = i + 1;
      continue;
    }
    return bytes;
  }
  return -1;
}

const hex = (buf: Buffer, at: number) =>
  [...buf.subarray(at, at + 4)].map((b) => `0x${b.toString(16).toUpperCase().padStart(2, '0')}`).join(' ');

/** Mostly Cyrillic letters when read as windows-1251 (KOI8-R has its letters in the same range). */
function looksCyrillicSingleByte(buf: Buffer): boolean {
  const high = buf.filter((b) => b >= 0x80);
  const letters = [...iconv.decode(Buffer.from(high), 'cp1251')].filter((c) => /\p{Script=Cyrillic}/u.test(c));
  return high.length > 0 && letters.length >= high.length * 0.8;
}

/** The body's text, or an AppError (415 for an unsupported charset, 400 for bytes that are not text). */
function decodeBody(buf: Buffer, contentType: string | undefined): string {
  const declared = declaredCharset(contentType);
  const encoding = declared === null ? 'utf8' : CHARSETS[declared];
  if (!encoding) {
    throw new AppError(
      415,
      'unsupported_media_type',
      `charset=${declared} is not supported: send the body in UTF-8 (or declare charset=windows-1251 or charset=koi8-r)`,
      { charset: declared },
    );
  }
  if (SINGLE_BYTE.has(encoding)) {
    const text = iconv.decode(buf, encoding);
    // Single-byte: one character per byte, so the index is the offset. Only an undefined byte (0x98 in
    // windows-1251) decodes to U+FFFD; neither charset can spell that character itself.
    const bad = text.indexOf('\uFFFD');
    if (bad >= 0) {
      throw new AppError(
        400,
        'invalid_json',
        `The request body is not valid ${declared}: the byte at offset ${bad} (${hex(buf, bad).split(' ')[0]}) is not a character of that charset`,
        { byte_offset: bad },
      );
    }
    return text;
  }
  // A byte-order mark is allowed to be ignored (RFC 8259 §8.1); editors on Windows still write one.
  const body = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? buf.subarray(3) : buf;
  if (isUtf8(body)) return body.toString('utf8');
  const offset = firstInvalidUtf8Offset(body) + (body === buf ? 0 : 3);
  const hint = looksCyrillicSingleByte(body)
    ? ' The bytes look like windows-1251 or KOI8-R: convert the body to UTF-8, or declare charset=windows-1251 (or koi8-r) in Content-Type.'
    : '';
  throw new AppError(
    400,
    'invalid_json',
    `The request body is not valid UTF-8: the bytes starting at offset ${offset} (${hex(buf, offset)}) are not UTF-8. The body must be UTF-8 (RFC 8259).${hint}`,
    { byte_offset: offset },
  );
}

function tooDeepError(): AppError {
  return new AppError(
    400,
    'invalid_json',
    `The request body is nested deeper than ${MAX_JSON_DEPTH} levels, the most this service accepts`,
    { max_depth: MAX_JSON_DEPTH },
  );
}

/**
 * Replaces Fastify's JSON parser with one that reads bytes, decodes them as above and checks the depth
 * before parsing. The parsing itself is Fastify's (secure-json-parse: prototype-poisoning bodies are refused as before).
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parseText = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    (req: FastifyRequest, buf: Buffer, done: (err: Error | null, body?: unknown) => void) => {
      let text: string;
      try {
        text = decodeBody(buf, req.headers['content-type']);
      } catch (err) {
        return done(err as Error);
      }
      if (jsonTooDeep(text)) return done(tooDeepError());
      void parseText(req, text, done);
    },
  );
}
