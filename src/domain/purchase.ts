// A purchase always stops the chain (SPEC §3, §10): once `email`, `order_id` and `cart_type` are valid, a
// malformed or misplaced optional member never refuses it. Each such member is named in a warning saying
// what was kept instead, and is recorded as absent.
import { cleanText } from './inputRules.js';
import { WARNING_NAMES } from './names.js';
import { parseAmount, parseCurrency } from './money.js';
import type { Body } from './validation.js';

/** One warning of a purchase: the member (as `invalid_fields` would name it) and what happened. */
export interface MemberWarning {
  member: string;
  problem: string;
}

/** Members whose trouble refuses a purchase; list_id is refused outright by SPEC §3. */
export const PURCHASE_FATAL = new Set(['email', 'order_id', 'cart_type', 'list_id']);

export interface PurchaseInput {
  name: string | undefined;
  /** Hundredths of the currency unit (domain/money.ts). */
  amountMinor: number | null;
  currency: string | null;
  paidAt: string | null;
  category: string | null;
}

const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

// RFC 3339 date-time with a mandatory offset, as the document asks for paid_at ("with UTC offset"). A
// time without an offset (PHP's date('Y-m-d H:i:s')) would be read in the server's zone: refused.
const DATE_TIME = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:[Zz]|[+-]\d\d:?\d\d)$/;

// What was kept instead, from the one dictionary (domain/names.ts) the admin UI shows in Russian.
const KEPT_MEMBERS = new Set([
  'amount',
  'currency',
  'name',
  'idempotency_key',
  'fields',
  'fields.paid_at',
  'fields.course_category_id',
]);
const kept = (member: string) => (KEPT_MEMBERS.has(member) ? WARNING_NAMES[member].en : 'ignored');

/**
 * Reads a purchase's optional members. `schemaProblems` are the body's `invalid_fields` other than the
 * fatal ones; the members checked here by hand replace what the schema said about them.
 */
export function readPurchase(
  body: Body,
  schemaProblems: Record<string, string>,
): { input: PurchaseInput; warnings: MemberWarning[] } {
  const warnings: MemberWarning[] = [];
  const warn = (member: string, problem: string) => warnings.push({ member, problem: `${problem}; ${kept(member)}` });
  const own = new Set(['amount', 'currency', 'fields.paid_at', 'fields.account_url', 'fields.course_category_id']);
  for (const [member, problem] of Object.entries(schemaProblems)) {
    if (!PURCHASE_FATAL.has(member) && !own.has(member)) warn(member, problem);
  }
  const fieldsOk = body.fields === undefined || (isObject(body.fields) && !('fields' in schemaProblems));
  const fields = fieldsOk && isObject(body.fields) ? body.fields : {};

  let amountMinor: number | null = null;
  if (body.amount !== undefined) {
    const a = parseAmount(body.amount);
    if (a.ok) amountMinor = a.minor;
    else warn('amount', a.problem);
  }
  let currency: string | null = null;
  if (body.currency !== undefined) {
    const c = parseCurrency(body.currency);
    if (c.ok) currency = c.value;
    else warn('currency', c.problem);
  }
  let paidAt: string | null = null;
  if (fields.paid_at !== undefined) {
    const v = fields.paid_at;
    if (typeof v === 'string' && DATE_TIME.test(v) && !Number.isNaN(Date.parse(v))) paidAt = v;
    else warn('fields.paid_at', 'must be an ISO 8601 timestamp with a UTC offset, such as "2026-11-20T10:15:00+03:00"');
  }
  if (fields.account_url !== undefined) {
    const v = fields.account_url;
    const url = typeof v === 'string' && URL.canParse(v) ? new URL(v) : null;
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
      warn('fields.account_url', 'must be an http or https URL');
  }
  let category: string | null = null;
  if (fields.course_category_id !== undefined) {
    const v = fields.course_category_id;
    // An empty string is how PHP often says "no category": absent, as it always was.
    if (typeof v === 'string' && v.trim() === '') category = null;
    // No category id holds a control character or half a surrogate pair (PostgreSQL refuses U+0000 in
    // a query parameter): such a value is malformed, not a lookup.
    else if (typeof v === 'string' && v.length <= 200 && cleanText(v) === v && !/\p{Cc}/u.test(v)) category = v.trim();
    else if (typeof v === 'number' && Number.isSafeInteger(v)) category = String(v);
    else warn('fields.course_category_id', 'must be a category id (a string or an integer)');
  }
  if (body.course_category_id !== undefined) {
    warnings.push({
      member: 'course_category_id',
      problem:
        'belongs inside fields (fields.course_category_id); ignored at the top level: the contact was not added to a category address book by it',
    });
  }
  const name = typeof body.name === 'string' && !('name' in schemaProblems) ? body.name : undefined;
  return { input: { name, amountMinor, currency, paidAt, category }, warnings };
}

/** Warnings as the response's `warnings` sentences (SPEC §3: strings; each names its member). */
export const warningSentences = (w: MemberWarning[]): string[] => w.map((x) => `${x.member}: ${x.problem}`);
