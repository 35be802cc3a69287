// What the gateway services (gateway.ts, purchase.ts) share before they build a request's plan: the
// calling key's rights and limits, the configuration it was checked against, the body's consent items
// and what its templates see.
import { isCartType } from '../domain/catalog.js';
import { readConsentList, type ConsentItem, type Topic } from '../domain/consent.js';
import { requireCartAllowed, requirePermission } from '../domain/rights.js';
import { mergeRequired } from '../domain/templateContract.js';
import { isObject, type Body, type Problems } from '../domain/validation.js';
import { configSnapshot, type ConfigSnapshot } from './configCache.js';
import type { GatewayCall } from './context.js';

/** Rights of the calling key; a call without a key (admin-token legacy endpoints) has none to check. */
export const rightsOf = (call: GatewayCall) => call.key?.rights ?? {};
export const limitsOf = (call: GatewayCall) => call.deps.config.fieldLimits;

/** The body's problems with the members its templates require and it lacks added (each once). */
export function withTemplateNeeds(p: Problems, needs: { missing: string[] }): Problems {
  return { ...p, missing: mergeRequired(p.missing, needs.missing) };
}

/** What templates see: top-level request members, then every member of fields (SPEC §8). */
export function templateContext(body: Body): Record<string, unknown> {
  const fields = isObject(body.fields) ? body.fields : {};
  const top = Object.fromEntries(
    Object.entries(body).filter(([k]) => k !== 'fields' && k !== 'idempotency_key' && k !== 'consent'),
  );
  return { ...fields, ...top, fields };
}

/** Cart endpoints: a known cart type outside the key's rights is 403; an unknown one is a 422 later. */
export function checkCart(call: GatewayCall, body: Body): void {
  requirePermission(rightsOf(call), 'cart_events_write');
  const cart = body.cart_type;
  if (typeof cart === 'string' && isCartType(cart)) requireCartAllowed(rightsOf(call), cart);
}

/** The snapshot the key was checked against; legacy (admin-token) calls read the current one. */
export const configOf = (call: GatewayCall): Promise<ConfigSnapshot> =>
  call.config ? Promise.resolve(call.config) : configSnapshot(call.deps.db);

export const dropConsentProblems = (invalid: Record<string, string>) => {
  for (const k of Object.keys(invalid)) if (/^consent($|[.[])/.test(k)) delete invalid[k];
};

/** The body's `consent` items, checked against the project's topics; problems go into `invalid`. */
export function consentOf(
  call: GatewayCall,
  body: Body,
  topics: Topic[],
  invalid: Record<string, string>,
): ConsentItem[] {
  // The schema documents the items; readConsentList names their problems (one sentence per member).
  dropConsentProblems(invalid);
  return readConsentList(body.consent, new Set(topics.map((t) => t.key)), call.deps.clock.now(), invalid);
}
