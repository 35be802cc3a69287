// @ts-check
// First run (SPEC §14): the one-time link printed by `serve` opens this page; the first owner chooses
// an e-mail and a password, and is logged in.
import { api, ApiError } from '../api.js';
import { errorBox, field, h } from '../dom.js';
import { showError } from '../errors.js';
import { t } from '../i18n.js';

/** @param {import('../types.js').PageContext} ctx */
export async function setupPage(ctx) {
  const code = ctx.query.get('code') ?? '';
  /** @type {HTMLInputElement} */
  const email = h('input', {
    type: 'email',
    name: 'email',
    autocomplete: 'username',
    required: true,
    'data-autofocus': true,
  });
  /** @type {HTMLInputElement} */
  const name = h('input', { type: 'text', name: 'name', autocomplete: 'name' });
  /** @type {HTMLInputElement} */
  const password = h('input', {
    type: 'password',
    name: 'password',
    autocomplete: 'new-password',
    required: true,
    minlength: '10',
  });
  const status = h('div', { 'aria-live': 'assertive' });
  /** @type {HTMLButtonElement} */
  const button = h('button', { type: 'submit', class: 'primary' }, t('setup.submit'));
  const form = h(
    'form',
    {
      class: 'login',
      onsubmit: async (ev) => {
        ev.preventDefault();
        status.replaceChildren();
        button.disabled = true;
        try {
          await api('POST', '/api/admin/setup', {
            code,
            email: email.value.trim(),
            name: name.value.trim() || undefined,
            password: password.value,
          });
          /** @type {import('../types.js').Session} */
          const session = await api('POST', '/api/admin/session', {
            email: email.value.trim(),
            password: password.value,
          });
          ctx.loggedIn(session);
          ctx.navigate('/ui/', { replace: true });
        } catch (e) {
          if (e instanceof ApiError && e.status === 404) status.append(errorBox(t('setup.badLink')));
          else showError(status, e);
        } finally {
          button.disabled = false;
        }
      },
    },
    field(t('common.email'), email),
    field(t('common.personName'), name),
    field(t('login.password'), password, t('setup.passwordHint')),
    status,
    button,
  );
  return h(
    'section',
    { class: 'login-page' },
    h('h1', { tabindex: '-1' }, t('setup.title')),
    h('p', { class: 'muted' }, t('setup.about')),
    code ? form : errorBox(t('setup.badLink')),
  );
}
