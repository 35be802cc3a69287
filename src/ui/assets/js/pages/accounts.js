// @ts-check
// Administrators (SPEC §14): accounts (owners), each account's own tokens and sessions, the audit log.
import { api, describeError, meta, projects, qs } from '../api.js';
import {
  badge,
  checkbox,
  clear,
  code,
  confirmDialog,
  copyButton,
  field,
  h,
  jsonBlock,
  pager,
  select,
  table,
  time,
  toast,
} from '../dom.js';
import { showError } from '../errors.js';
import { t } from '../i18n.js';

/**
 * @typedef {import('../types.js').PageContext} PageContext
 * @typedef {import('../types.js').Project} Project
 * @typedef {import('../types.js').Role} Role
 * @typedef {import('../types.js').User} User
 * @typedef {import('../types.js').PersonalToken} PersonalToken
 * @typedef {import('../types.js').LoginSession} LoginSession
 */

/** @param {Role} r */
const roleLabel = (r) => t(`role.${r}`);

/**
 * Checkboxes of the projects an account may see.
 * @param {Project[]} all
 * @param {string[]} chosen the site keys ticked
 * @returns {{ node: HTMLElement, read: () => string[] }}
 */
function projectPicker(all, chosen) {
  const boxes = all.map((p) =>
    checkbox(p.site_key, chosen.includes(p.site_key), { name: 'projects', value: p.site_key }),
  );
  return {
    node: h('fieldset', { class: 'checks' }, h('legend', {}, t('users.projects')), boxes),
    read: () =>
      boxes.flatMap((b) => {
        const input = b.querySelector('input');
        return input?.checked ? [input.value] : [];
      }),
  };
}

export async function usersPage() {
  const [all, m] = await Promise.all([projects(), meta()]);
  const listBox = h('div', {});
  const formBox = h('div', {});

  async function refresh() {
    /** @type {User[]} */
    const users = (await api('GET', '/api/admin/users')).items;
    clear(listBox).append(
      table(
        [
          { label: t('common.email'), cell: (u) => u.email },
          { label: t('common.personName'), cell: (u) => u.name },
          { label: t('users.role'), cell: (u) => roleLabel(u.role) },
          {
            label: t('users.projects'),
            cell: (u) => (u.role === 'owner' ? t('users.allProjects') : u.projects.join(', ')),
          },
          {
            label: t('common.status'),
            cell: (u) => badge(t(`users.status.${u.status}`), u.status === 'active' ? 'ok' : 'muted'),
          },
          {
            label: t('common.actions'),
            cell: (u) =>
              u.status === 'active'
                ? h(
                    'div',
                    { class: 'actions' },
                    h(
                      'button',
                      { type: 'button', class: 'small', 'data-write': true, onclick: () => drawForm(u) },
                      t('users.edit'),
                    ),
                    h(
                      'button',
                      { type: 'button', class: 'small danger', 'data-write': true, onclick: () => disable(u) },
                      t('users.disable'),
                    ),
                  )
                : '—',
          },
        ],
        users,
      ),
    );
  }

  /** @param {User} u */
  async function disable(u) {
    if (!(await confirmDialog(t('users.disableQuestion', { email: u.email }), t('users.disable')))) return;
    try {
      await api('POST', `/api/admin/users/${u.id}/disable`);
      toast(t('users.disabled', { email: u.email }));
      await refresh();
    } catch (e) {
      toast(describeError(e), 'bad');
    }
  }

  /** @param {User | null} user the account edited; null: a new one */
  function drawForm(user) {
    /** @type {HTMLInputElement} */
    const email = h('input', { type: 'email', name: 'email', required: true, value: user?.email ?? '' });
    /** @type {HTMLInputElement} */
    const name = h('input', { type: 'text', name: 'name', value: user?.name ?? '' });
    /** @type {HTMLInputElement} */
    const password = h('input', { type: 'password', name: 'password', autocomplete: 'new-password', required: !user });
    /** @type {HTMLSelectElement} */
    const role = select(
      m.roles.map((r) => [r, roleLabel(r)]),
      user?.role ?? 'viewer',
      { name: 'role' },
    );
    const picker = projectPicker(all, user?.projects ?? []);
    const status = h('div', { 'aria-live': 'assertive' });
    const form = h(
      'form',
      {
        class: 'card',
        'data-write': true,
        onsubmit: async (ev) => {
          ev.preventDefault();
          status.replaceChildren();
          /** @type {{ email: string, name: string, role: string, projects: string[], password?: string }} */
          const body = {
            email: email.value.trim(),
            name: name.value.trim(),
            role: role.value,
            projects: picker.read(),
          };
          if (password.value) body.password = password.value;
          try {
            if (user) await api('PATCH', `/api/admin/users/${user.id}`, body);
            else await api('POST', '/api/admin/users', body);
            toast(t('common.saved'));
            clear(formBox);
            await refresh();
          } catch (e) {
            showError(status, e);
          }
        },
      },
      h('h2', {}, user ? t('users.editTitle', { email: user.email }) : t('users.new')),
      field(t('common.email'), email),
      field(t('common.personName'), name),
      field(t('login.password'), password, user ? t('users.passwordKeep') : t('setup.passwordHint')),
      field(t('users.role'), role, t('users.roleHint')),
      picker.node,
      status,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit', class: 'primary' }, user ? t('common.save') : t('common.create')),
      ),
    );
    clear(formBox).append(form);
    email.focus();
  }

  await refresh();
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, t('users.title')),
    h('p', { class: 'muted' }, t('users.about')),
    h('p', {}, h('button', { type: 'button', 'data-write': true, onclick: () => drawForm(null) }, t('users.new'))),
    listBox,
    formBox,
  );
}

