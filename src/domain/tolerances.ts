// What PHP sends, read as what it means (SPEC §10), before a gateway body is validated:
// - `null` for an optional member is the member absent (json_encode of an unset property);
// - `"fields": []` is `{}` (json_encode of an empty PHP array);
// - an integer `order_id` is its decimal string (an INT column);
// - `amount` may be a decimal string: "2500", "2500.00", "2500,00" (a DECIMAL column, number_format).
// Nothing else is coerced: `"amount": "2 500"`, `"order_id": 10.5` or `"fields": [1]` stay errors.
import { decimalString } from './money.js';
import type { Body } from './validation.js';

function dropNulls(o: Body): void {
  for (const [k, v] of Object.entries(o)) if (v === null) delete o[k];
}

/** Applies the tolerances to a gateway body in place. */
export function applyPhpTolerances(body: Body): void {
  dropNulls(body);
  if (Array.isArray(body.fields) && body.fields.length === 0) body.fields = {};
  if (body.fields && typeof body.fields === 'object' && !Array.isArray(body.fields)) dropNulls(body.fields as Body);
  if (typeof body.order_id === 'number' && Number.isSafeInteger(body.order_id)) body.order_id = String(body.order_id);
  if (typeof body.amount === 'string') {
    const n = decimalString(body.amount);
    if (n !== undefined) body.amount = n;
  }
}
