// @ts-check
// The admin UI's shell: session bootstrap, the top bar, and a small history-API router. Every page is
// a module function that returns a DOM node; links are real links (keyboard, middle-click and bookmarks
// work), and the router only intercepts plain clicks on same-origin /ui/ links.
import { api, ApiError, describeError, meta, setCsrfToken, setUnauthorizedHandler } from './api.js';
import { clear, errorBox, h, select, setStatusTones, toast } from './dom.js';
import { language, LANGUAGES, setLanguage, t } from './i18n.js';
import { contactPage, contactsPage } from './pages/contacts.js';
import { dashboardPage } from './pages/dashboard.js';
import { emailPage, emailsPage } from './pages/emails.js';
import { eventPage, eventsPage } from './pages/events.js';
import { listPage } from './pages/lists.js';
import { auditPage, tokensPage, usersPage } from './pages/accounts.js';
import { loginPage } from './pages/login.js';
import { setupPage } from './pages/setup.js';
import { projectPage, projectsPage } from './pages/projects.js';
import { templateEditorPage } from './pages/templates.js';

/**
 * @typedef {import('./types.js').PageContext} PageContext
 * @typedef {import('./types.js').NavigateOptions} NavigateOptions
 * @typedef {import('./types.js').Session} Session
 * @typedef {import('./types.js').Account} Account
 */

/**
 * A page: the path it answers (its groups are ctx.params), its module function, the top bar's entry it
 * marks, and whether it is shown without a session.
 * @typedef {{ re: RegExp, page: (ctx: PageContext) => Node | Promise<Node>, nav?: string, public?: boolean }} Route
 */

/** @type {Route[]} */
const routes = [
  { re: /^\/ui\/?$/, page: dashboardPage, nav: 'dashboard' },
  { re: /^\/ui\/login$/, page: loginPage, public: true },
  { re: /^\/ui\/setup$/, page: setupPage, public: true },
  { re: /^\/ui\/users$/, page: usersPage, nav: 'users' },
  { re: /^\/ui\/tokens$/, page: tokensPage, nav: 'tokens' },
  { re: /^\/ui\/audit$/, page: auditPage, nav: 'audit' },
  { re: /^\/ui\/projects$/, page: projectsPage, nav: 'projects' },
  { re: /^\/ui\/projects\/([^/]+)$/, page: projectPage, nav: 'projects' },
  { re: /^\/ui\/projects\/([^/]+)\/templates\/new$/, page: (ctx) => templateEditorPage(ctx, true), nav: 'projects' },
  {
    re: /^\/ui\/projects\/([^/]+)\/templates\/([^/]+)$/,
    page: (ctx) => templateEditorPage(ctx, false),
    nav: 'projects',
  },
  { re: /^\/ui\/projects\/([^/]+)\/lists\/(\d+)$/, page: listPage, nav: 'projects' },
  { re: /^\/ui\/events$/, page: eventsPage, nav: 'events' },
  { re: /^\/ui\/events\/(\d+)$/, page: eventPage, nav: 'events' },
  { re: /^\/ui\/emails$/, page: emailsPage, nav: 'emails' },
  { re: /^\/ui\/emails\/(\d+)$/, page: emailPage, nav: 'emails' },
  { re: /^\/ui\/contacts$/, page: contactsPage, nav: 'contacts' },
  { re: /^\/ui\/contacts\/(\d+)$/, page: contactPage, nav: 'contacts' },
];

// { key, href, shown? }: the label is t(`nav.${key}`), looked up when the bar is drawn (the language may
// change); `shown(account)` hides an entry the account cannot use (accounts: owners; tokens: accounts).
/** @type {{ key: string, href: string, shown?: (account: Account) => boolean }[]} */
const NAV = [
  { key: 'dashboard', href: '/ui/' },
  { key: 'projects', href: '/ui/projects' },
  { key: 'events', href: '/ui/events' },
  { key: 'emails', href: '/ui/emails' },
  { key: 'contacts', href: '/ui/contacts' },
  { key: 'audit', href: '/ui/audit' },
  { key: 'users', href: '/ui/users', shown: (account) => account.role === 'owner' },
  { key: 'tokens', href: '/ui/tokens', shown: (account) => account.id !== null },
];

/** @type {{ session: Session | null, renderSeq: number, leave: Array<() => void> }} */
const state = { session: null, renderSeq: 0, leave: [] };
/** The page's <main>, which index.html always has. */
const main = () => /** @type {HTMLElement} */ (document.getElementById('main'));
/** The top bar, which index.html always has. */
const topbar = () => /** @type {HTMLElement} */ (document.getElementById('topbar'));

/**
 * focus: a selector of what gets the focus after the page is drawn (default: its heading).
 * @param {string} url
 * @param {NavigateOptions} [options]
 * @returns {Promise<undefined>}
 */
export function navigate(url, { replace = false, state: histState = null, keepFocus = false, focus = null } = {}) {
  if (replace) history.replaceState(histState, '', url);
  else history.pushState(histState, '', url);
  return render({ keepFocus, focus });
}

async function logout() {
  try {
    await api('DELETE', '/api/admin/session');
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) toast(describeError(e), 'bad');
  }
  state.session = null;
  setCsrfToken(null);
  document.body.removeAttribute('data-readonly');
  document.body.removeAttribute('data-not-owner');
  void navigate('/ui/login', { replace: true });
}

