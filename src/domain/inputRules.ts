// Rules every external input obeys whatever the endpoint (SPEC §10), so both databases store the same:
// - JSON at most MAX_JSON_DEPTH levels deep, checked on the text before it is parsed;
// - no U+0000 and no unpaired surrogate in any string or member name (PostgreSQL cannot store the
//   first, and both databases would silently replace the second);
// - numbers finite (JSON.parse turns 1e400 into Infinity).
// Every walk here is iterative with an explicit stack: a client cannot make the server recurse.

export const MAX_JSON_DEPTH = 32;

/** True when the JSON text nests arrays or objects deeper than `max` (strings are skipped correctly). */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

// U+0000, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
// eslint-disable-next-line no-control-regex
const BAD_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// eslint-disable-next-line no-control-regex
const BAD_TEXT_ALL = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const TEXT_PROBLEM = 'must not contain U+0000 or an unpaired surrogate';
export const NUMBER_PROBLEM = 'must be a finite number';

function hasBadText(s: string): boolean {
  return BAD_TEXT.test(s);
}

/**
 * The text with U+0000 and unpaired surrogates replaced by U+FFFD: to name a member in an answer, or to
 * store text that no schema checked (PostgreSQL refuses U+0000).
 */
export function cleanText(s: string): string {
  return BAD_TEXT.test(s) ? s.replace(BAD_TEXT_ALL, '\ufffd') : s;
}

/** How a member is named in `invalid_fields`: its path, with unprintable characters made visible. */
function memberName(base: string, key: string | number): string {
  const k = typeof key === 'number' ? String(key) : cleanText(key);
  return base ? `${base}.${k}` : k;
}

/** At most this many members are named, so a hostile body cannot make a huge answer. */
const MAX_REPORTED = 20;

/**
 * Members breaking the rules above, as `invalid_fields` entries (name -> reason). `base` prefixes the
 * names (`query.` for a query string). A member name that breaks the text rule is reported as itself.
 */
export function inputProblems(value: unknown, base = ''): Record<string, string> {
  const out: Record<string, string> = {};
  let found = 0;
  const stack: [unknown, string][] = [[value, base]];
  while (stack.length && found < MAX_REPORTED) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (hasBadText(v)) {
        out[path || 'body'] = TEXT_PROBLEM;
        found++;
      }
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) {
        out[path || 'body'] = NUMBER_PROBLEM;
        found++;
      }
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], memberName(path, i)]);
    } else if (v && typeof v === 'object') {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i];
        const name = memberName(path, k);
        if (hasBadText(k)) {
          out[name] = `member name ${TEXT_PROBLEM}`;
          found++;
        } else stack.push([(v as Record<string, unknown>)[k], name]);
      }
    }
  }
  return out;
}

/** Deepest nesting of a value (0 for a scalar), without recursion; stops counting past `limit`. */
function depthOf(value: unknown, limit = MAX_JSON_DEPTH + 1): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v && typeof v === 'object') {
      if (d + 1 > max) max = d + 1;
      if (max >= limit) return max;
      for (const x of Object.values(v)) if (x && typeof x === 'object') stack.push([x, d + 1]);
    }
  }
  return max;
}

/** Most characters of a request payload kept in the chronology; beyond it a marked excerpt is stored. */
const MAX_STORED_PAYLOAD = 128 * 1024;
const EXCERPT = 4096;

/**
 * A request body as the chronology stores it: its JSON, or, when it is too deep to serialise safely or
 * too large to keep, a small object that says so (`_truncated`) with the beginning of the text.
 */
export function storedPayload(body: unknown, maxChars = MAX_STORED_PAYLOAD): string | null {
  if (body === undefined) return null;
  if (depthOf(body) > MAX_JSON_DEPTH) {
    return JSON.stringify({ _truncated: `nested deeper than ${MAX_JSON_DEPTH} levels: not stored` });
  }
  const text = JSON.stringify(body) ?? 'null';
  if (text.length <= maxChars) return text;
  return JSON.stringify({
    _truncated: `${text.length} characters, over the ${maxChars} kept: only the beginning is stored`,
    excerpt: text.slice(0, EXCERPT),
  });
}
