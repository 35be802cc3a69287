// @ts-check
// Templates: the project's list (a tab) and the editor page with a live preview. The preview renders
// the unsaved source on the server with the same engine as delivery, with sample values for the chosen
// event's fields; the HTML part shows in an iframe with sandbox="" (no scripts, no same-origin access).
import { api, ApiError, describeError, enc, meta, qs } from '../api.js';
import { code, errorBox, field, h, pagedTable, select, time, toast } from '../dom.js';
import { language, t, tNodes } from '../i18n.js';
import { impactBox, impactOf } from './contract.js';
import { analysisPanel, versionsPanel } from './templateVersions.js';
import { templateRatesPart } from './engagement.js';
import { galleryBox } from './firstRun.js';
import { showError } from '../errors.js';

/** @typedef {import('../pageTypes.js').Template} Template */
/** @typedef {import('../pageTypes.js').Routing} Routing */
/** @typedef {import('../pageTypes.js').Items<Template>} Templates */
/** @typedef {import('../pageTypes.js').Layout} Layout */
/** Where a template's source fails to render: the `template_problem` of a 422. */
/** @typedef {{ part: string, line: number, message: string }} TemplateProblem */

const DEBOUNCE_MS = 300;

/** @type {import('../pageTypes.js').ProjectTab} */
export async function templatesTab(ctx, p, m) {
  const site = p.site_key;
  /** @type {[Templates, Routing]} */
  const [templates, routing] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
    api('GET', `/api/admin/projects/${enc(site)}/routing`),
  ]);
  const gallery = await galleryBox(ctx, site, m, templates.items);
  /** @param {string} name a template's */
  const usedBy = (name) =>
    Object.entries(routing.routes)
      .filter(([, t]) => t === name)
      .map(([k]) => k);
  return h(
    'div',
    {},
    h(
      'p',
      {},
      h('a', { class: 'button primary', href: `/ui/projects/${enc(site)}/templates/new` }, t('templates.new')),
    ),
    gallery,
    pagedTable(
      /** @satisfies {import('../pageTypes.js').Column<Template>[]} */ ([
        {
          label: t('templates.name'),
          cell: (x) => h('a', { href: `/ui/projects/${enc(site)}/templates/${enc(x.name)}` }, x.name),
        },
        { label: t('templates.subject'), cell: (x) => x.subject },
        {
          label: t('contract.variables'),
          cell: (x) =>
            x.unchecked
              ? h('span', { class: 'muted' }, t('contract.uncheckedShort'))
              : x.variables.filter((v) => v.required).map((v) => [code(v.name), ' ']),
        },
        { label: t('versions.number'), cell: (x) => (x.version === null ? '—' : String(x.version)) },
        {
          label: t('templates.routedFrom'),
          cell: (x) => {
            const u = usedBy(x.name);
            return u.length ? u.map((k) => [code(k), ' ']) : h('span', { class: 'muted' }, t('templates.notRouted'));
          },
        },
        { label: t('common.updated'), cell: (x) => time(x.updated_at) },
      ]),
      templates.items,
      { empty: t('templates.empty') },
    ),
  );
}

function partError() {
  return h('p', { class: 'error part-error', role: 'alert', hidden: true });
}

/**
 * @param {import('../pageTypes.js').PageContext} ctx
 * @param {boolean} isNew
 */
