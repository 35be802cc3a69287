// Amounts and currencies of payments (SPEC §10). An amount is finite, 0 to MAX_AMOUNT, with at most two
// decimals, and is stored exactly as integer hundredths of the currency unit (`orders.amount_minor`,
// migration 005) whatever the currency, so sums are exact and cannot overflow (at most 10^11 per order).

/** The largest amount a payment may carry, and its decimals. */
export const MAX_AMOUNT = 1_000_000_000;
const AMOUNT_DECIMALS = 2;

// What PHP sends for a DECIMAL column or number_format(..., 2, ',', ''): "2500", "2500.00", "2500,00".
// At most two decimals: "2,500" (a thousands separator) must not be read as 2.5.
const DECIMAL_STRING = /^\d+(?:[.,]\d{1,2})?$/;

/** A decimal string as a number ("2500,00" -> 2500), or undefined when it is not one. */
export function decimalString(v: string): number | undefined {
  return DECIMAL_STRING.test(v) ? Number(v.replace(',', '.')) : undefined;
}

export type AmountCheck = { ok: true; value: number; minor: number } | { ok: false; problem: string };

/**
 * An amount as the purchase records it: a finite number 0..MAX_AMOUNT with at most two decimals, and the
 * same in hundredths. The decimals are counted on the number's shortest decimal form (what the client
 * wrote, for any amount in range), not on binary floating point: 0.29 is 29 hundredths, 1.005 is refused.
 */
export function parseAmount(v: unknown): AmountCheck {
  const n = typeof v === 'string' ? decimalString(v) : v;
  if (typeof n === 'number' && !Number.isFinite(n)) return { ok: false, problem: 'must be a finite number' };
  if (typeof n !== 'number') {
    return { ok: false, problem: 'must be a number or a decimal string such as "2500", "2500.00" or "2500,00"' };
  }
  if (n < 0 || n > MAX_AMOUNT) return { ok: false, problem: `must be between 0 and ${MAX_AMOUNT}` };
  const m = /^(\d+)(?:\.(\d+))?$/.exec(String(n));
  // Exponent form in range means a tiny fraction such as 1e-7: more decimals than allowed.
  if (!m || (m[2] ?? '').length > AMOUNT_DECIMALS)
    return { ok: false, problem: `must have at most ${AMOUNT_DECIMALS} decimals` };
  const minor = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(AMOUNT_DECIMALS, '0'));
  return { ok: true, value: n, minor };
}

/** Hundredths back to the amount the API shows (a sum of them too). */
export function fromMinor(minor: number | string | null | undefined): number {
  return Number(minor ?? 0) / 100;
}

/** ISO 4217 shape: three letters, stored upper-case ("rub" -> "RUB"). */
export function parseCurrency(v: unknown): { ok: true; value: string } | { ok: false; problem: string } {
  if (typeof v === 'string' && /^[A-Za-z]{3}$/.test(v)) return { ok: true, value: v.toUpperCase() };
  return { ok: false, problem: 'must be a three-letter ISO 4217 currency code such as "RUB"' };
}

/** The key under which an amount recorded without a currency is counted (ISO 4217: no currency). */
export const NO_CURRENCY = 'XXX';
