// @ts-check
// A project's layouts (SPEC §16): the frame around template bodies, printing {{ content }} once in the
// HTML and once in the text. The project's default applies to templates that name none; a layout in use
// cannot be deleted (the API answers 409 and says by whom).
import { api, ApiError, describeError, enc } from '../api.js';
import { code, confirmDialog, errorBox, field, h, table, time, toast } from '../dom.js';
import { t } from '../i18n.js';
import { impactBox, impactOf } from './contract.js';

/** @typedef {import('../pageTypes.js').Layout} Layout */

const STARTER_HTML = '<div>\n  <h1>{{ site_name }}</h1>\n  {{ content }}\n</div>\n';
const STARTER_TEXT = '{{ site_name }}\n\n{{ content }}\n';

/** @type {import('../pageTypes.js').ProjectTab} */
export async function layoutsTab(ctx, p) {
  const site = p.site_key;
  const base = `/api/admin/projects/${enc(site)}/layouts`;
  const listBox = h('div', {});
  const formBox = h('div', {});

  /** @param {Layout} l */
  async function remove(l) {
    if (!(await confirmDialog(t('layouts.deleteQuestion', { name: l.name }), t('layouts.delete')))) return;
    try {
      await api('DELETE', `${base}/${enc(l.name)}`);
      toast(t('layouts.deleted', { name: l.name }));
      await draw();
    } catch (e) {
      toast(describeError(e), 'bad');
    }
  }

  /** @param {Layout | null} l the layout to edit; null: a new one */
  function drawForm(l) {
    /** @type {HTMLInputElement} */
    const name = h('input', {
      name: 'layout_name',
      required: true,
      maxlength: '100',
      pattern: '[A-Za-z0-9_.:\\-]+',
      value: l?.name ?? '',
      readonly: Boolean(l),
      spellcheck: 'false',
    });
    /** @type {HTMLTextAreaElement} */
    const html = h('textarea', { name: 'layout_html', rows: '12', class: 'mono code-area', spellcheck: 'false' });
    /** @type {HTMLTextAreaElement} */
    const text = h('textarea', { name: 'layout_text', rows: '6', class: 'mono code-area', spellcheck: 'false' });
    html.value = l?.html ?? STARTER_HTML;
    text.value = l?.text ?? STARTER_TEXT;
    const status = h('div', { 'aria-live': 'polite' });
    /**
     * A layout whose change makes templates in it newly require members shows the impact first.
     * @param {boolean} confirm save although recent requests would then be refused
     */
    async function save(confirm) {
      status.replaceChildren();
      try {
        await api('PUT', `${base}/${enc(name.value.trim())}`, {
          html: html.value,
          text: text.value,
          ...(confirm ? { confirm: true } : {}),
        });
        toast(t('layouts.saved', { name: name.value.trim() }));
        await draw();
        drawForm(null);
      } catch (e) {
        const impact = impactOf(e);
        const invalid = e instanceof ApiError ? e.detail.invalid_fields : undefined;
        status.append(
          (impact && impactBox(impact, () => void save(true))) ||
            errorBox(invalid ? Object.values(invalid).join('; ') : describeError(e)),
        );
      }
    }
    formBox.replaceChildren(
      h(
        'form',
        {
          class: 'stack',
          'data-write': true,
          onsubmit: (/** @type {Event} */ ev) => {
            ev.preventDefault();
            void save(false);
          },
        },
        h('h3', {}, l ? t('layouts.editTitle', { name: l.name }) : t('layouts.new')),
        field(t('layouts.name'), name, t('layouts.nameHint')),
        field(t('templates.html'), html, t('layouts.contentHint')),
        field(t('templates.text'), text, t('layouts.contentHint')),
        status,
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'submit', class: 'primary' }, t('layouts.save')),
          l ? h('button', { type: 'button', onclick: () => drawForm(null) }, t('common.cancel')) : null,
        ),
      ),
    );
  }

  // SPEC §22 / issue 39: a project made before the default layout existed is offered it, with what
  // changes said first; its own layouts and templates stay as they are until the administrator agrees.
  /** @param {Layout[]} items */
  async function offer(items) {
    if (items.some((l) => l.name === 'default')) return null;
    /** @type {{ name: string, html: string, text: string }} */
    const d = await api('GET', `/api/admin/ui/default-layout?locale=${enc(p.locale)}`);
    const changes = p.default_layout
      ? t('layouts.offerReplaces', { name: p.default_layout })
      : t('layouts.offerFrames');
    const status = h('div', { 'aria-live': 'polite' });
    const apply = async () => {
      if (!(await confirmDialog(`${t('layouts.offerQuestion')} ${changes}`, t('layouts.offerYes')))) return;
      try {
        await api('PUT', `${base}/${enc(d.name)}`, { html: d.html, text: d.text });
        await api('PATCH', `/api/admin/projects/${enc(site)}`, { default_layout: d.name });
        toast(t('layouts.offerDone', { name: d.name }));
        ctx.navigate(`/ui/projects/${enc(site)}?tab=layouts`, { replace: true });
      } catch (e) {
        status.replaceChildren(errorBox(describeError(e)));
      }
    };
    return h(
      'div',
      { class: 'notice default-layout-offer' },
      h('p', {}, t('layouts.offer')),
      h('p', { class: 'offer-changes' }, changes),
      status,
      h('button', { type: 'button', 'data-write': true, onclick: apply }, t('layouts.offerYes')),
    );
  }

  async function draw() {
    /** @type {import('../pageTypes.js').Items<Layout>} */
    const list = await api('GET', base);
    listBox.replaceChildren(
      (await offer(list.items)) ?? '',
      h(
        'p',
        { class: 'muted' },
        p.default_layout ? t('layouts.defaultIs', { name: p.default_layout }) : t('layouts.noDefault'),
      ),
      table(
        /** @satisfies {import('../pageTypes.js').Column<Layout>[]} */ ([
          { label: t('layouts.name'), cell: (l) => code(l.name) },
          {
            label: t('layouts.usedBy'),
            cell: (l) => (l.used_by.length ? l.used_by.map((n) => [code(n), ' ']) : h('span', { class: 'muted' }, '—')),
          },
          { label: t('common.updated'), cell: (l) => time(l.updated_at) },
          {
            label: t('common.actions'),
            cell: (l) =>
              h(
                'div',
                { class: 'actions', 'data-write': true },
                h('button', { type: 'button', class: 'small', onclick: () => drawForm(l) }, t('layouts.edit')),
                h('button', { type: 'button', class: 'small danger', onclick: () => remove(l) }, t('layouts.delete')),
              ),
          },
        ]),
        list.items,
        { empty: t('layouts.empty') },
      ),
    );
  }
  await draw();
  drawForm(null);
  return h('div', {}, listBox, formBox);
}
