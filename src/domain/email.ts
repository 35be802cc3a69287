// E-mail addresses as Russian sites really have them (SPEC §10): a Unicode domain (`ivan@пример.рф`) and
// a non-ASCII local part (RFC 6531, `иван@пример.рф`), besides plain ASCII ones.
//
// - Validation: an all-ASCII address passes exactly when it passed before (the same expression as
//   ajv-formats' `email`); a non-ASCII one is checked part by part against the same shape, its domain
//   through IDNA (UTS #46, node:url's domainToASCII, the mapping browsers and nodemailer use).
// - One stored form: trimmed, local part NFC and lower-cased (contacts compare case-insensitively, SPEC §4),
//   domain as Unicode after UTS #46, so `ivan@xn--e1afmkfd.xn--p1ai` and `ivan@ПРИМЕР.РФ` are both stored and
//   compared as `ivan@пример.рф`. The ASCII (punycode) form is made only where it must be: at the SMTP
//   boundary, in Message-IDs, in signed tokens.
import { domainToASCII, domainToUnicode } from 'node:url';

// ajv-formats' "full" email expression, which every address met before this module existed.
const ASCII_ADDRESS =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;
// RFC 6531 widens atext by UTF8-non-ascii; of those we take letters, marks and digits only, so spaces,
// invisible format characters and look-alike punctuation (U+FF20 "＠") are still refused.
const UTF8_LOCAL = /^[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+)*$/u;
const UNICODE_LABEL = /^[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]*[\p{L}\p{M}\p{N}])?$/u;
// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\u0000-\u007f]/;

const isAscii = (s: string): boolean => !NON_ASCII.test(s);

function split(address: string): { local: string; domain: string } | null {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return null;
  return { local: address.slice(0, at), domain: address.slice(at + 1) };
}

/**
 * The ASCII (A-label) form of a domain, or null when it is not a valid domain. An ASCII domain without
 * `xn--` is only lower-cased: the WHATWG mapper would read `0x7f.1` as an IPv4 address.
 */
export function domainAscii(domain: string): string | null {
  if (isAscii(domain) && !/(^|\.)xn--/i.test(domain)) return domain.toLowerCase();
  // Only labels reach the mapper: it is a URL host parser and would cut `a.xn--p1ai/evil` at the slash.
  if (!domain.split('.').every((l) => UNICODE_LABEL.test(l))) return null;
  const ascii = domainToASCII(domain);
  if (!ascii || ascii.length > 253 || ascii.split('.').some((l) => l.length > 63)) return null;
  // An `xn--` label must decode to letters, marks and digits and encode back to itself. Node 24's mapper
  // (ada) passes `xn--zz` through unchecked where Node 20's refused it, and `xn--9a` decodes to "£".
  const unicode = domainToUnicode(ascii);
  if (domainToASCII(unicode) !== ascii || !unicode.split('.').every((l) => UNICODE_LABEL.test(l) && !/^xn--/i.test(l)))
    return null;
  // Full-width digits map to ASCII ones; a domain whose last label has no letter is an address literal.
  if (!/[a-z]/.test(ascii.slice(ascii.lastIndexOf('.') + 1))) return null;
  return ascii;
}

/** Whether the address is acceptable (JSON Schema format `idn-email`). */
export function isValidAddress(address: string): boolean {
  if (isAscii(address) && !/(^|[.@])xn--/i.test(address)) return ASCII_ADDRESS.test(address);
  const parts = split(address);
  if (!parts) return false;
  const local = parts.local.normalize('NFC');
  if (!(isAscii(local) ? ASCII_ADDRESS.test(`${local}@a.b`) : UTF8_LOCAL.test(local))) return false;
  const ascii = domainAscii(parts.domain);
  return ascii !== null && ASCII_ADDRESS.test(`a@${ascii}`);
}

/** The one form an address is stored and compared in. Harmless on a form already stored. */
export function canonicalAddress(address: string): string {
  const trimmed = address.trim();
  const parts = split(trimmed);
  if (!parts) return trimmed.toLowerCase();
  const local = parts.local.normalize('NFC').toLowerCase();
  const ascii = domainAscii(parts.domain);
  if (ascii === null) return `${local}@${parts.domain.toLowerCase()}`;
  // Only an IDN goes back through the mapper (it would rewrite an ASCII `0x7f.1` as an IPv4 address).
  return `${local}@${ascii.includes('xn--') ? domainToUnicode(ascii) || ascii : ascii}`;
}

/** Only SMTPUTF8 (RFC 6531) can carry this address: its local part is not ASCII. */
export const needsSmtpUtf8 = (address: string): boolean => {
  const parts = split(address);
  return parts !== null && !isAscii(parts.local);
};

/**
 * The canonical address with its domain in ASCII: what signatures cover, so that a link signed before
 * addresses were stored with Unicode domains (migration 006) still verifies.
 */
export function signingForm(address: string): string {
  const canonical = canonicalAddress(address);
  const parts = split(canonical);
  const ascii = parts && domainAscii(parts.domain);
  return parts && ascii ? `${parts.local}@${ascii}` : canonical;
}
