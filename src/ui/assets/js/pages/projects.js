// @ts-check
// Projects: the list with a create form, and one project's page with its tabs (keys, routing,
// templates, address books, course categories, paid-order books, cart chain).
import { api, ApiError, describeError, enc, meta, projects, qs } from '../api.js';
import { code, errorBox, field, h, pagedTable, select, table, time, toast } from '../dom.js';
import { t, tNodes } from '../i18n.js';
import { cartChainTab, categoriesTab, paidListsTab } from './config.js';
import { deliveryTab } from './delivery.js';
import { keysTab } from './keys.js';
import { listsTab } from './lists.js';
import { routingTab } from './routing.js';
import { templatesTab } from './templates.js';
import { layoutsTab } from './layouts.js';
import { webhooksTab } from './webhooks.js';
import { topicsTab } from './consent.js';
import { projectChecklist } from './firstRun.js';
import { showError } from '../errors.js';

/** @typedef {import('../pageTypes.js').PageContext} PageContext */
/** @typedef {import('../pageTypes.js').Project} Project */
/** @typedef {import('../pageTypes.js').UiMeta} UiMeta */

// [key, page]: the tab's label is t(`project.tab.${key}`).
/** @type {Array<[string, import('../pageTypes.js').ProjectTab]>} */
const TABS = [
  ['keys', keysTab],
  ['routing', routingTab],
  ['templates', templatesTab],
  ['layouts', layoutsTab],
  ['lists', listsTab],
  ['categories', categoriesTab],
  ['paid', paidListsTab],
  ['chain', cartChainTab],
  ['delivery', deliveryTab],
  ['webhooks', webhooksTab],
  ['topics', topicsTab],
];

/** The tabs opened less often, under «Ещё»: the others then fit one row at 1366 px (issue 37 item 5). */
const MORE = new Set(['layouts', 'lists', 'categories', 'paid', 'chain']);

// What the time-zone field suggests; any IANA name the server knows is accepted.
const ZONES = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
/** A new project's zone, as the server's default. */
const DEFAULT_ZONE = ZONES.find((z) => z === 'Europe/Moscow') ?? 'UTC';

/**
 * Name, sender, and the language and time zone of its templates; used to create (site_key editable)
 * and to edit (site_key fixed, saved with PATCH).
 * @param {Project | null} p
 * @param {(siteKey: string, created: boolean) => void} onSaved
 */
