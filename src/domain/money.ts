// Amounts (SPEC §10): finite, 0 to MAX_AMOUNT, at most two decimals. Stored exactly as integer hundredths
// of the currency unit (`orders.amount_minor`), whatever the currency, so sums are exact and cannot
// overflow (at most 10^11 per order; PostgreSQL sums bigint into numeric).

export const MAX_AMOUNT = 1_000_000_000;
const AMOUNT_DECIMALS = 2;

export type AmountCheck = { ok: true; minor: number } | { ok: false; problem: string };

/**
 * Checks an amount and gives it in hundredths. The decimals are counted on the number's shortest
 * decimal form (what the client wrote, for any amount in range), not on binary floating point, so
 * 0.29 is 29 hundredths and 1.005 is refused.
 */
export function checkAmount(value: unknown): AmountCheck {
  if (typeof value !== 'number') return { ok: false, problem: 'must be a number' };
  if (!Number.isFinite(value)) return { ok: false, problem: 'must be a finite number' };
  if (value < 0) return { ok: false, problem: 'must not be negative' };
  if (value > MAX_AMOUNT) return { ok: false, problem: `must be at most ${MAX_AMOUNT}` };
  const m = /^(\d+)(?:\.(\d+))?$/.exec(String(value));
  // Exponent form in range means a tiny fraction such as 1e-7: more decimals than allowed.
  if (!m || (m[2] ?? '').length > AMOUNT_DECIMALS)
    return { ok: false, problem: `must have at most ${AMOUNT_DECIMALS} decimals` };
  return { ok: true, minor: Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(AMOUNT_DECIMALS, '0')) };
}

/** Hundredths back to the amount the API shows (a sum of them too). */
export function fromMinor(minor: number | string | null | undefined): number {
  return Number(minor ?? 0) / 100;
}
