// @ts-check
// Log in with the admin token (SPEC §6). The token goes to the server once and is exchanged for an
// HttpOnly session cookie; the page never stores it.
import { api, ApiError, describeError } from '../api.js';
import { errorBox, field, h } from '../dom.js';
import { t } from '../i18n.js';

export async function loginPage(ctx) {
  const next = ctx.query.get('next');
  const safeNext = next && next.startsWith('/ui/') && !next.startsWith('/ui/login') ? next : '/ui/';
  const token = h('input', {
    type: 'password',
    name: 'token',
    autocomplete: 'current-password',
    required: true,
    spellcheck: 'false',
    'data-autofocus': true,
  });
  const status = h('div', { 'aria-live': 'assertive' });
  const button = h('button', { type: 'submit', class: 'primary' }, t('login.submit'));
  const form = h(
    'form',
    {
      class: 'login',
      onsubmit: async (ev) => {
        ev.preventDefault();
        status.replaceChildren();
        button.disabled = true;
        try {
          const session = await api('POST', '/api/admin/session', { token: token.value }, { quiet401: true });
          ctx.loggedIn(session);
          ctx.navigate(safeNext, { replace: true });
        } catch (e) {
          const msg = e instanceof ApiError && e.status === 401 ? t('login.wrongToken') : describeError(e);
          status.append(errorBox(msg));
          token.select();
          token.focus();
        } finally {
          button.disabled = false;
        }
      },
    },
    field(t('login.token'), token, t('login.tokenHint')),
    status,
    button,
  );
  return h(
    'section',
    { class: 'login-page' },
    h('h1', { tabindex: '-1' }, t('login.title')),
    h('p', { class: 'muted' }, t('login.about')),
    form,
  );
}
