// Template rendering (SPEC §8) with liquidjs: `{{ name }}` and `{{name}}`, conditions and filters.
//
// Decisions, written down once:
// - An unknown placeholder renders as the empty string (strictVariables off): a site that omits an
//   optional field must still get its e-mail out, and `{{ x | default: "…" }}` gives a fallback.
// - An unknown filter or tag is a parse error (strictFilters on), so a typo is refused when the template
//   is saved instead of silently printing nothing in every e-mail.
// - HTML part: every output is HTML-escaped by the engine (outputEscape). `| raw` is the author's
//   explicit opt-out; `| escape` is a no-op there so Shopify-style templates do not double-escape.
// - Subject: rendered plain, then every control character (CR, LF, TAB, …) becomes a space, so no value
//   can start a new header line. Text part: plain, not escaped.
// - include/render/layout are removed: they read files from the server's disk.
// - date, plural and money follow the project's locale and time zone (filters.ts, SPEC §15).
import { dropUnsafeLinks } from '../domain/safeLinks.js';
import { randomUUID } from 'node:crypto';
import { Liquid, type Template } from 'liquidjs';
import { fallbackName } from '../domain/templateContract.js';
import { escapeHtml, inlineCss, wholeDocument } from './document.js';
import { buildPlan, type RenderPlan } from './renderPlan.js';
import { localeFilters, SETTINGS, type RenderSettings } from './filters.js';

export type { RenderSettings } from './filters.js';

export interface TemplateSource {
  subject: string;
  html: string;
  text: string;
}

export interface RenderedParts extends TemplateSource {
  /** Stands before each link's href of `html` (linkMarks.ts): the tracking step reads and removes it. */
  linkMark?: string;
}
export type TemplatePart = keyof TemplateSource;

export interface TemplateProblem {
  part: TemplatePart;
  /** 1-based, within that part. */
  line: number;
  column: number;
  /** The parser's message without its position (that is in line/column). */
  message: string;
}

function makeEngine(html: boolean): Liquid {
  const engine = new Liquid({
    strictVariables: false,
    strictFilters: true,
    ownPropertyOnly: true,
    templates: {},
    outputEscape: html ? 'escape' : undefined,
    // Bounds against a template that loops for ever or builds huge strings.
    parseLimit: 1_000_000,
    renderLimit: 2_000,
    memoryLimit: 50_000_000,
  });
  for (const tag of ['include', 'render', 'layout']) delete engine.tags[tag];
  for (const [name, fn] of Object.entries(localeFilters)) engine.registerFilter(name, fn);
  if (html) {
    // The engine escapes the final value anyway; escaping here too would print `&amp;lt;`.
    engine.registerFilter('escape', (v: unknown) => v);
    engine.registerFilter('escape_once', (v: unknown) => v);
  }
  return engine;
}

const plainEngine = makeEngine(false);
const htmlEngine = makeEngine(true);

/** The engines of the plain parts (subject, text) and of the HTML part, for the static analysis. */
export const liquidEngines = { plain: plainEngine, html: htmlEngine } as const;

