// @ts-check
// Key rights that explain themselves (issue 28): a warning when a key may send no event, with the two
// usual answers one click away, and a ready PHP snippet for the key (clients/php) that sends one of its
// events with what this project's catalog and templates require.
import { code, copyButton, h } from '../dom.js';
import { hasKey, t, tNodes } from '../i18n.js';
import { requestNeeds } from './contract.js';

/**
 * @typedef {import('../types.js').UiMeta} UiMeta
 * @typedef {import('../types.js').Routes} Routes
 * @typedef {import('../types.js').ApiKey} ApiKey
 * @typedef {Map<string, import('../types.js').TemplateSummary>} TemplatesByName
 * @typedef {'permissions' | 'allowed_api_events' | 'allowed_cart_types' | 'allowed_template_keys'} KeyRight
 *   a right of the key form (a member of the key's `rights`)
 */

// The command that runs the snippet saved as send.php (a command, not a sentence).
const RUN = ['php', 'send.php'].join(' ');

/**
 * The key form's field names a 403 of the gateway points at (events.js links to them).
 * @type {Readonly<Record<string, KeyRight | undefined>>}
 */
export const RIGHT_OF_ERROR = {
  permission_denied: 'permissions',
  event_type_not_allowed: 'allowed_api_events',
  cart_type_not_allowed: 'allowed_cart_types',
  template_not_allowed: 'allowed_template_keys',
};

/** @type {Record<KeyRight, string>} */
const RIGHT_LABEL = {
  permissions: 'keys.permissions',
  allowed_api_events: 'keys.catalogEvents',
  allowed_cart_types: 'keys.cartTypes',
  allowed_template_keys: 'keys.templateKeys',
};

/**
 * Where a refusal of the gateway is fixed: a link to the right on the key's form, named as the form
 * labels it; null for an error no right explains.
 * @param {string | null} errorCode the refusal's code
 * @param {string} siteKey
 * @param {string | null} last4 the key that was refused
 */
export function rightLink(errorCode, siteKey, last4) {
  const right = errorCode ? RIGHT_OF_ERROR[errorCode] : undefined;
  if (!right) return null;
  return h(
    'a',
    {
      href: `/ui/projects/${encodeURIComponent(siteKey)}?tab=keys&key=${encodeURIComponent(last4 ?? '')}&right=${right}`,
    },
    t(RIGHT_LABEL[right]),
  );
}

/**
 * Events a project routes (event types, not cart steps) and the cart types whose steps it routes.
 * @param {UiMeta} m
 * @param {Routes} routes
 */
export function routedRights(m, routes) {
  const keys = Object.keys(routes);
  return {
    events: keys.filter((k) => !/_abandoned_cart_/.test(k)),
    carts: m.cart_types.filter((c) => keys.some((k) => k.startsWith(`${c}_abandoned_cart_`))),
  };
}

/**
 * The warning under the event lists while none is ticked. `tick(names)` ticks event types;
 * `anyTicked()` says whether one is; the caller calls `refresh()` once the form is built and on every change.
 * @param {UiMeta} m
 * @param {Routes} routes
 * @param {(eventTypes: string[]) => void} tick
 * @param {() => boolean} anyTicked
 */
export function emptyEventsWarning(m, routes, tick, anyTicked) {
  const routed = routedRights(m, routes).events;
  /** @type {HTMLElement} */
  const box = h(
    'div',
    { class: 'notice bad empty-events', role: 'status' },
    h('p', {}, h('strong', {}, t('keys.noEventsWarning')), ' ', t('keys.noEventsHelp')),
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        { type: 'button', onclick: () => tick(m.catalog.map((e) => e.event_type)) },
        t('keys.tickCatalog', { n: m.catalog.length }),
      ),
      h(
        'button',
        { type: 'button', disabled: !routed.length, onclick: () => tick(routed) },
        t('keys.tickRouted', { n: routed.length }),
      ),
    ),
  );
  const refresh = () => {
    box.hidden = anyTicked();
  };
  return { node: box, refresh };
}

