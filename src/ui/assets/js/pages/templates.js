/* global setTimeout, clearTimeout */
// Templates: the project's list (a tab) and the editor page with a live preview. The preview renders
// the unsaved source on the server with the same engine as delivery, with sample values for the chosen
// event's fields; the HTML part shows in an iframe with sandbox="" (no scripts, no same-origin access).
import { api, ApiError, describeError, enc, meta, qs } from '../api.js';
import { code, errorBox, field, h, pagedTable, select, time, toast } from '../dom.js';

const DEBOUNCE_MS = 300;

export async function templatesTab(_ctx, p) {
  const site = p.site_key;
  const [templates, routing] = await Promise.all([
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
    api('GET', `/api/admin/projects/${enc(site)}/routing`),
  ]);
  const usedBy = (name) =>
    Object.entries(routing.routes)
      .filter(([, t]) => t === name)
      .map(([k]) => k);
  return h(
    'div',
    {},
    h('p', {}, h('a', { class: 'button primary', href: `/ui/projects/${enc(site)}/templates/new` }, 'New template')),
    pagedTable(
      [
        {
          label: 'Name (template key)',
          cell: (t) => h('a', { href: `/ui/projects/${enc(site)}/templates/${enc(t.name)}` }, t.name),
        },
        { label: 'Subject', cell: (t) => t.subject },
        {
          label: 'Routed from',
          cell: (t) => {
            const u = usedBy(t.name);
            return u.length ? u.map((k) => [code(k), ' ']) : h('span', { class: 'muted' }, 'not routed');
          },
        },
        { label: 'Updated', cell: (t) => time(t.updated_at) },
      ],
      templates.items,
      { empty: 'No templates yet.' },
    ),
  );
}

function partError() {
  return h('p', { class: 'error part-error', role: 'alert', hidden: true });
}