/** Bounded LRU of parsed templates: the worker renders the same few templates over and over. */
class ParseCache {
  private readonly map = new Map<string, Template[]>();
  constructor(private readonly max: number) {}
  get(engine: Liquid, kind: string, source: string): Template[] {
    const key = `${kind}\u0000${source}`;
    const hit = this.map.get(key);
    if (hit) {
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    const parsed = engine.parse(source);
    this.map.set(key, parsed);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
    return parsed;
  }
}

const cache = new ParseCache(500);

// Control characters (C0, DEL, C1) and Unicode line/paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/** A value that is safe on one header line: control characters become a single space. */
export function sanitizeHeaderValue(value: string): string {
  return value.replace(CONTROL, ' ').replace(/ {2,}/g, ' ').trim();
}

/** settings: the project's locale and time zone (the defaults of SPEC §15 when absent). */
export function renderMessage(
  tpl: TemplateSource,
  context: Record<string, unknown>,
  settings?: RenderSettings,
): RenderedParts {
  const opts = settings ? { globals: { [SETTINGS]: settings } } : undefined;
  const subject = plainEngine.renderSync(cache.get(plainEngine, 'plain', tpl.subject), context, opts) as string;
  const html = htmlEngine.renderSync(cache.get(htmlEngine, 'html', tpl.html), context, opts) as string;
  const text = plainEngine.renderSync(cache.get(plainEngine, 'plain', tpl.text), context, opts) as string;
  return { subject: sanitizeHeaderValue(subject), html, text };
}

const POSITION = /,\s*line:(\d+),\s*col:(\d+)\s*$/;

/** Null when all three parts parse; otherwise the first problem, with its 1-based line. */
export function checkTemplate(tpl: TemplateSource): TemplateProblem | null {
  const parts: [TemplatePart, Liquid][] = [
    ['subject', plainEngine],
    ['html', htmlEngine],
    ['text', plainEngine],
  ];
  for (const [part, engine] of parts) {
    const source = tpl[part];
    if (typeof source !== 'string') return { part, line: 1, column: 1, message: `${part} must be a string` };
    try {
      engine.parse(source);
    } catch (err) {
      const e = err as Error & { token?: { getPosition?: () => [number, number] } };
      const raw = e instanceof Error ? e.message : String(err);
      const pos = e.token?.getPosition?.();
      const m = POSITION.exec(raw);
      const line = pos?.[0] ?? (m ? Number(m[1]) : 1);
      const column = pos?.[1] ?? (m ? Number(m[2]) : 1);
      return { part, line, column, message: raw.replace(POSITION, '') };
    }
  }
  return null;
}

export interface ContextSources {
  /** The event request body, or a context stored earlier by this function (re-building is harmless). */
  request?: Record<string, unknown> | null;
  contact?: { email: string; name: string | null } | null;
  project?: {
    name: string;
    site_key: string;
    fallback_name?: string | null;
    locale?: string | null;
    logo_url?: string | null;
    postal_address?: string | null;
  } | null;
  /** Where answers go (the relay's reply_to, the project's, else its From): the default layout shows it. */
  replyAddress?: string | null;
  unsubscribeUrl?: string | null;
  /** The contact's preference page (SPEC §18): every e-mail but a transactional one has it. */
  preferencesUrl?: string | null;
}

const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function copyInto(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(source)) {
    if (!UNSAFE_KEYS.has(k) && v !== undefined) target[k] = v;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

/**
 * The template context (SPEC §8). Precedence, lowest first: members of `fields`, top-level request
 * fields (so `course_name` works from either place), then the service's own keys (`name`, `email`,
 * `event_type`, `order_id`, `unsubscribe_url`, `project_name`, `project`), which a request cannot spoof.
 * `fields` itself stays available as an object: `{{ fields.course_name }}`.
 */
export function buildContext(src: ContextSources): Record<string, unknown> {
  const request = src.request ?? {};
  const fields = isObject(request.fields) ? request.fields : {};
  const ctx: Record<string, unknown> = {};
  copyInto(ctx, fields);
  copyInto(ctx, request);
  ctx.fields = { ...fields };
  // Keys only the service may set: a request (or an old stored context) cannot supply its own link.
  for (const k of ['unsubscribe_url', 'preferences_url', 'project_name', 'project', 'site_name']) delete ctx[k];
  // SPEC §16: the request's name, else the contact's, else the project's fallback («коллега», friend).
  const contactName = nonEmpty(src.contact?.name) ? src.contact.name : null;
  ctx.name = nonEmpty(request.name) ? request.name : (contactName ?? (src.project ? fallbackName(src.project) : ''));
  ctx.email = nonEmpty(request.email) ? request.email : (src.contact?.email ?? '');
  ctx.event_type = request.event_type ?? null;
  ctx.order_id = request.order_id ?? null;
  if (src.unsubscribeUrl !== undefined) ctx.unsubscribe_url = src.unsubscribeUrl;
  if (src.preferencesUrl) ctx.preferences_url = src.preferencesUrl;
  if (src.project) {
    ctx.project_name = src.project.name;
    ctx.site_name = src.project.name;
    // The sender's identity for the default layout (SPEC §22, domain/defaultLayout.ts).
    ctx.project = {
      name: src.project.name,
      site_key: src.project.site_key,
      logo_url: src.project.logo_url ?? null,
      postal_address: src.project.postal_address ?? null,
      reply_address: src.replyAddress ?? null,
    };
  }
  return ctx;
}

/**
 * A subject that opens with the name, in lowercase (the fallback «коллега» of SPEC §16 fills a
 * `{{ name }}, оплата…` subject), starts with a capital letter, as a sentence does (issue 37 item 7).
 * Only the first letter changes, and only when the name is what opens the subject.
 */
export function capitalisedOpening(subject: string, name: unknown): string {
  if (typeof name !== 'string' || name === '' || !subject.startsWith(name)) return subject;
  const first = subject.charAt(0);
  return first.toLocaleUpperCase() + subject.slice(1);
}

export interface LayoutSource {
  html: string;
  text: string;
}

export interface EmailSource extends TemplateSource {
  /** MJML compiled at save; rendered instead of `html` when present. */
  compiled_html?: string | null;
}

export interface EmailInput {
  template: EmailSource;
  layout: LayoutSource | null;
  context: Record<string, unknown>;
  settings: RenderSettings;
  /**
   * Names the template version and the layout version being rendered (emailSource.ts): with it the
   * render plan of that pair is used (renderPlan.ts); without it (previews, saves) every step runs.
   */
  planKey?: string | null;
  /**
   * With a plan: leave the plan's link marks in the HTML for the tracking step (tracking.ts), which
   * removes them; without it (every caller but delivery) no mark is left.
   */
  markLinks?: boolean;
}

/** The template's rendered parts placed where the layout's one `{{ content }}` stands. */
function applyLayout(layoutHtml: string, layout: LayoutSource, body: RenderedParts, input: EmailInput): RenderedParts {
  // A marker goes in as `content` (the HTML engine would escape the body itself) and is swapped for the
  // rendered body afterwards; it has no character that escaping or a filter would change.
  const marker = `egw-content-${randomUUID()}`;
  const opts = { globals: { [SETTINGS]: input.settings } };
  const ctx = { ...input.context, content: marker };
  const place = (engine: Liquid, kind: string, source: string, content: string): string => {
    const out = engine.renderSync(cache.get(engine, kind, source), ctx, opts) as string;
    const pieces = out.split(marker);
    if (pieces.length !== 2) throw new Error('the layout must print {{ content }} exactly once');
    return pieces[0] + content + pieces[1];
  };
  return {
    subject: body.subject,
    html: place(htmlEngine, 'html', layoutHtml, body.html),
    text: place(plainEngine, 'plain', layout.text, body.text),
  };
}

/** Bounded LRU of render plans (null: that version cannot be planned), per render thread. */
const plans = new Map<string, RenderPlan | null>();
const MAX_PLANS = 200;

function planOf(input: EmailInput): RenderPlan | null {
  if (!input.planKey) return null;
  const source = input.template.compiled_html ?? input.template.html;
  // The lengths guard against a key reused for other content; the locale is the document's lang.
  const key = `${input.planKey}\u0000${input.settings.locale}\u0000${source.length}\u0000${input.layout?.html.length ?? -1}`;
  const hit = plans.get(key);
  if (hit !== undefined) {
    plans.delete(key);
    plans.set(key, hit);
    return hit;
  }
  const made = buildPlan(htmlEngine, source, input.layout?.html ?? null, input.settings.locale);
  plans.set(key, made);
  if (plans.size > MAX_PLANS) plans.delete(plans.keys().next().value as string);
  return made;
}

/**
 * Everything an e-mail's content goes through, in order. Each step takes the previous one's output;
 * a step added later (issue 26: links rewritten for click tracking and the open pixel) goes between the
 * CSS step and the return, before the message is signed and sent.
 */
export function renderEmail(input: EmailInput): RenderedParts {
  const { template, layout, context, settings } = input;
  const plan = planOf(input);
  // 1. Liquid: the template's own parts with the request's data (with a plan: its inlined source).
  const body = renderMessage(
    { subject: template.subject, html: plan?.html ?? template.compiled_html ?? template.html, text: template.text },
    context,
    settings,
  );
  body.subject = capitalisedOpening(body.subject, context.name);
  // 2. Layout: the body inside the project's frame (header, footer, unsubscribe line).
  const laid = layout ? applyLayout(plan?.layoutHtml ?? layout.html, layout, body, input) : body;
  if (plan) {
    // Steps 3 and 4 were done once, on the source: what remains is what depends on this e-mail's data.
    let safe = dropUnsafeLinks(laid.html);
    if (plan.bare) safe = safe.replaceAll(`="${plan.bare}"`, '').replaceAll(plan.bare, '');
    const at = safe.indexOf(plan.title);
    // Never expected (the plan checked its title stands once); the per-e-mail path is the safe answer.
    if (at < 0) return renderEmail({ ...input, planKey: null });
    const html = safe.slice(0, at) + escapeHtml(laid.subject) + safe.slice(at + plan.title.length);
    if (plan.links === null) return { subject: laid.subject, html, text: laid.text };
    if (input.markLinks) return { subject: laid.subject, html, text: laid.text, linkMark: plan.links };
    return { subject: laid.subject, html: html.replaceAll(plan.links, ''), text: laid.text };
  }
  // 3. A whole document: doctype, <html lang>, charset, the subject as <title>; links that are not
  //    http(s), mailto or tel dropped (SPEC §21: a request member cannot make a javascript: link).
  const document = wholeDocument(dropUnsafeLinks(laid.html), laid.subject, settings.locale);
  // 4. <style> rules inlined into the elements.
  const html = inlineCss(document);
  return { subject: laid.subject, html, text: laid.text };
}