/** @param {PageContext} ctx */
export async function tokensPage(ctx) {
  const session = ctx.session;
  if (!session?.account?.id)
    return h('section', {}, h('h1', { tabindex: '-1' }, t('tokens.title')), h('p', {}, t('tokens.rootHasNone')));
  const listBox = h('div', {});
  const newBox = h('div', { 'aria-live': 'polite' });
  const sessionsBox = h('div', {});

  async function refresh() {
    /** @type {[{ items: PersonalToken[] }, { items: LoginSession[] }]} */
    const [tokens, sessions] = await Promise.all([api('GET', '/api/admin/tokens'), api('GET', '/api/admin/sessions')]);
    clear(listBox).append(
      table(
        [
          { label: t('common.name'), cell: (k) => k.name },
          { label: t('keys.key'), cell: (k) => code(`…${k.last4}`) },
          { label: t('tokens.access'), cell: (k) => (k.read_only ? t('tokens.readOnly') : t('tokens.readWrite')) },
          {
            label: t('common.status'),
            cell: (k) => badge(t(`tokens.status.${k.status}`), k.status === 'active' ? 'ok' : 'muted'),
          },
          { label: t('tokens.expires'), cell: (k) => time(k.expires_at) },
          { label: t('tokens.lastUsed'), cell: (k) => time(k.last_used_at) },
          {
            label: t('common.actions'),
            cell: (k) =>
              k.status === 'active'
                ? h(
                    'button',
                    { type: 'button', class: 'small danger', 'data-write': true, onclick: () => revoke(k) },
                    t('tokens.revoke'),
                  )
                : '—',
          },
        ],
        tokens.items,
        { empty: t('tokens.empty') },
      ),
    );
    clear(sessionsBox).append(
      table(
        [
          { label: t('common.created'), cell: (s) => time(s.created_at) },
          { label: t('tokens.lastSeen'), cell: (s) => time(s.last_seen) },
          { label: t('tokens.expires'), cell: (s) => time(s.expires_at) },
          {
            label: t('common.actions'),
            cell: (s) =>
              s.current
                ? t('tokens.thisSession')
                : h(
                    'button',
                    { type: 'button', class: 'small', 'data-write': true, onclick: () => endSession(s) },
                    t('tokens.endSession'),
                  ),
          },
        ],
        sessions.items,
      ),
    );
  }

  /** @param {PersonalToken} k */
  async function revoke(k) {
    if (!(await confirmDialog(t('tokens.revokeQuestion', { name: k.name }), t('tokens.revoke')))) return;
    try {
      await api('POST', `/api/admin/tokens/${k.id}/revoke`);
      await refresh();
    } catch (e) {
      toast(describeError(e), 'bad');
    }
  }

  /** @param {LoginSession} s */
  async function endSession(s) {
    try {
      await api('DELETE', `/api/admin/sessions/${s.id}`);
      await refresh();
    } catch (e) {
      toast(describeError(e), 'bad');
    }
  }

  /** @type {HTMLInputElement} */
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: '200' });
  /** @type {HTMLLabelElement} */
  const readOnly = checkbox(
    t('tokens.readOnlyOption'),
    session.account.read_only || session.account.role === 'viewer',
    { name: 'read_only' },
  );
  /** @type {HTMLInputElement} */
  const expires = h('input', { type: 'date', name: 'expires' });
  const status = h('div', { 'aria-live': 'assertive' });
  const form = h(
    'form',
    {
      class: 'card',
      // A viewer changes nothing, its own tokens and sessions included (SPEC §21).
      'data-write': true,
      onsubmit: async (ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          const box = /** @type {HTMLInputElement} checkbox() holds one */ (readOnly.querySelector('input'));
          /** @type {{ name: string, read_only: boolean, expires_at?: string }} */
          const body = { name: name.value.trim(), read_only: box.checked };
          if (expires.value) body.expires_at = new Date(`${expires.value}T23:59:59Z`).toISOString();
          /** @type {import('../types.js').CreatedToken} */
          const created = await api('POST', '/api/admin/tokens', body);
          const value = code(created.token);
          value.classList.add('secret');
          clear(newBox).append(
            h(
              'div',
              { class: 'card new-key', role: 'status' },
              h('p', {}, t('tokens.shownOnce')),
              value,
              copyButton(created.token, value),
            ),
          );
          name.value = '';
          await refresh();
        } catch (e) {
          showError(status, e);
        }
      },
    },
    h('h2', {}, t('tokens.new')),
    field(t('common.name'), name, t('tokens.nameHint')),
    readOnly,
    field(t('tokens.expires'), expires),
    status,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, t('tokens.create'))),
  );
  await refresh();
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, t('tokens.title')),
    h('p', { class: 'muted' }, t('tokens.about')),
    newBox,
    listBox,
    form,
    h('h2', {}, t('tokens.sessions')),
    sessionsBox,
  );
}