// Example values for the snippet, by member name: what a course site would send. Words come from the
// catalogue (keys.sample.*); numbers, codes and addresses are the same in every language.
/** @type {Record<string, string>} */
const SAMPLE = {
  email: 'anna@example.com',
  order_id: '1001',
  amount: '2500',
  currency: 'RUB',
  paid_at: '2026-01-15',
  place: '1',
  score: '95',
  track_number: 'RA123456789RU',
  participants: '12',
  phone: '+7 900 000-00-00',
};
/** @param {string} name */
const sample = (name) =>
  SAMPLE[name] ??
  (hasKey(`keys.sample.${name}`)
    ? t(`keys.sample.${name}`)
    : name.endsWith('_url')
      ? `https://site.example/${name}`
      : t('keys.sample.other'));
/**
 * A PHP string literal.
 * @param {string} s
 */
const php = (s) => `'${String(s).replace(/[\\']/g, (c) => `\\${c}`)}'`;

/**
 * The body of a call as a PHP array: `first` ([member, value]) then what the request needs, fields nested.
 * @param {[string, string][]} first
 * @param {string[]} needs member names (`fields.x` for a field)
 */
function phpBody(first, needs) {
  const names = [...new Set([...first.map(([n]) => n), 'email', 'name', 'order_id', ...needs])];
  const given = new Map(first);
  const lines = names
    .filter((n) => !n.startsWith('fields.'))
    .map((n) => `    ${php(n)} => ${php(given.get(n) ?? sample(n))},`);
  const fields = names.filter((n) => n.startsWith('fields.')).map((n) => n.slice(7));
  if (fields.length) {
    lines.push(`    'fields' => [`);
    for (const f of fields) lines.push(`        ${php(f)} => ${php(sample(f))},`);
    lines.push('    ],');
  }
  return lines.join('\n');
}

/**
 * The call the snippet makes: a transactional e-mail of a routed allowed event, else an order of a cart.
 * @param {UiMeta} m
 * @param {Pick<ApiKey, 'rights'>} key
 * @param {Routes} routes
 * @param {TemplatesByName} byName
 */
function snippetCall(m, key, routes, byName) {
  const r = key.rights;
  const perms = r.permissions ?? [];
  const events = r.allowed_api_events ?? [];
  const event = events.find((e) => routes[e]) ?? events[0];
  /** @param {string} what an event type or a cart type */
  const needs = (what) => requestNeeds(m, routes, byName, what).map((x) => x.name);
  if (perms.includes('transactional_send') && event)
    return { method: 'sendTransactional', body: phpBody([['event_type', event]], needs(event)) };
  const cart = (r.allowed_cart_types ?? [])[0];
  if (perms.includes('cart_events_write') && cart)
    return { method: 'orderCreated', body: phpBody([['cart_type', cart]], [...needs(cart), 'fields.pay_url']) };
  return null;
}

/**
 * The PHP file, or null when the key may send nothing yet. `secret`: the full key, known only at creation.
 * @param {UiMeta} m
 * @param {Pick<ApiKey, 'rights' | 'last4'>} key
 * @param {string | null | undefined} secret
 * @param {Routes} routes
 * @param {TemplatesByName} byName
 */
export function phpSnippet(m, key, secret, routes, byName) {
  const call = snippetCall(m, key, routes, byName);
  if (!call) return null;
  const url = m.public_url || location.origin;
  const keyArg = secret
    ? `    ${php(secret)},`
    : `    getenv('GATEWAY_API_KEY'), // ${t('keys.snippetKeyComment', { last4: key.last4 })}`;
  return t('keys.snippetPhp', { url: php(url), key: keyArg, method: call.method, body: call.body });
}

/**
 * The snippet with its explanation and a copy button; a note instead while the key may send nothing.
 * @param {UiMeta} m
 * @param {Pick<ApiKey, 'rights' | 'last4'>} key
 * @param {string | null | undefined} secret
 * @param {Routes} routes
 * @param {TemplatesByName} byName
 */
export function snippetBox(m, key, secret, routes, byName) {
  const text = phpSnippet(m, key, secret, routes, byName);
  if (!text) return h('p', { class: 'muted' }, t('keys.snippetNone'));
  const pre = h('pre', { class: 'snippet' }, h('code', {}, text));
  return h(
    'div',
    { class: 'php-snippet', 'data-key': key.last4 },
    h('p', {}, secret ? t('keys.snippetWithKey') : t('keys.snippetPlaceholder')),
    h('p', { class: 'muted' }, ...tNodes('keys.snippetHowTo', { command: code(RUN) })),
    pre,
    copyButton(text, pre),
  );
}
