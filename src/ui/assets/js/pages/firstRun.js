// @ts-check
// The first-run path (issue 28): a checklist project → template → routing → key → delivery → test
// e-mail, each step ticked by the server from the project's real state, and the gallery of Russian
// starting templates that makes the template step a matter of one click.
import { api, describeError, enc, onChanged } from '../api.js';
import { append, badge, clear, code, confirmDialog, errorBox, fmtMinutes, h, select, toast } from '../dom.js';
import { hasKey, nameOf, t, tNodes } from '../i18n.js';

/**
 * @typedef {import('../types.js').UiMeta} UiMeta
 * @typedef {import('../types.js').Project} Project
 * @typedef {import('../types.js').Checklist} Checklist
 * @typedef {import('../types.js').ChecklistStep} ChecklistStep
 * @typedef {import('../types.js').GalleryTemplate} GalleryTemplate
 */

/**
 * When a routing key's e-mail goes, in words: the catalog's sentence, or the cart step's delay.
 * @param {UiMeta} m
 * @param {string} key an event type or a cart step (`<cart>_abandoned_cart_<step>`)
 */
export function routingKeyAbout(m, key) {
  if (hasKey(`catalog.${key}`)) return t(`catalog.${key}`);
  const cart = /^(.+)_abandoned_cart_(.+)$/.exec(key);
  const step = cart && m.cart_steps.find((s) => s.step === cart[2]);
  if (cart && step)
    return t('routing.cartStepAbout', { cart: t(`cart.${cart[1]}`), step: fmtMinutes(step.delay_minutes) });
  // A further event type by its name (issue 37: «Оплата курса», not «дополнительный тип события»).
  const name = nameOf('event_type', key);
  return m.catalog.find((e) => e.event_type === key)?.description ?? (name !== key ? name : t('routing.furtherAbout'));
}

/** @type {Partial<Record<ChecklistStep, string>>} the project tab of a step, where it is not named alike */
const STEP_TAB = { template: 'templates', test_email: 'delivery' };

/**
 * Where each step is done: the project's tab (the project step: the projects page, where one is created).
 * @param {string | undefined} site
 * @param {ChecklistStep} step
 */
const stepHref = (site, step) =>
  step === 'project' || !site ? '/ui/projects' : `/ui/projects/${enc(site)}?tab=${STEP_TAB[step] ?? step}`;

/** @type {ChecklistStep[]} */
const STEPS = ['project', 'template', 'routing', 'key', 'delivery', 'test_email'];

/**
 * The checklist of one project (`p` null: there is no project yet, and every step is still to do).
 * `data` is GET …/checklist.
 * @param {Pick<Project, 'site_key' | 'name'> | null} p
 * @param {Checklist | null} data
 */
export function checklistBox(p, data) {
  const steps = data?.steps ?? STEPS.map((step) => ({ step, done: false, count: 0 }));
  const next = steps.find((s) => !s.done)?.step;
  return h(
    'section',
    { class: 'checklist', 'aria-labelledby': 'checklist-title' },
    h('h2', { id: 'checklist-title' }, p ? t('firstRun.titleFor', { name: p.name }) : t('firstRun.title')),
    h('p', { class: 'muted' }, t('firstRun.about')),
    h(
      'ol',
      {},
      steps.map((s) =>
        h(
          'li',
          { class: s.done ? 'done' : s.step === next ? 'next' : 'todo', 'data-step': s.step },
          s.done ? badge(t('firstRun.done'), 'ok') : badge(t('firstRun.todo'), s.step === next ? 'warn' : 'muted'),
          ' ',
          h('a', { href: stepHref(p?.site_key, s.step) }, t(`firstRun.step.${s.step}`)),
          h('small', { class: 'muted' }, t(`firstRun.hint.${s.step}`)),
        ),
      ),
    ),
  );
}

/**
 * A project's checklist, or null when it is complete or cannot be read (it is help, never a blocker).
 * @param {Pick<Project, 'site_key' | 'name'>} p
 */
export async function projectChecklist(p) {
  /** @returns {Promise<Checklist | null>} */
  const read = () => api('GET', `/api/admin/projects/${enc(p.site_key)}/checklist`).catch(() => null);
  const data = await read();
  if (!data || data.complete) return null;
  // Re-read after each change the page makes (a key created, a route saved): ticked without a reload.
  const live = h('div', { class: 'checklist-live' }, checklistBox(p, data));
  onChanged(live, async () => {
    const fresh = await read();
    if (fresh) live.replaceChildren(checklistBox(p, fresh));
  });
  return live;
}