export async function templateEditorPage(ctx, isNew) {
  const site = ctx.params[0];
  /** @type {[import('../pageTypes.js').UiMeta, Templates, Routing, import('../pageTypes.js').Items<Layout>]} */
  const [m, templates, routing, layouts] = await Promise.all([
    meta(),
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
    api('GET', `/api/admin/projects/${enc(site)}/routing`),
    api('GET', `/api/admin/projects/${enc(site)}/layouts`),
  ]);
  const existing = isNew ? null : templates.items.find((t) => t.name === ctx.params[1]);
  if (!isNew && !existing)
    throw new ApiError(404, { code: 'not_found', message: t('templates.notFound', { name: ctx.params[1], site }) });
  const routedFrom = existing
    ? Object.entries(routing.routes)
        .filter(([, t]) => t === existing.name)
        .map(([k]) => k)
    : [];

  /** @type {HTMLInputElement} */
  const name = h('input', {
    name: 'name',
    required: true,
    maxlength: '200',
    pattern: '[A-Za-z0-9_.:\\-]+',
    value: existing?.name ?? '',
    readonly: !isNew,
    spellcheck: 'false',
    'data-autofocus': isNew || null,
  });
  /** @type {HTMLSelectElement} */
  const eventType = select(
    [['', t('templates.noEvent')], ...m.routing_keys.map((k) => [k, k])],
    ctx.query.get('event_type') ?? routedFrom[0] ?? '',
    { name: 'event_type' },
  );
  /** @type {HTMLInputElement} */
  const subject = h('input', {
    name: 'subject',
    required: true,
    maxlength: '1000',
    value: existing?.subject ?? '',
    class: 'mono',
  });
  /** @type {HTMLSelectElement} */
  const format = select(
    [
      ['html', t('templates.format.html')],
      ['mjml', t('templates.format.mjml')],
    ],
    existing?.format ?? 'html',
    { name: 'format' },
  );
  /** @type {HTMLSelectElement} */
  const layout = select(
    [['', t('layouts.projectDefault')], ...layouts.items.map((l) => [l.name, l.name])],
    existing?.layout ?? '',
    {
      name: 'layout',
    },
  );
  // "Preview with event #1234": a stored request of the project as the preview's data.
  /** @type {HTMLInputElement} */
  const eventId = h('input', { name: 'event_id', type: 'number', min: '1', step: '1', inputmode: 'numeric' });
  /** @type {HTMLTextAreaElement} */
  const html = h('textarea', { name: 'html', rows: '16', class: 'mono code-area', spellcheck: 'false' });
  /** @type {HTMLTextAreaElement} */
  const text = h('textarea', { name: 'text', rows: '8', class: 'mono code-area', spellcheck: 'false' });
  /** @type {HTMLTextAreaElement} */
  const sample = h('textarea', { name: 'sample', rows: '10', class: 'mono code-area', spellcheck: 'false' });
  html.value = existing?.html ?? `<p>${t('templates.starter')}</p>\n`;
  text.value = existing?.text ?? `${t('templates.starter')}\n`;
  const errors = { subject: partError(), html: partError(), text: partError(), sample: partError() };
  /** The same, by the name of a part an error may name (any member of a request). */
  /** @type {Record<string, HTMLElement | undefined>} */
  const errorOf = errors;
  let sampleEdited = false;

  const outSubject = h('p', { class: 'preview-subject' });
  /** @type {HTMLIFrameElement} */
  const frame = h('iframe', {
    sandbox: '',
    title: t('templates.previewHtml'),
    class: 'preview-frame',
    referrerpolicy: 'no-referrer',
  });
  const outText = h('pre', { class: 'preview-text', tabindex: '0', 'aria-label': t('templates.previewText') });
  const previewState = h('p', { class: 'muted', 'aria-live': 'polite' });

  // The preview names the problem (template_problem); saving answers a 422 whose invalid_fields
  // name the part ("html": "line 2: …"). Either way the message goes under the part it is about.
  /**
   * @param {unknown} e what a request threw
   * @returns {boolean} whether it was shown under a part
   */
  const showProblem = (e) => {
    if (!(e instanceof ApiError) || e.status !== 422) return false;
    const tp = /** @type {TemplateProblem | undefined} */ (e.detail.template_problem);
    // liquidjs words its errors in English only: in another language the catalogue's sentence for the
    // error's reason (it names the part, the line and the tag) replaces them.
    const found = tp
      ? {
          [tp.part]:
            e.detail.reason && language() !== 'en'
              ? describeError(e)
              : t('templates.problemAt', { line: tp.line, message: tp.message }),
        }
      : (e.detail.invalid_fields ?? {});
    let shown = false;
    for (const [part, text] of Object.entries(found)) {
      const el = errorOf[part];
      if (!el || part === 'sample') continue;
      // A saved template's 422 says "line N: …" (the API's words): shown in the UI's language.
      el.textContent = String(text).replace(/^line (\d+): /, (_, /** @type {string} */ line) =>
        t('templates.problemAt', { line, message: '' }),
      );
      el.hidden = false;
      shown = true;
    }
    return shown;
  };
  const clearProblems = () =>
    Object.values(errors).forEach((el) => {
      el.hidden = true;
      el.textContent = '';
    });

  /** @returns {import('../pageTypes.js').Source} */
  const source = () => ({
    subject: subject.value,
    html: html.value,
    text: text.value,
    format: format.value,
    ...(layout.value ? { layout: layout.value } : {}),
  });
  const analysis = analysisPanel(site, existing?.name ?? null);

  let seq = 0;
  /** @type {number | undefined} the pending preview's */
  let timer;
  async function preview() {
    const mine = ++seq;
    /** @type {unknown} what the author typed as the request to render with */
    let sampleValue;
    if (sampleEdited) {
      try {
        sampleValue = JSON.parse(sample.value || '{}');
      } catch {
        sampleValue = null;
      }
      if (typeof sampleValue !== 'object' || sampleValue === null || Array.isArray(sampleValue)) {
        clearProblems();
        errors.sample.textContent = t('templates.sampleInvalid');
        errors.sample.hidden = false;
        return;
      }
    }
    previewState.textContent = t('templates.rendering');
    try {
      /** @type {{ subject: string, html: string, text: string, sample: Record<string, unknown> }} */
      const r = await api('POST', '/api/admin/templates/preview', {
        site_key: site,
        ...source(),
        ...(eventType.value ? { event_type: eventType.value } : {}),
        ...(sampleValue ? { sample: sampleValue } : {}),
        ...(!sampleValue && eventId.value ? { event_id: Number(eventId.value) } : {}),
      });
      if (mine !== seq) return;
      clearProblems();
      outSubject.textContent = r.subject;
      frame.srcdoc = r.html;
      outText.textContent = r.text;
      if (!sampleEdited) sample.value = JSON.stringify(r.sample, null, 2);
      previewState.textContent = t('templates.upToDate');
    } catch (e) {
      if (mine !== seq) return;
      clearProblems();
      if (!showProblem(e)) {
        errors.html.textContent = describeError(e);
        errors.html.hidden = false;
      }
      previewState.textContent = t('templates.stale');
    }
  }
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      void preview();
      void analysis.update(source());
    }, DEBOUNCE_MS);
  };
  for (const el of [subject, html, text]) el.addEventListener('input', schedule);
  for (const el of [format, layout]) el.addEventListener('change', schedule);
  eventId.addEventListener('input', () => {
    sampleEdited = false;
    schedule();
  });
  sample.addEventListener('input', () => {
    sampleEdited = true;
    schedule();
  });
  eventType.addEventListener('change', () => {
    sampleEdited = false;
    schedule();
  });
  ctx.onLeave(() => clearTimeout(timer));

  const status = h('div', { 'aria-live': 'polite' });
  const versionsBox = h('div', {});
  const drawVersions = async () => {
    if (existing) versionsBox.replaceChildren(await versionsPanel(site, existing.name, schedule));
  };
  /**
   * Publish (the default) or save as a draft; a 409 template_impact shows the impact with "save anyway".
   * @param {{ draft?: boolean, confirm?: boolean }} [options]
   */
  async function save({ draft = false, confirm = false } = {}) {
    status.replaceChildren();
    try {
      /** @type {{ name: string, created: boolean, published: boolean, version: number }} */
      const r = await api('POST', '/api/templates', {
        site_key: site,
        name: name.value.trim(),
        ...source(),
        layout: layout.value || null,
        ...(draft ? { draft: true } : {}),
        ...(confirm ? { confirm: true } : {}),
      });
      toast(
        r.created
          ? t('templates.created', { name: r.name })
          : r.published
            ? t('templates.published', { name: r.name, n: r.version })
            : t('templates.drafted', { name: r.name, n: r.version }),
      );
      if (isNew) ctx.navigate(`/ui/projects/${enc(site)}/templates/${enc(r.name)}`, { replace: true });
      else await drawVersions();
    } catch (e) {
      clearProblems();
      const impact = impactOf(e);
      if (impact) status.append(impactBox(impact, () => void save({ draft, confirm: true })) ?? '');
      else if (!showProblem(e)) showError(status, e);
      else status.append(errorBox(t('templates.notSaved')));
    }
  }
  const form = h(
    'form',
    {
      class: 'stack',
      onsubmit: (/** @type {Event} */ ev) => {
        ev.preventDefault();
        void save();
      },
    },
    h(
      'div',
      { class: 'row' },
      field(t('templates.name'), name, isNew ? t('templates.nameHint') : null),
      field(t('templates.sampleFor'), eventType, t('templates.sampleForHint')),
    ),
    h(
      'div',
      { class: 'row' },
      field(t('templates.format'), format, t('templates.formatHint')),
      field(t('layouts.layout'), layout, t('layouts.layoutHint')),
      field(t('templates.eventId'), eventId, t('templates.eventIdHint')),
    ),
    field(t('templates.subject'), subject, t('templates.subjectHint')),
    errors.subject,
    field(t('templates.html'), html, t('templates.htmlHint')),
    errors.html,
    field(t('templates.text'), text, t('templates.filtersHint')),
    errors.text,
    h('details', {}, h('summary', {}, t('templates.sample')), sample, errors.sample),
    status,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'primary', 'data-write': true }, t('templates.save')),
      isNew
        ? null
        : h(
            'button',
            { type: 'button', 'data-write': true, onclick: () => void save({ draft: true }) },
            t('templates.saveDraft'),
          ),
      h('a', { class: 'button', href: `/ui/projects/${enc(site)}${qs({ tab: 'templates' })}` }, t('templates.back')),
    ),
  );

  void preview();
  void analysis.update(source());
  await drawVersions();
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, existing ? t('templates.title', { name: existing.name }) : t('templates.new')),
    h(
      'p',
      { class: 'muted' },
      h('a', { href: `/ui/projects/${enc(site)}?tab=templates` }, site),
      ' · ',
      routedFrom.length
        ? tNodes('templates.routedFromList', { keys: routedFrom.map((k) => [code(k), ' ']) })
        : t('templates.notRouted'),
    ),
    existing ? templateRatesPart(site, existing.name) : null,
    h(
      'div',
      { class: 'editor-grid' },
      form,
      h(
        'section',
        { class: 'preview', 'aria-label': t('templates.preview') },
        h('h2', {}, t('templates.preview')),
        previewState,
        h('h3', {}, t('templates.subject')),
        outSubject,
        h('h3', {}, t('templates.htmlShort')),
        frame,
        h('h3', {}, t('templates.textShort')),
        outText,
        analysis.node,
      ),
    ),
    versionsBox,
  );
}
