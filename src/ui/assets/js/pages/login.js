// @ts-check
// Log in (SPEC §14): with an account's e-mail and password, or with a token (the root ADMIN_TOKEN or a
// personal token). Either goes to the server once and is exchanged for an HttpOnly session cookie; the
// page never stores it.
import { api, ApiError, describeError } from '../api.js';
import { errorBox, field, h } from '../dom.js';
import { t } from '../i18n.js';

/**
 * @typedef {import('../types.js').PageContext} PageContext
 * @typedef {import('../types.js').Session} Session
 */

/**
 * One way to log in: its fields (the last one holds the secret, selected again after a refusal), the
 * request body they make, the sentence for a refused login, and the page to open once logged in.
 * @param {PageContext} ctx
 * @param {{ fields: HTMLElement[], body: () => { email: string, password: string } | { token: string },
 *   wrong: string, submitLabel: string, next: string }} way
 */
function loginForm(ctx, { fields, body, wrong, submitLabel, next }) {
  const status = h('div', { 'aria-live': 'assertive' });
  /** @type {HTMLButtonElement} */
  const button = h('button', { type: 'submit', class: 'primary' }, submitLabel);
  return h(
    'form',
    {
      class: 'login',
      onsubmit: async (ev) => {
        ev.preventDefault();
        status.replaceChildren();
        button.disabled = true;
        try {
          /** @type {Session} */
          const session = await api('POST', '/api/admin/session', body(), { quiet401: true });
          ctx.loggedIn(session);
          ctx.navigate(next, { replace: true });
        } catch (e) {
          const msg = e instanceof ApiError && e.status === 401 ? wrong : describeError(e);
          status.append(errorBox(msg));
          const last = /** @type {HTMLInputElement} every field holds an input */ (
            fields[fields.length - 1].querySelector('input')
          );
          last.select();
          last.focus();
        } finally {
          button.disabled = false;
        }
      },
    },
    fields,
    status,
    button,
  );
}

/** @param {PageContext} ctx */
export async function loginPage(ctx) {
  const next = ctx.query.get('next');
  const safeNext = next && next.startsWith('/ui/') && !next.startsWith('/ui/login') ? next : '/ui/';
  /** @type {HTMLInputElement} */
  const email = h('input', {
    type: 'email',
    name: 'email',
    autocomplete: 'username',
    required: true,
    'data-autofocus': true,
    value: ctx.query.get('email') ?? '',
  });
  /** @type {HTMLInputElement} */
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  /** @type {HTMLInputElement} */
  const token = h('input', {
    type: 'password',
    name: 'token',
    autocomplete: 'off',
    required: true,
    spellcheck: 'false',
  });
  return h(
    'section',
    { class: 'login-page' },
    h('h1', { tabindex: '-1' }, t('login.title')),
    h('p', { class: 'muted' }, t('login.about')),
    loginForm(ctx, {
      fields: [field(t('common.email'), email), field(t('login.password'), password)],
      body: () => ({ email: email.value.trim(), password: password.value }),
      wrong: t('login.wrongPassword'),
      submitLabel: t('login.submit'),
      next: safeNext,
    }),
    h(
      'details',
      { class: 'login-token', open: ctx.query.get('via') === 'token' },
      h('summary', {}, t('login.withToken')),
      loginForm(ctx, {
        fields: [field(t('login.token'), token, t('login.tokenHint'))],
        body: () => ({ token: token.value }),
        wrong: t('login.wrongToken'),
        submitLabel: t('login.submitToken'),
        next: safeNext,
      }),
    ),
  );
}
