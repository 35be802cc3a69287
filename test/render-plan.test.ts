// Issue 38: the render plan (CSS inlined once per template version, on the Liquid source) gives the same
// bytes as the per-e-mail path (inlined on each e-mail's output) for every gallery template, the demo and
// default layouts, MJML, and data that tries to break out (markup, quotes, javascript: links, empties);
// and a template the plan cannot handle safely is left to the per-e-mail path. The tracking step after it
// (links signed, the pixel) gives the same bytes from the plan's link marks as from parsing each e-mail.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEMO_LAYOUT, templateGallery } from '../src/services/demoTemplates.js';
import { defaultLayout } from '../src/domain/defaultLayout.js';
import { compileMjml } from '../src/delivery/mjml.js';
import {
  buildContext,
  liquidEngines,
  renderEmail,
  type EmailInput,
  type RenderedParts,
} from '../src/delivery/render.js';
import { buildPlan } from '../src/delivery/renderPlan.js';
import { applyTracking, type TrackingSettings } from '../src/delivery/tracking.js';
import { withUnsubscribeFooter } from '../src/domain/defaultLayout.js';

/** Every name a source prints or tests, so each context fills (or empties) all of them. */
function namesIn(...sources: string[]): string[] {
  const out = new Set<string>();
  for (const s of sources)
    for (const m of s.matchAll(/\{[{%]-?\s*(?:if|unless|elsif)?\s*([A-Za-z_][\w.]*)/g)) out.add(m[1]);
  return [...out].filter((n) => !['if', 'endif', 'else', 'content', 'for', 'endfor'].includes(n));
}

/** Sets a dotted name in a context. */
function put(ctx: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let at = ctx;
  for (const p of parts.slice(0, -1)) at = (at[p] ??= {}) as Record<string, unknown>;
  at[parts.at(-1)!] = value;
}

const VALUES = [
  (n: string) => `https://example.org/${n}?a=1&b=2`,
  () => '<b>"Анна" & \'Пётр\'</b>',
  () => 'javascript:alert(1)',
  () => '',
];

function contexts(names: string[]): Record<string, unknown>[] {
  return VALUES.map((value, i) => {
    const request: Record<string, unknown> = { order_id: i === 3 ? null : `A-${i}` };
    for (const n of names) if (!n.startsWith('project.')) put(request, n, value(n));
    const ctx = buildContext({
      request,
      contact: { email: 'anna@example.org', name: i === 1 ? '<Анна>' : 'Анна' },
      project: {
        name: i === 1 ? 'Школа «<&>»' : 'Школа',
        site_key: 'school',
        logo_url: i === 3 ? null : value('logo'),
        postal_address: i === 3 ? null : 'Москва, ул. "Новая" <1>',
      },
      replyAddress: 'reply@example.org',
      unsubscribeUrl: i === 3 ? null : 'https://gw.example.org/u/tok',
      preferencesUrl: i === 3 ? null : 'https://gw.example.org/p/tok',
    });
    return ctx;
  });
}

const TRACKING: TrackingSettings[] = [
  { opens: true, clicks: true, utm: null },
  { opens: true, clicks: false, utm: null },
  { opens: false, clicks: true, utm: { source: 'gw', medium: 'email', campaign: '{{ template_key }}' } },
  { opens: false, clicks: false, utm: null },
];

/** What delivery does after the render: SPEC §22's footer (advertising only), then the tracking step. */
function delivered(parts: RenderedParts, settings: TrackingSettings, footer: boolean): RenderedParts {
  const withFooter = footer
    ? withUnsubscribeFooter(parts, {
        locale: 'ru',
        siteName: 'Школа',
        unsubscribeUrl: 'https://gw.example.org/u/tok',
        preferencesUrl: 'https://gw.example.org/p/tok',
      })
    : parts;
  const key = Buffer.alloc(32, 7);
  const input = { publicUrl: 'https://gw.example.org/', key, emailId: 42, projectId: 3, templateKey: 'welcome' };
  return applyTracking(withFooter, { ...input, sentAt: 1_800_000_000_000, settings });
}

/** Whether the plan marks the links (test label), so the tracking step reads no e-mail with the parser. */
const marking = new Map<string, boolean>();

function compare(label: string, base: Omit<EmailInput, 'context' | 'planKey'>, planned: boolean): void {
  const source = base.template.compiled_html ?? base.template.html;
  const plan = buildPlan(liquidEngines.html, source, base.layout?.html ?? null, base.settings.locale);
  assert.equal(plan !== null, planned, `${label}: ${planned ? 'planned' : 'left to the per-e-mail path'}`);
  marking.set(label, plan?.links != null);
  const names = namesIn(source, base.template.subject, base.template.text, base.layout?.html ?? '');
  for (const [i, context] of contexts(names).entries()) {
    // Data the per-e-mail path itself fails on (juice on a broken <style>) must fail the same way.
    const run = (planKey?: string) => {
      try {
        return renderEmail({ ...base, context, planKey });
      } catch (err) {
        return { subject: 'threw', html: (err as Error).message, text: '' };
      }
    };
    const without = run();
    const withPlan = run(`test:${label}`);
    assert.equal(withPlan.html, without.html, `${label}, context ${i}: the HTML`);
    assert.equal(withPlan.subject, without.subject, `${label}, context ${i}: the subject`);
    assert.equal(withPlan.text, without.text, `${label}, context ${i}: the text`);
    if (without.subject === 'threw') continue;
    const marked = renderEmail({ ...base, context, planKey: `test:${label}`, markLinks: true });
    assert.equal(marked.linkMark !== undefined, plan?.links != null, `${label}: marked as planned`);
    for (const settings of TRACKING)
      for (const footer of [false, true]) {
        const expected = delivered(without, settings, footer);
        const got = delivered(marked, settings, footer);
        const what = `${label}, context ${i}, ${JSON.stringify(settings)}, footer ${footer}`;
        assert.equal(got.html, expected.html, `${what}: the tracked HTML`);
        assert.equal(got.text, expected.text, `${what}: the tracked text`);
        assert.deepEqual(Object.keys(got).sort(), ['html', 'subject', 'text'], `${what}: no mark leaves the step`);
      }
  }
}

const LAYOUTS = [
  ['no layout', null],
  ['demo layout', DEMO_LAYOUT],
  ['default layout (ru)', defaultLayout('ru')],
  ['default layout (en)', defaultLayout('en')],
] as const;

test('every gallery template in every layout: the plan gives the same bytes as the per-e-mail path', () => {
  const gallery = templateGallery();
  assert.ok(gallery.length >= 5, 'the gallery has its templates');
  for (const t of gallery)
    for (const [name, layout] of LAYOUTS)
      for (const locale of ['ru', 'en'] as const)
        compare(
          `${t.name} / ${name} / ${locale}`,
          {
            template: { subject: t.subject, html: t.html, text: t.text, compiled_html: null },
            layout: layout && { html: layout.html, text: layout.text },
            settings: { locale, timezone: 'Europe/Moscow' },
          },
          true,
        );
  const unmarked = [...marking].filter(([, marked]) => !marked).map(([label]) => label);
  assert.deepEqual(unmarked, [], 'every gallery template has its links marked by its plan');
});

test('links the tracking step reads from the plan: entities, forms of href, areas, what is not a link', () => {
  const fixtures: [string, boolean][] = [
    [
      '<p><a HREF="https://example.org/a?x=1&amp;y=2&copy=3">a</a> <a href=\'{{ url }}\' title="t">b</a></p>' +
        '<map><area href="https://example.org/area?a=&quot;q&quot;"></map><a>no href</a><a href="">empty</a>' +
        '<!-- <a href="https://example.org/comment">c</a> --><a href="#top">top</a><a href="mailto:x@example.org">m</a>' +
        '<a href=" https://example.org/spaced ">s</a><a href="https://gw.example.org/u/own">own</a>' +
        '{% if order_id %}<a href="https://example.org/pay/{{ order_id }}?n={{ name }}">pay</a>{% endif %}' +
        '{% for i in (1..2) %}<a href="https://example.org/{{ i }}">{{ i }}</a>{% endfor %}',
      true,
    ],
    // A second `</body>` (in a comment): where the pixel goes is left to the parser, e-mail by e-mail.
    ['<p><a href="{{ url }}">x</a></p><!-- </body> -->', false],
  ];
  for (const [n, [html, marked]] of fixtures.entries())
    for (const [name, layout] of LAYOUTS) {
      const label = `links ${n} / ${name}`;
      compare(
        label,
        {
          template: { subject: 's {{ name }}', html, text: '{{ url }} https://example.org/t.', compiled_html: null },
          layout: layout && { html: layout.html, text: layout.text },
          settings: { locale: 'ru', timezone: 'Europe/Moscow' },
        },
        true,
      );
      assert.equal(marking.get(label), marked, `${label}: links marked`);
    }
});

test('MJML templates and the fixtures of the template tests: the same bytes', async () => {
  const sources = [
    '<mjml><mj-body><mj-section><mj-column><mj-text>Здравствуйте, {{ name }}</mj-text>{% if order_id %}<mj-button href="{{ pay_url }}">Оплатить {{ order_id }}</mj-button>{% endif %}</mj-column></mj-section></mj-body></mjml>',
    '<mjml lang="en"><mj-head><mj-style inline="inline">.x { color: red; }</mj-style><mj-style>.y { color: blue; }</mj-style></mj-head><mj-body><mj-section><mj-column><mj-text css-class="x">Hi {{ name }}</mj-text><mj-image src="{{ logo_url }}" alt="logo {{ name }}"></mj-image></mj-column></mj-section></mj-body></mjml>',
  ];
  for (const [n, source] of sources.entries()) {
    const c = await compileMjml(source);
    assert.ok(c.ok, JSON.stringify(c));
    for (const [name, layout] of LAYOUTS)
      compare(
        `mjml ${n} / ${name}`,
        {
          template: { subject: 'Тема {{ name }}', html: source, text: '{{ name }}', compiled_html: c.html },
          layout: layout && { html: layout.html, text: layout.text },
          settings: { locale: 'ru', timezone: 'Europe/Moscow' },
        },
        true,
      );
  }
  const fixtures = [
    '<style>p.lead { color: #c00; }</style><p class="lead">Здравствуйте, {{ name }}!</p><p>{{ fields.place | default: "—" }}</p>{% if order_id %}<p>Заказ {{ order_id }}</p>{% endif %}',
    '<p>Hi {{ name | upcase }}</p>{%- for i in (1..3) -%}\n <span>{{ i }}</span>\n{%- endfor -%}<a href="{{ url }}">x</a><img src="{{ logo_url }}" alt="">',
    // Printed empty, an attribute made of Liquid alone is written bare (`title`), as the serializer does.
    '<p title="{{ t }}" data-x="{% if t %}{{ t }}{% endif %}">x</p><img alt="" src="{{ u }}">',
    '<html><head><title>old</title><style>td { padding: 2px }</style></head><body><table><tr><td>{{ name }}</td></tr></table></body></html>',
  ];
  for (const [n, html] of fixtures.entries())
    for (const [name, layout] of LAYOUTS)
      compare(
        `fixture ${n} / ${name}`,
        {
          template: { subject: '{{ name }}, hi', html, text: 'x', compiled_html: null },
          layout: layout && { html: layout.html, text: layout.text },
          settings: { locale: 'ru', timezone: 'Europe/Moscow' },
        },
        true,
      );
});

test('templates the plan cannot handle safely take the per-e-mail path, with the same result', () => {
  const unsafe = [
    '<style>p { color: {{ color }}; }</style><p>x</p>',
    '<p class="{{ kind }}">x</p><style>.a { color: red }</style>',
    '<p style="color: {{ color }}">x</p>',
    '<div>{{ body | raw }}</div>',
    '<style>p:first-child { color: red }</style>{% if a %}<p>a</p>{% endif %}<p>b</p>',
    '<p>{% if a %}<b>{% else %}<i>{% endif %}x</p>',
    '<p {% if a %}hidden{% endif %}>x</p>',
    '<!-- {{ name }} --><p>x</p>',
    '{% capture x %}<b>y</b>{% endcapture %}{{ x }}',
    '{% if a %}<style>p { color: red }</style>{% endif %}<p>x</p>',
    '<html><head>{% if a %}<title>t</title>{% endif %}</head><body>x</body></html>',
    '<style>a[href] { color: red }</style><a href="#top">top</a><a href="{{ url }}">x</a>',
  ];
  for (const [n, html] of unsafe.entries())
    compare(
      `unsafe ${n}`,
      {
        template: { subject: 's', html, text: 't', compiled_html: null },
        layout: null,
        settings: { locale: 'ru', timezone: 'Europe/Moscow' },
      },
      false,
    );
  // A layout that prints the content inside a block, or twice, is not planned either.
  const layout = { html: '{% if a %}{{ content }}{% endif %}', text: '{{ content }}' };
  compare(
    'content in a block',
    {
      template: { subject: 's', html: '<p>x</p>', text: 't', compiled_html: null },
      layout,
      settings: { locale: 'ru', timezone: 'Europe/Moscow' },
    },
    false,
  );
});
