// Amounts and currencies of payments (SPEC §10).

/** The largest amount a payment may carry, and its decimals. */
const MAX_AMOUNT = 1_000_000_000;
const AMOUNT_DECIMALS = 2;

// What PHP sends for a DECIMAL column or number_format(..., 2, ',', ''): "2500", "2500.00", "2500,00".
// At most two decimals: "2,500" (a thousands separator) must not be read as 2.5.
const DECIMAL_STRING = /^\d+(?:[.,]\d{1,2})?$/;

/** A decimal string as a number ("2500,00" -> 2500), or undefined when it is not one. */
export function decimalString(v: string): number | undefined {
  return DECIMAL_STRING.test(v) ? Number(v.replace(',', '.')) : undefined;
}

export type AmountCheck = { ok: true; value: number } | { ok: false; problem: string };

/** An amount as the purchase records it: a finite number 0..MAX_AMOUNT with at most two decimals. */
export function parseAmount(v: unknown): AmountCheck {
  const n = typeof v === 'string' ? decimalString(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) {
    return { ok: false, problem: 'must be a number or a decimal string such as "2500", "2500.00" or "2500,00"' };
  }
  if (n < 0 || n > MAX_AMOUNT) return { ok: false, problem: `must be between 0 and ${MAX_AMOUNT}` };
  // Compared in minor units: 19.99 * 100 is 1998.9999999999998, which rounds back to an integer.
  const minor = n * 10 ** AMOUNT_DECIMALS;
  if (Math.abs(minor - Math.round(minor)) > 1e-6) {
    return { ok: false, problem: `must have at most ${AMOUNT_DECIMALS} decimals` };
  }
  return { ok: true, value: n };
}

/** ISO 4217 shape: three letters, stored upper-case ("rub" -> "RUB"). */
export function parseCurrency(v: unknown): { ok: true; value: string } | { ok: false; problem: string } {
  if (typeof v === 'string' && /^[A-Za-z]{3}$/.test(v)) return { ok: true, value: v.toUpperCase() };
  return { ok: false, problem: 'must be a three-letter ISO 4217 currency code such as "RUB"' };
}

/** The key under which an amount recorded without a currency is counted (ISO 4217: no currency). */
export const NO_CURRENCY = 'XXX';