/** The language menu: each language named in itself; a change redraws the page where it is. */
function languagePicker() {
  /** @type {HTMLSelectElement} */
  const picker = select(
    LANGUAGES.map((l) => [l, t(`lang.${l}`)]),
    language(),
    { class: 'lang', name: 'lang', 'aria-label': t('app.language') },
  );
  picker.addEventListener('change', () => {
    setLanguage(picker.value);
    void render({ focus: 'select.lang' });
  });
  return picker;
}

/** @param {string | undefined} active the nav key of the page shown */
function drawTopbar(active) {
  const bar = clear(topbar());
  const { session } = state;
  bar.append(h('a', { href: '/ui/', class: 'brand' }, t('app.brand')));
  if (session) {
    bar.append(
      h(
        'nav',
        { 'aria-label': t('nav.label') },
        h(
          'ul',
          {},
          NAV.filter(({ shown }) => !shown || shown(session.account)).map(({ key, href }) =>
            h('li', {}, h('a', { href, 'aria-current': key === active ? 'page' : null }, t(`nav.${key}`))),
          ),
        ),
      ),
    );
  }
  bar.append(languagePicker());
  if (session) {
    const a = session.account;
    bar.append(h('span', { class: 'who muted', title: t(`role.${a.role}`) }, a.email ?? t('app.root')));
    bar.append(h('button', { type: 'button', class: 'logout', onclick: logout }, t('app.logout')));
  }
}

/** The parts of the shell outside the pages, in the current language. */
function drawShell() {
  const skip = document.querySelector('.skip-link');
  if (skip) skip.textContent = t('app.skip');
}

/** @param {Session} session what POST /api/admin/session answered (or GET, on load) */
export function loggedIn(session) {
  state.session = session;
  setCsrfToken(session.csrf_token);
  // A viewer (or a read-only login) sees no control that would change anything: every such control is
  // marked data-write, and the stylesheet hides them under this attribute. The server refuses anyway.
  const readOnly = session.account.role === 'viewer' || session.account.read_only;
  document.body.toggleAttribute('data-readonly', readOnly);
  document.body.toggleAttribute('data-not-owner', session.account.role !== 'owner');
}

/**
 * @param {{ keepFocus?: boolean, focus?: string | null }} [options]
 * @returns {Promise<undefined>}
 */
async function render({ keepFocus = false, focus = null } = {}) {
  const seq = ++state.renderSeq;
  for (const fn of state.leave.splice(0)) fn();
  const path = location.pathname;
  const route = routes.find((r) => r.re.test(path));
  if (route && !route.public && !state.session) {
    return navigate(`/ui/login?next=${encodeURIComponent(path + location.search)}`, { replace: true });
  }
  drawShell();
  drawTopbar(route?.nav);
  const target = main();
  /** @type {PageContext} */
  const ctx = {
    params: route ? (route.re.exec(path) ?? []).slice(1).map(decodeURIComponent) : [],
    query: new URLSearchParams(location.search),
    state: history.state ?? {},
    // Pages start a move and do not wait for it: the router shows what fails on the page it draws.
    navigate: (url, options) => void navigate(url, options),
    loggedIn,
    session: state.session,
    onLeave: (fn) => state.leave.push(fn),
    isCurrent: () => seq === state.renderSeq,
  };
  target.setAttribute('aria-busy', 'true');
  /** @type {Node} */
  let node;
  try {
    // The badge tones come with the vocabularies; a signed-in page may show statuses.
    if (state.session && route && !route.public) setStatusTones((await meta()).status_tones);
    node = route
      ? await route.page(ctx)
      : h(
          'section',
          {},
          h('h1', { tabindex: '-1' }, t('app.pageNotFound')),
          h('p', {}, h('a', { href: '/ui/' }, t('app.backToDashboard'))),
        );
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return undefined; // the login page is on its way
    node = h(
      'section',
      {},
      h('h1', { tabindex: '-1' }, e instanceof ApiError && e.status === 404 ? t('app.notFound') : t('app.failed')),
      errorBox(describeError(e)),
    );
  }
  if (seq !== state.renderSeq) return undefined; // the user moved on while this page loaded
  clear(target).append(node);
  target.removeAttribute('aria-busy');
  const h1 = target.querySelector('h1');
  document.title = t('app.documentTitle', { page: h1?.textContent ?? t('app.admin') });
  if (!keepFocus)
    /** @type {HTMLElement} */ (
      (focus && document.querySelector(focus)) || target.querySelector('[data-autofocus]') || h1 || target
    ).focus();
  return undefined;
}

document.addEventListener('click', (ev) => {
  if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  /** @type {HTMLAnchorElement | null} */
  const a = ev.target instanceof Element ? ev.target.closest('a[href]') : null;
  if (!a || a.target || a.hasAttribute('download') || a.origin !== location.origin || !a.pathname.startsWith('/ui/'))
    return;
  if (a.pathname.startsWith('/ui/assets/')) return;
  ev.preventDefault();
  void navigate(a.pathname + a.search);
});
window.addEventListener('popstate', () => void render());

setUnauthorizedHandler(() => {
  if (!state.session) return;
  state.session = null;
  setCsrfToken(null);
  toast(t('app.sessionEnded'), 'warn');
  const here = location.pathname + location.search;
  void navigate(`/ui/login?next=${encodeURIComponent(here)}`, { replace: true });
});

async function start() {
  try {
    loggedIn(await api('GET', '/api/admin/session', undefined, { quiet401: true }));
  } catch {
    state.session = null;
  }
  await render();
}

void start();
