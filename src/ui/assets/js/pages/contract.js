// @ts-check
// Templates with a contract (SPEC §16) as the pages show it: what a template requires, what a request of
// an event must carry (catalog and templates together), and the impact answer of a change with the
// choice to confirm it. Shared by the template editor, the routing page and the key page.
import { ApiError } from '../api.js';
import { badge, code, h } from '../dom.js';
import { fmtNumber, t } from '../i18n.js';

/** @typedef {import('../pageTypes.js').ImpactEntry} ImpactEntry */
/** @typedef {import('../pageTypes.js').TemplateVariable} TemplateVariable */
/** @typedef {import('../pageTypes.js').UiMeta} UiMeta */
/** A template as far as its contract goes (the list's and the editor's both have these). */
/** @typedef {{ variables?: TemplateVariable[], unchecked: boolean }} Contracted */
/** A member a request must carry; `template`: required by a template, not by the catalog. */
/** @typedef {{ name: string, template: boolean }} Need */

/**
 * The members a template requires (none when it is unchecked: saved before variables were analysed).
 * @param {Contracted | null | undefined} template
 * @returns {string[]}
 */
export const requiredOf = (template) =>
  template && !template.unchecked ? (template.variables ?? []).filter((v) => v.required).map((v) => v.name) : [];

const CART_REQUIRED = ['email', 'order_id', 'cart_type'];

/**
 * What the catalog alone requires of a routing key's requests.
 * @param {UiMeta} m
 * @param {string} key
 */
export function catalogRequired(m, key) {
  if (/_abandoned_cart_/.test(key)) return CART_REQUIRED;
  const e = m.catalog.find((c) => c.event_type === key);
  return ['event_type', 'email', ...(e ? e.fields.map((f) => `fields.${f}`) : [])];
}

/**
 * Template needs the catalog does not announce: a site following the catalog would be refused.
 * @param {UiMeta} m
 * @param {string} key
 * @param {Contracted | undefined} template
 */
export function uncovered(m, key, template) {
  const base = catalogRequired(m, key);
  return requiredOf(template).filter((n) => !base.includes(n));
}

/**
 * What a request of an event type (or an order of a cart type) must carry in this project.
 * @param {UiMeta} m
 * @param {Record<string, string>} routes routing key -> template name
 * @param {Map<string, Contracted>} templatesByName
 * @param {string} eventType
 * @returns {Need[]}
 */
export function requestNeeds(m, routes, templatesByName, eventType) {
  const keys = m.cart_types.includes(eventType)
    ? m.cart_steps.map((s) => `${eventType}_abandoned_cart_${s.step}`)
    : [eventType];
  const base = m.cart_types.includes(eventType) ? CART_REQUIRED : catalogRequired(m, eventType);
  const fromTemplates = keys.flatMap((k) => requiredOf(templatesByName.get(routes[k])));
  return [...new Set([...base, ...fromTemplates])].map((name) => ({ name, template: !base.includes(name) }));
}

/**
 * Member names as code, template-only ones marked.
 * @param {Need[]} items
 */
export function memberList(items) {
  return items.map((i) => [
    code(i.name),
    i.template ? h('sup', { class: 'muted', title: t('contract.fromTemplate') }, '*') : null,
    ' ',
  ]);
}

/**
 * The variables of a template: required ones marked.
 * @param {TemplateVariable[]} variables
 * @param {boolean} unchecked
 */
export function variablesList(variables, unchecked) {
  if (unchecked) return h('p', { class: 'notice' }, t('contract.unchecked'));
  if (!variables.length) return h('p', { class: 'muted' }, t('contract.noVariables'));
  return h(
    'ul',
    { class: 'variables' },
    variables.map((v) =>
      h(
        'li',
        { 'data-variable': v.name, 'data-required': v.required ? 'true' : 'false' },
        code(v.name),
        ' ',
        v.required ? badge(t('contract.required'), 'warn') : badge(t('contract.optional'), 'muted'),
      ),
    ),
  );
}

/**
 * "37 of the 1,204 course_paid requests of the last 7 days had no fields.course_name".
 * @param {ImpactEntry} i
 */
export const impactSentence = (i) =>
  t('contract.impactLine', {
    failing: fmtNumber(i.would_fail_7d),
    total: fmtNumber(i.requests_7d),
    event: i.event_type,
    members: i.newly_required.join(', '),
    template: i.template_key,
  });

/**
 * The impact answer as a warning; `onConfirm` (optional) offers to go ahead anyway.
 * @param {ImpactEntry[]} impact
 * @param {() => void} [onConfirm]
 */
export function impactBox(impact, onConfirm) {
  const failing = impact.filter((i) => i.would_fail_7d > 0);
  if (!failing.length) return null;
  return h(
    'div',
    { class: 'notice impact', role: 'alert' },
    h('strong', {}, t('contract.impactTitle')),
    h(
      'ul',
      {},
      failing.map((i) => h('li', {}, impactSentence(i))),
    ),
    h('p', {}, t('contract.impactHelp')),
    onConfirm
      ? h('button', { type: 'button', class: 'danger', 'data-write': true, onclick: onConfirm }, t('contract.confirm'))
      : null,
  );
}

/**
 * The impact entries of a 409 template_impact, or null for any other error.
 * @param {unknown} e what a request threw
 * @returns {ImpactEntry[] | null}
 */
export const impactOf = (e) =>
  e instanceof ApiError && e.status === 409 && e.detail?.code === 'template_impact'
    ? /** @type {ImpactEntry[]} */ (e.detail.impact) // the member a template_impact error carries
    : null;
