// Projects: the list with a create form, and one project's page with its tabs (keys, routing,
// templates, address books, course categories, paid-order books, cart chain).
import { api, ApiError, describeError, enc, meta, projects, qs } from '../api.js';
import { code, errorBox, field, h, pagedTable, time, toast } from '../dom.js';
import { cartChainTab, categoriesTab, paidListsTab } from './config.js';
import { keysTab } from './keys.js';
import { listsTab } from './lists.js';
import { routingTab } from './routing.js';
import { templatesTab } from './templates.js';

const TABS = [
  ['keys', 'API keys', keysTab],
  ['routing', 'Routing', routingTab],
  ['templates', 'Templates', templatesTab],
  ['lists', 'Address books', listsTab],
  ['categories', 'Course categories', categoriesTab],
  ['paid', 'Paid-order books', paidListsTab],
  ['chain', 'Cart chain', cartChainTab],
];

/** Name and sender form; used to create (site_key editable) and to edit (site_key fixed). */
function projectForm(p, onSaved) {
  const siteKey = h('input', {
    name: 'site_key',
    required: true,
    pattern: '[A-Za-z0-9_.\\-]+',
    maxlength: '100',
    value: p?.site_key ?? '',
    readonly: Boolean(p),
    spellcheck: 'false',
  });
  const name = h('input', { name: 'name', required: true, maxlength: '200', value: p?.name ?? '' });
  const from = h('input', {
    name: 'from_email',
    inputmode: 'email',
    spellcheck: 'false',
    required: true,
    maxlength: '254',
    value: p?.from_email ?? '',
  });
  const status = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    {
      class: 'stack',
      onsubmit: async (ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          const r = await api('POST', '/api/sites', {
            site_key: siteKey.value.trim(),
            name: name.value.trim(),
            from_email: from.value.trim(),
          });
          onSaved(r);
        } catch (e) {
          status.append(errorBox(describeError(e)));
        }
      },
    },
    h(
      'div',
      { class: 'row' },
      field(
        'Site key',
        siteKey,
        p ? 'Fixed: keys, events and e-mails refer to it.' : 'Letters, digits, . _ - ; cannot be changed later.',
      ),
      field('Name', name),
      field('Sender address (From)', from),
    ),
    status,
    h('button', { type: 'submit', class: 'primary' }, p ? 'Save' : 'Create project'),
  );
  return form;
}

export async function projectsPage(ctx) {
  const all = await projects();
  const list = pagedTable(
    [
      { label: 'Site key', cell: (p) => h('a', { href: `/ui/projects/${enc(p.site_key)}` }, p.site_key) },
      { label: 'Name', cell: (p) => p.name },
      { label: 'Sender', cell: (p) => p.from_email },
      { label: 'Created', cell: (p) => time(p.created_at) },
    ],
    all,
    { empty: 'No projects yet: create the first one below.' },
  );
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, 'Projects'),
    list,
    h('h2', {}, 'New project'),
    projectForm(null, (r) => {
      toast(r.created ? `Project ${r.site_key} created` : `Project ${r.site_key} updated`);
      ctx.navigate(`/ui/projects/${enc(r.site_key)}`);
    }),
  );
}

export async function projectPage(ctx) {
  const site = ctx.params[0];
  const tab = TABS.find(([key]) => key === ctx.query.get('tab')) ?? TABS[0];
  const [all, m] = await Promise.all([projects(), meta()]);
  const p = all.find((x) => x.site_key === site);
  if (!p) throw new ApiError(404, { code: 'not_found', message: `Project ${site} not found` });

  const edit = h(
    'details',
    { class: 'edit-project' },
    h('summary', {}, 'Edit name and sender'),
    projectForm(p, () => {
      toast('Project saved');
      ctx.navigate(`/ui/projects/${enc(site)}${qs({ tab: tab[0] })}`, { replace: true, keepFocus: true });
    }),
  );
  const tabs = h(
    'nav',
    { class: 'tabs', 'aria-label': 'Project sections' },
    h(
      'ul',
      {},
      TABS.map(([key, label]) =>
        h(
          'li',
          {},
          h(
            'a',
            { href: `/ui/projects/${enc(site)}?tab=${key}`, 'aria-current': key === tab[0] ? 'page' : null },
            label,
          ),
        ),
      ),
    ),
  );
  let body;
  try {
    body = await tab[2](ctx, p, m);
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
        h('p', { class: 'muted' }, code(p.site_key), ' · sends as ', p.from_email),
      ),
      h(
        'div',
        { class: 'inline-controls' },
        h('a', { class: 'button', href: `/ui/events${qs({ site_key: site })}` }, 'Events'),
        h('a', { class: 'button', href: `/ui/emails${qs({ site_key: site })}` }, 'E-mails'),
        h('a', { class: 'button', href: `/ui/${qs({ site_key: site })}` }, 'Dashboard'),
      ),
    ),
    edit,
    tabs,
    h('div', { class: 'tab-body' }, h('h2', {}, tab[1]), body),
  );
}