/** @param {PageContext} ctx */
export async function auditPage(ctx) {
  const [all, m] = await Promise.all([projects(), meta()]);
  const q = ctx.query;
  const filters = {
    site_key: q.get('site_key') ?? '',
    actor: q.get('actor') ?? '',
    action: q.get('action') ?? '',
    cursor: q.get('cursor') ?? '',
  };
  /** @type {HTMLSelectElement} */
  const site = select([['', t('common.allProjects')], ...all.map((p) => [p.site_key, p.site_key])], filters.site_key, {
    name: 'site_key',
  });
  /** @type {HTMLInputElement} */
  const actor = h('input', { type: 'text', name: 'actor', value: filters.actor });
  /** @type {HTMLSelectElement} */
  const action = select([['', t('audit.anyAction')], ...m.audit_actions.map((a) => [a, a])], filters.action, {
    name: 'action',
  });
  /** @type {import('../types.js').Page<import('../types.js').AuditEntry>} */
  const page = await api('GET', `/api/admin/audit${qs({ ...filters, limit: 50 })}`);
  const form = h(
    'form',
    {
      class: 'filters',
      onsubmit: (ev) => {
        ev.preventDefault();
        ctx.navigate(`/ui/audit${qs({ site_key: site.value, actor: actor.value.trim(), action: action.value })}`);
      },
    },
    field(t('common.project'), site),
    field(t('audit.actor'), actor),
    field(t('audit.action'), action),
    h('button', { type: 'submit' }, t('audit.filter')),
  );
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, t('audit.title')),
    h('p', { class: 'muted' }, t('audit.about')),
    form,
    table(
      [
        { label: t('audit.at'), cell: (r) => time(r.at) },
        {
          label: t('audit.actor'),
          cell: (r) =>
            h(
              'span',
              {},
              r.actor,
              ' ',
              r.token
                ? badge(t('audit.viaToken', { name: r.token.name, id: r.token.id }))
                : badge(t(`audit.via.${r.via}`)),
            ),
        },
        { label: t('audit.action'), cell: (r) => code(r.action) },
        { label: t('common.project'), cell: (r) => r.site_key ?? '—' },
        { label: t('audit.target'), cell: (r) => r.target ?? '—' },
        { label: t('audit.address'), cell: (r) => r.address ?? '—' },
        {
          label: t('audit.change'),
          cell: (r) =>
            h(
              'details',
              {},
              h('summary', {}, t('audit.show')),
              r.before ? jsonBlock(r.before, t('audit.before')) : null,
              jsonBlock(r.after, t('audit.after')),
            ),
        },
      ],
      page.items,
      { empty: t('audit.empty') },
    ),
    pager({
      info: null,
      prev: filters.cursor ? () => history.back() : null,
      next: page.next_cursor ? () => ctx.navigate(`/ui/audit${qs({ ...filters, cursor: page.next_cursor })}`) : null,
    }),
  );
}