export async function templateEditorPage(ctx, isNew) {
  const site = ctx.params[0];
  const [m, templates, routing] = await Promise.all([
    meta(),
    api('GET', `/api/admin/projects/${enc(site)}/templates`),
    api('GET', `/api/admin/projects/${enc(site)}/routing`),
  ]);
  const existing = isNew ? null : templates.items.find((t) => t.name === ctx.params[1]);
  if (!isNew && !existing)
    throw new ApiError(404, { code: 'not_found', message: `No template named ${ctx.params[1]} in ${site}` });
  const routedFrom = existing
    ? Object.entries(routing.routes)
        .filter(([, t]) => t === existing.name)
        .map(([k]) => k)
    : [];

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
  const eventType = select(
    [['', '— none (campaign) —'], ...m.routing_keys.map((k) => [k, k])],
    ctx.query.get('event_type') ?? routedFrom[0] ?? '',
    { name: 'event_type' },
  );
  const subject = h('input', {
    name: 'subject',
    required: true,
    maxlength: '1000',
    value: existing?.subject ?? '',
    class: 'mono',
  });
  const html = h('textarea', { name: 'html', rows: '16', class: 'mono code-area', spellcheck: 'false' });
  const text = h('textarea', { name: 'text', rows: '8', class: 'mono code-area', spellcheck: 'false' });
  const sample = h('textarea', { name: 'sample', rows: '10', class: 'mono code-area', spellcheck: 'false' });
  html.value = existing?.html ?? '<p>Hello, {{ name }}!</p>\n';
  text.value = existing?.text ?? 'Hello, {{ name }}!\n';
  const errors = { subject: partError(), html: partError(), text: partError(), sample: partError() };
  let sampleEdited = false;

  const outSubject = h('p', { class: 'preview-subject' });
  const frame = h('iframe', {
    sandbox: '',
    title: 'Preview of the HTML part',
    class: 'preview-frame',
    referrerpolicy: 'no-referrer',
  });
  const outText = h('pre', { class: 'preview-text', tabindex: '0', 'aria-label': 'Preview of the text part' });
  const previewState = h('p', { class: 'muted', 'aria-live': 'polite' });

  // The preview names the problem (template_problem); saving answers a 422 whose invalid_fields
  // name the part ("html": "line 2: …"). Either way the message goes under the part it is about.
  const showProblem = (e) => {
    if (!(e instanceof ApiError) || e.status !== 422) return false;
    const tp = e.detail.template_problem;
    const found = tp ? { [tp.part]: `line ${tp.line}: ${tp.message}` } : (e.detail.invalid_fields ?? {});
    let shown = false;
    for (const [part, text] of Object.entries(found)) {
      if (!errors[part] || part === 'sample') continue;
      errors[part].textContent = String(text).replace(/^line/, 'Line');
      errors[part].hidden = false;
      shown = true;
    }
    return shown;
  };
  const clearProblems = () =>
    Object.values(errors).forEach((el) => {
      el.hidden = true;
      el.textContent = '';
    });

  let seq = 0;
  let timer = null;
  async function preview() {
    const mine = ++seq;
    let sampleValue;
    if (sampleEdited) {
      try {
        sampleValue = JSON.parse(sample.value || '{}');
        if (typeof sampleValue !== 'object' || sampleValue === null || Array.isArray(sampleValue))
          throw new Error('not an object');
      } catch {
        clearProblems();
        errors.sample.textContent = 'The sample must be a JSON object: the preview uses the last valid one.';
        errors.sample.hidden = false;
        return;
      }
    }
    previewState.textContent = 'Rendering…';
    try {
      const r = await api('POST', '/api/admin/templates/preview', {
        site_key: site,
        subject: subject.value,
        html: html.value,
        text: text.value,
        ...(eventType.value ? { event_type: eventType.value } : {}),
        ...(sampleValue ? { sample: sampleValue } : {}),
      });
      if (mine !== seq) return;
      clearProblems();
      outSubject.textContent = r.subject;
      frame.srcdoc = r.html;
      outText.textContent = r.text;
      if (!sampleEdited) sample.value = JSON.stringify(r.sample, null, 2);
      previewState.textContent = 'Preview up to date.';
    } catch (e) {
      if (mine !== seq) return;
      clearProblems();
      if (!showProblem(e)) {
        errors.html.textContent = describeError(e);
        errors.html.hidden = false;
      }
      previewState.textContent = 'The preview shows the last version that rendered.';
    }
  }
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(preview, DEBOUNCE_MS);
  };
  for (const el of [subject, html, text]) el.addEventListener('input', schedule);
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
  const form = h(
    'form',
    {
      class: 'stack',
      onsubmit: async (ev) => {
        ev.preventDefault();
        status.replaceChildren();
        try {
          const r = await api('POST', '/api/templates', {
            site_key: site,
            name: name.value.trim(),
            subject: subject.value,
            html: html.value,
            text: text.value,
          });
          toast(r.created ? `Template ${r.name} created` : `Template ${r.name} saved`);
          if (isNew) ctx.navigate(`/ui/projects/${enc(site)}/templates/${enc(r.name)}`, { replace: true });
        } catch (e) {
          clearProblems();
          if (!showProblem(e)) status.append(errorBox(describeError(e)));
          else status.append(errorBox('Not saved: the template does not parse (see above).'));
        }
      },
    },
    h(
      'div',
      { class: 'row' },
      field(
        'Name (template key)',
        name,
        isNew ? 'Routing and key rights refer to it; saving an existing name updates that template.' : null,
      ),
      field('Sample values for', eventType, 'The event whose fields fill the preview.'),
    ),
    field('Subject', subject, 'Placeholders like {{ name }} or {{ course_name }}.'),
    errors.subject,
    field('HTML part', html, 'Values are HTML-escaped; | raw opts out.'),
    errors.html,
    field('Text part', text),
    errors.text,
    h('details', {}, h('summary', {}, 'Sample values (JSON, editable)'), sample, errors.sample),
    status,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Save template'),
      h('a', { class: 'button', href: `/ui/projects/${enc(site)}${qs({ tab: 'templates' })}` }, 'Back to templates'),
    ),
  );

  preview();
  return h(
    'section',
    {},
    h('h1', { tabindex: '-1' }, isNew ? 'New template' : `Template ${existing.name}`),
    h(
      'p',
      { class: 'muted' },
      h('a', { href: `/ui/projects/${enc(site)}?tab=templates` }, site),
      routedFrom.length ? [' · routed from ', routedFrom.map((k) => [code(k), ' '])] : ' · not routed',
    ),
    h(
      'div',
      { class: 'editor-grid' },
      form,
      h(
        'section',
        { class: 'preview', 'aria-label': 'Preview' },
        h('h2', {}, 'Preview'),
        previewState,
        h('h3', {}, 'Subject'),
        outSubject,
        h('h3', {}, 'HTML'),
        frame,
        h('h3', {}, 'Text'),
        outText,
      ),
    ),
  );
}
