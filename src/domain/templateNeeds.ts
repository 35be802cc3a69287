// What each kind of request must carry because of the templates it would send (SPEC §16), computed
// from a project's configuration: a transactional event needs what its routed template requires; an
// order-created of a cart type needs what every template of its cart chain requires. One pure function,
// so the catalog, the key page and the impact check (configuration before and after a change) agree.
import { defaultChainKeys } from './cartChain.js';
import { CART_REQUIRED, CART_TYPES, requiredFieldsFor } from './catalog.js';

export interface NeedsConfig {
  /** routing key -> template name */
  routes: Record<string, string>;
  /** cart type -> the template names of its configured sequence (replacing the default chain) */
  chains: Record<string, string[]>;
  /** template name -> members it requires (an unchecked template requires none) */
  required: ReadonlyMap<string, readonly string[]>;
}

export interface Need {
  endpoint: 'transactional' | 'order-created';
  /** As the chronology logs it: the event type, or `<cart_type>_order_created`. */
  event_type: string;
  /** template name -> its required members */
  templates: Record<string, string[]>;
}

const key = (endpoint: string, eventType: string) => `${endpoint} ${eventType}`;

export function needsOf(c: NeedsConfig): Map<string, Need> {
  const out = new Map<string, Need>();
  const req = (name: string) => [...(c.required.get(name) ?? [])];
  for (const [routingKey, name] of Object.entries(c.routes)) {
    if (CART_TYPES.some((cart) => defaultChainKeys(cart).includes(routingKey))) continue;
    out.set(key('transactional', routingKey), {
      endpoint: 'transactional',
      event_type: routingKey,
      templates: { [name]: req(name) },
    });
  }
  for (const cart of CART_TYPES) {
    const names = c.chains[cart] ?? defaultChainKeys(cart).flatMap((k) => (c.routes[k] ? [c.routes[k]] : []));
    if (names.length === 0) continue;
    out.set(key('order-created', `${cart}_order_created`), {
      endpoint: 'order-created',
      event_type: `${cart}_order_created`,
      templates: Object.fromEntries(names.map((n) => [n, req(n)])),
    });
  }
  return out;
}

/** Every member a need's templates require, once each. */
export const requiredOfNeed = (n: Need | undefined): string[] => [...new Set(Object.values(n?.templates ?? {}).flat())];

export interface ImpactDraft {
  endpoint: Need['endpoint'];
  event_type: string;
  template_key: string;
  newly_required: string[];
}

/** Members each event would newly require after a configuration change, per template that requires them. */
export function newlyRequiredByChange(before: Map<string, Need>, after: Map<string, Need>): ImpactDraft[] {
  const out: ImpactDraft[] = [];
  for (const [k, need] of after) {
    // Members the catalog requires anyway are not new to any site.
    const had = new Set([...requiredOfNeed(before.get(k)), ...baseRequired(need.endpoint, need.event_type)]);
    for (const [template, members] of Object.entries(need.templates)) {
      const fresh = members.filter((m) => !had.has(m));
      if (fresh.length)
        out.push({
          endpoint: need.endpoint,
          event_type: need.event_type,
          template_key: template,
          newly_required: fresh,
        });
    }
  }
  return out;
}

/** What the catalog alone requires of the request kind (templates aside). */
export const baseRequired = (endpoint: string, eventType: string): string[] =>
  endpoint === 'order-created' ? [...CART_REQUIRED] : requiredFieldsFor(eventType);
