// @ts-check
// Why a gateway request was refused, in the administrator's words (issue 37): the members the answer
// named as missing or invalid, each by name with what was wrong in the UI's language, from what the
// chronology kept of the answer (effects.refusal, domain/refusal.ts), and whether a replay can help.
import { catalogueSentence } from '../errors.js';
import { code, h } from '../dom.js';
import { hasKey, t, tNodes } from '../i18n.js';

/** @typedef {import('../pageTypes.js').EventView} EventView */
/**
 * effects.refusal: the members of the answer the site was given.
 * @typedef {{ reason?: string, params?: Record<string, string | number>, missing_fields?: string[],
 *   invalid_fields?: Record<string, string> }} StoredRefusal
 */

// The gateway's problem texts (schemas/ajv.ts errorReason, domain/validation.ts) and their catalogue
// entries; a text not listed here is shown as «значение не подходит», with the API's words in the tooltip.
/** @type {[RegExp, string][]} */
const PROBLEMS = [
  [/^must be a valid e-mail address$/, 'refusal.problem.email'],
  [/^must be a string$/, 'refusal.problem.string'],
  [/^must be an integer$/, 'refusal.problem.integer'],
  [/^must be a number$/, 'refusal.problem.number'],
  [/^must be a object$/, 'refusal.problem.object'],
  [/^must be a array$/, 'refusal.problem.array'],
  [/^must be a boolean$/, 'refusal.problem.boolean'],
  [/^must not be empty$/, 'refusal.problem.empty'],
  [/^is not a member of this request$/, 'refusal.problem.unknownMember'],
  [/^must be at most (?<n>\d+) characters$/, 'refusal.problem.tooLong'],
  [/^must have at most (?<n>\d+) members$/, 'refusal.problem.tooManyMembers'],
  [/^must be one of: (?<list>.*)$/, 'refusal.problem.oneOf'],
  [/^must be a valid (?<format>[\w-]+)$/, 'refusal.problem.format'],
];

/**
 * What was wrong with one member, in the UI's language.
 * @param {string} problem the API's English text
 */
export function problemText(problem) {
  for (const [re, key] of PROBLEMS) {
    const m = re.exec(problem);
    if (m) return t(key, { ...m.groups });
  }
  return t('refusal.problem.other');
}

/** @param {EventView} e */
const storedRefusal = (e) => /** @type {StoredRefusal | null} */ (/** @type {unknown} */ (e.effects?.refusal ?? null));

/**
 * The members the answer named, by name: missing ones in one line, invalid ones each with its problem.
 * @param {StoredRefusal} r
 */
function members(r) {
  const missing = r.missing_fields ?? [];
  const invalid = Object.entries(r.invalid_fields ?? {});
  if (!missing.length && !invalid.length) return null;
  return h(
    'div',
    { class: 'refusal-members' },
    missing.length
      ? h(
          'p',
          { class: 'refusal-missing' },
          ...tNodes('refusal.missing', {
            count: missing.length,
            fields: h(
              'span',
              {},
              missing.map((f, i) => [i ? ', ' : '', code(f)]),
            ),
          }),
        )
      : null,
    invalid.length
      ? h(
          'div',
          {},
          h('p', {}, t('refusal.invalid')),
          h(
            'ul',
            { class: 'refusal-invalid' },
            invalid.map(([f, problem]) => h('li', { title: problem }, code(f), ' — ', problemText(problem))),
          ),
        )
      : null,
  );
}

/**
 * The «why refused» box: the code's meaning, the members named, the key's field to fix (rightFix).
 * @param {EventView} e
 * @param {import('../dom.js').Child} rightFix
 */
export function whyBox(e, rightFix) {
  const r = storedRefusal(e);
  const listed = r ? members(r) : null;
  // The reason's own sentence, when the answer had one and no list says it better.
  const sentence = r?.reason && !listed ? catalogueSentence(`reason.${r.reason}`, r.params) : null;
  const meaning = hasKey(`why.${e.error_code}`) ? t(`why.${e.error_code}`) : t('events.whyUnknown');
  return h(
    'div',
    { class: 'notice bad' },
    h('h2', {}, t('events.whyTitle')),
    h(
      'p',
      {},
      ...tNodes('events.why', {
        code: code(e.error_code ?? '—'),
        status: e.http_status,
        reason: listed ? t('refusal.named') : meaning,
      }),
    ),
    listed,
    sentence ? h('p', { class: 'refusal-sentence' }, sentence) : null,
    rightFix,
    !e.replayable && e.outcome === 'rejected'
      ? h('p', { class: 'muted refusal-no-replay' }, t('refusal.siteMustResend'))
      : null,
  );
}