function projectForm(p, onSaved) {
  /** @type {HTMLInputElement} */
  const siteKey = h('input', {
    name: 'site_key',
    required: true,
    pattern: '[A-Za-z0-9_.\\-]+',
    maxlength: '100',
    value: p?.site_key ?? '',
    readonly: Boolean(p),
    spellcheck: 'false',
  });
  // The browser's own pattern bubble says only "match the format": a site key typed in Cyrillic is
  // told so in words (issue 37 item 7).
  siteKey.addEventListener('input', () =>
    siteKey.setCustomValidity(
      /[а-яё]/i.test(siteKey.value)
        ? t('project.siteKeyCyrillic')
        : /[^A-Za-z0-9_.-]/.test(siteKey.value)
          ? t('project.siteKeyChars')
          : '',
    ),
  );
  /** @type {HTMLInputElement} */
  const name = h('input', { name: 'name', required: true, maxlength: '200', value: p?.name ?? '' });
  /** @type {HTMLInputElement} */
  const from = h('input', {
    name: 'from_email',
    inputmode: 'email',
    spellcheck: 'false',
    required: true,
    maxlength: '254',
    value: p?.from_email ?? '',
  });
  /** @type {HTMLInputElement} */
  const replyTo = h('input', {
    name: 'reply_to',
    inputmode: 'email',
    spellcheck: 'false',
    maxlength: '254',
    value: p?.reply_to ?? '',
  });
  /** @type {HTMLSelectElement} */
  const locale = select(
    [
      ['ru', t('project.locale.ru')],
      ['en', t('project.locale.en')],
    ],
    p?.locale ?? 'ru',
    { name: 'locale' },
  );
  // A list, not free text (issue 37): a zone the browser knows, the stored one kept even if it does not.
  const current = p?.timezone ?? DEFAULT_ZONE;
  /** @type {HTMLSelectElement} */
  const timezone = select([...new Set([current, 'UTC', ...ZONES])].sort(), current, { name: 'timezone' });
  // SPEC §16: what {{ name }} prints without a name, and the layout of templates that name none.
  /** @type {HTMLInputElement} */
  const fallbackName = h('input', {
    name: 'fallback_name',
    maxlength: '100',
    value: p?.fallback_name ?? '',
    placeholder: t('project.fallbackNamePlaceholder'),
  });
  /** @type {HTMLInputElement} */
  const defaultLayout = h('input', {
    name: 'default_layout',
    maxlength: '100',
    value: p?.default_layout ?? '',
    spellcheck: 'false',
    pattern: '[A-Za-z0-9_.:\\-]+',
  });
  const status = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    {
      class: 'stack',
      'data-write': true,
      onsubmit: async (/** @type {Event} */ ev) => {
        ev.preventDefault();
        status.replaceChildren();
        const body = {
          name: name.value.trim(),
          from_email: from.value.trim(),
          timezone: timezone.value,
          locale: locale.value,
          // Empty: no Reply-To (null clears it on an edit; a new project simply has none).
          ...(replyTo.value.trim() ? { reply_to: replyTo.value.trim() } : p ? { reply_to: null } : {}),
        };
        try {
          if (p) {
            await api('PATCH', `/api/admin/projects/${enc(p.site_key)}`, {
              ...body,
              fallback_name: fallbackName.value.trim() || null,
              default_layout: defaultLayout.value.trim() || null,
            });
            onSaved(p.site_key, false);
          } else {
            /** @type {{ site_key: string, created: boolean }} */
            const r = await api('POST', '/api/sites', { site_key: siteKey.value.trim(), ...body });
            onSaved(r.site_key, r.created);
          }
        } catch (e) {
          showError(status, e);
        }
      },
    },
    h(
      'div',
      { class: 'row' },
      field(t('project.siteKey'), siteKey, p ? t('project.siteKeyFixed') : t('project.siteKeyHint')),
      field(t('common.name'), name, t('project.nameHint')),
      field(t('project.sender'), from),
      field(t('project.replyTo'), replyTo, t('project.replyToHint')),
    ),
    h(
      'div',
      { class: 'row' },
      field(t('project.locale'), locale, t('project.localeHint')),
      field(t('project.timezone'), timezone, t('project.timezoneHint')),
    ),
    p
      ? h(
          'div',
          { class: 'row' },
          field(t('project.fallbackName'), fallbackName, t('project.fallbackNameHint')),
          field(t('project.defaultLayout'), defaultLayout, t('project.defaultLayoutHint')),
        )
      : null,
    status,
    h('button', { type: 'submit', class: 'primary' }, p ? t('common.save') : t('project.create')),
  );
  return form;
}

/** @param {PageContext} ctx */
export async function projectsPage(ctx) {
  /** @type {Project[]} */
  const all = await projects();
  const list = pagedTable(
    /** @satisfies {import('../pageTypes.js').Column<Project>[]} */ ([
      { label: t('project.siteKey'), cell: (p) => h('a', { href: `/ui/projects/${enc(p.site_key)}` }, p.site_key) },
      { label: t('common.name'), cell: (p) => p.name },
      { label: t('project.senderShort'), cell: (p) => p.from_email },
      { label: t('project.locale'), cell: (p) => t(`project.locale.${p.locale}`) },
      { label: t('project.timezone'), cell: (p) => p.timezone },
      { label: t('common.created'), cell: (p) => time(p.created_at) },
    ]),
    all,
    { empty: t('projects.empty') },
  );
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, t('projects.title')),
    list,
    // Only owners create projects (SPEC §14).
    h(
      'div',
      { 'data-owner': true },
      h('h2', {}, t('projects.new')),
      projectForm(null, (siteKey, created) => {
        toast(created ? t('projects.created', { site: siteKey }) : t('projects.updated', { site: siteKey }));
        ctx.navigate(`/ui/projects/${enc(siteKey)}`);
      }),
    ),
  );
}