/**
 * On the dashboard: the path from nothing, or the first project (of those shown) still on its way.
 * @param {Project[]} all
 * @param {string} site the project the dashboard shows; '' for all
 */
export async function dashboardChecklist(all, site) {
  if (!all.length) return checklistBox(null, null);
  const shown = site ? all.filter((p) => p.site_key === site) : all.slice(0, 10);
  for (const box of await Promise.all(shown.map(projectChecklist))) if (box) return box;
  return null;
}

/**
 * After a gallery template is taken (SPEC §22): the server has routed a free event or cart step itself
 * (POST /api/templates answers `routing`); when another template has it, it is replaced only if the
 * administrator agrees. Returns what the toast says.
 * @param {string} site
 * @param {{ routing_key: string, name: string }} g
 * @param {{ status: string, current?: string } | undefined} routed the save's `routing`
 */
async function routeGallery(site, g, routed) {
  const current = routed?.current ?? '';
  const args = { name: g.name, key: g.routing_key, current };
  if (routed?.status === 'routed') return t('gallery.createdRouted', args);
  if (routed?.status !== 'taken') return t('gallery.created', args);
  if (!(await confirmDialog(t('gallery.routeTaken', args), t('gallery.routeReplace', args), 'primary')))
    return t('gallery.createdKept', args);
  const url = `/api/admin/projects/${enc(site)}/routing`;
  try {
    /** @type {{ routes: Record<string, string> }} */
    const { routes } = await api('GET', url);
    await api('PUT', url, { routes: { ...routes, [g.routing_key]: g.name } });
  } catch {
    // Refused (e.g. recent requests would fail its contract): the template is there, routing is by hand.
    return t('gallery.created', args);
  }
  return t('gallery.createdRouted', args);
}

/**
 * The gallery: a starting template per catalog event and cart step, in Russian. Choosing one saves it as
 * a real template of the project (POST /api/templates) and opens it in the editor.
 * @param {import('../types.js').PageContext} ctx
 * @param {string} site
 * @param {UiMeta} m
 * @param {readonly { name: string }[]} existing the project's templates
 */
export async function galleryBox(ctx, site, m, existing) {
  /** @type {import('../types.js').Items<GalleryTemplate>} */
  const gallery = await api('GET', '/api/admin/ui/template-gallery');
  const have = new Set(existing.map((x) => x.name));
  /** @type {HTMLSelectElement} */
  const pick = select(
    gallery.items.map((g) => [
      g.routing_key,
      have.has(g.name)
        ? t('gallery.optionHave', { about: routingKeyAbout(m, g.routing_key), name: g.name })
        : `${routingKeyAbout(m, g.routing_key)} — ${g.name}`,
    ]),
    gallery.items.find((g) => !have.has(g.name))?.routing_key ?? '',
    { name: 'gallery' },
  );
  const subject = h('p', { class: 'muted gallery-subject' });
  const status = h('div', { 'aria-live': 'polite' });
  const chosen = () => gallery.items.find((g) => g.routing_key === pick.value);
  const show = () => {
    // The subject as written, Liquid tags and all: it is the template's source.
    append(clear(subject), tNodes('gallery.subject', { subject: code(chosen()?.subject ?? '') }));
  };
  pick.addEventListener('change', show);
  show();
  /** @param {SubmitEvent} ev */
  const create = async (ev) => {
    ev.preventDefault();
    status.replaceChildren();
    const g = chosen();
    if (!g) return;
    const editor = `/ui/projects/${enc(site)}/templates/${enc(g.name)}`;
    // Saving it again would make a new version over the administrator's edits: open it instead.
    if (have.has(g.name)) return ctx.navigate(editor);
    try {
      /** @type {{ routing?: { status: string, current?: string } }} */
      const saved = await api('POST', '/api/templates', {
        site_key: site,
        name: g.name,
        subject: g.subject,
        html: g.html,
        text: g.text,
        tracking: g.tracking,
      });
      toast(await routeGallery(site, g, saved.routing));
      ctx.navigate(editor);
    } catch (e) {
      status.append(errorBox(describeError(e)));
    }
    return undefined;
  };
  return h(
    'details',
    { class: 'gallery', open: existing.length === 0, 'data-write': true },
    h('summary', {}, t('gallery.title')),
    h(
      'form',
      { class: 'stack', onsubmit: create },
      h('p', { class: 'muted' }, t('gallery.about')),
      h('label', { for: 'gallery-pick' }, t('gallery.event')),
      Object.assign(pick, { id: 'gallery-pick' }),
      subject,
      status,
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, t('gallery.create'))),
    ),
  );
}