/**
 * The URLs to paste into each provider's panel, and the VERP domain, for bounce reports (SPEC §12).
 * @param {Project} p
 * @param {UiMeta} m
 */
function reportWebhooks(p, m) {
  /** @param {string} provider */
  const url = (provider) => `${m.public_url}/api/webhooks/${provider}/${enc(p.site_key)}`;
  return h(
    'details',
    { class: 'report-webhooks' },
    h('summary', {}, t('project.reports')),
    h('p', { class: 'muted' }, t('project.reportsHelp')),
    table(
      /** @satisfies {import('../pageTypes.js').Column<string>[]} */ ([
        { label: t('project.reportsProvider'), cell: (x) => t(`emails.source.${x}`) },
        { label: t('project.reportsUrl'), cell: (x) => code(url(x)) },
        { label: t('project.reportsAuth'), cell: (x) => t(`project.reportsAuth.${x}`) },
      ]),
      m.webhook_providers,
    ),
    h('p', {}, m.bounce_domain ? t('project.verpOn', { domain: m.bounce_domain }) : t('project.verpOff')),
  );
}

/** @param {PageContext} ctx */
export async function projectPage(ctx) {
  const site = ctx.params[0];
  const tab = TABS.find(([key]) => key === ctx.query.get('tab')) ?? TABS[0];
  /** @type {[Project[], UiMeta]} */
  const [all, m] = await Promise.all([projects(), meta()]);
  const p = all.find((x) => x.site_key === site);
  if (!p) throw new ApiError(404, { code: 'not_found', message: t('project.notFound', { site }) });

  const edit = h(
    'details',
    { class: 'edit-project' },
    h('summary', {}, t('project.edit')),
    projectForm(p, () => {
      toast(t('project.saved'));
      ctx.navigate(`/ui/projects/${enc(site)}${qs({ tab: tab[0] })}`, { replace: true, keepFocus: true });
    }),
  );
  /** @param {string} key */
  const tabLink = (key) =>
    h(
      'a',
      { href: `/ui/projects/${enc(site)}?tab=${key}`, 'aria-current': key === tab[0] ? 'page' : null },
      t(`project.tab.${key}`),
    );
  const inMore = MORE.has(tab[0]);
  const tabs = h(
    'nav',
    { class: 'tabs', 'aria-label': t('project.sections') },
    h(
      'ul',
      {},
      TABS.filter(([key]) => !MORE.has(key)).map(([key]) => h('li', {}, tabLink(key))),
      h(
        'li',
        { class: 'tabs-more' },
        h(
          'details',
          {},
          // The open tab, when it is one of these, is named on the menu itself.
          h(
            'summary',
            { class: inMore ? 'current' : null },
            inMore ? t('project.tabMoreCurrent', { tab: t(`project.tab.${tab[0]}`) }) : t('project.tabMore'),
          ),
          h(
            'ul',
            {},
            TABS.filter(([key]) => MORE.has(key)).map(([key]) => h('li', {}, tabLink(key))),
          ),
        ),
      ),
    ),
  );
  let body;
  const checklist = await projectChecklist(p);
  try {
    body = await tab[1](ctx, p, m);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) throw e;
    body = errorBox(describeError(e));
  }
  return h(
    'section',
    {},
    h(
      'div',
      { class: 'page-head' },
      h(
        'div',
        {},
        h('h1', { tabindex: '-1' }, p.name),
        h(
          'p',
          { class: 'muted' },
          ...tNodes('project.summary', {
            site: code(p.site_key),
            from: p.from_email,
            locale: t(`project.locale.${p.locale}`),
            timezone: p.timezone,
          }),
        ),
      ),
      h(
        'div',
        { class: 'inline-controls' },
        h('a', { class: 'button', href: `/ui/events${qs({ site_key: site })}` }, t('nav.events')),
        h('a', { class: 'button', href: `/ui/emails${qs({ site_key: site })}` }, t('nav.emails')),
        h('a', { class: 'button', href: `/ui/${qs({ site_key: site })}` }, t('nav.dashboard')),
      ),
    ),
    checklist,
    edit,
    reportWebhooks(p, m),
    tabs,
    h('div', { class: 'tab-body' }, h('h2', {}, t(`project.tab.${tab[0]}`)), body),
  );
}
