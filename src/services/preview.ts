// Rendering for people, not for delivery: the template editor's live preview (unsaved source, sample
// values for the event's fields) and the view of an e-mail that has not been sent yet. Both go through
// the same renderer and context builder as the worker, so what the preview shows is what will be sent.
import { CART_STEPS, CART_TYPES, cartStepKey, catalogEvent } from '../domain/catalog.js';
import { composeEmail } from '../delivery/compose.js';
import { emailContent } from '../delivery/emailSource.js';
import { buildContext, type EmailInput } from '../delivery/render.js';
import { isBudgetExceeded, renderInPool } from '../delivery/renderPool.js';
import { parseVariables, type TemplateVariable } from '../domain/templateContract.js';
import { findLayout } from '../repos/layouts.js';
import type { EmailRow, Project } from '../db/schema.js';
import { AppError, type ErrorParams, type ErrorReason } from '../errors.js';
import { findContact } from '../repos/contacts.js';
import { findTemplate, findTemplateByName } from '../repos/templates.js';
import { parseJson, type Executor } from '../repos/types.js';
import type { PreviewBody } from '../schemas/adminUi.js';
import { requireProject } from './admin.js';
import type { Deps } from './context.js';
import { prepareSource, versionFor } from './templates.js';

/** Plausible values for every field the catalog names, and the optional ones the document shows. */
const SAMPLE_FIELDS: Record<'en' | 'ru', Record<string, unknown>> = {
  en: {
    course_name: 'Teaching mathematics in primary school',
    event_title: 'All-Russian pedagogical olympiad',
    work_title: 'Lesson plan: fractions with pizza',
    publication_title: 'Project-based learning in grade 5',
    place: '1',
    document_url: 'https://courses.example/documents/ORDER-1001.pdf',
    pay_url: 'https://courses.example/pay/ORDER-1001',
    account_url: 'https://courses.example/account',
    paid_at: '2026-03-14T10:15:00+03:00',
    course_category_id: '3',
  },
  // A Russian project previews with Russian names, titles and amounts in roubles (issue 25).
  ru: {
    course_name: 'Методика преподавания математики в начальной школе',
    event_title: 'Всероссийская педагогическая олимпиада «Мастерство учителя»',
    work_title: 'Конспект урока «Дроби на пицце»',
    publication_title: 'Проектное обучение в 5 классе',
    place: '1',
    document_url: 'https://kursy.example/documents/ORDER-1001.pdf',
    pay_url: 'https://kursy.example/pay/ORDER-1001',
    account_url: 'https://kursy.example/account',
    paid_at: '2026-03-14T10:15:00+03:00',
    course_category_id: '3',
  },
};
const SAMPLE_PERSON = {
  en: { email: 'anna.petrova@example.org', name: 'Anna Petrova' },
  ru: { email: 'ирина@пример.рф', name: 'Ирина Петрова' },
};

const cartSteps = new Set(CART_TYPES.flatMap((c) => CART_STEPS.map((s) => cartStepKey(c, s.step))));

export function isCartStep(key: string | undefined): boolean {
  return key !== undefined && cartSteps.has(key);
}

/**
 * The event request a preview renders when the editor gives none, in the project's language; every
 * variable of the template (when given) gets a value, so a preview never shows a blank.
 */
export function sampleRequest(
  eventType?: string,
  locale: string = 'en',
  variables: readonly { name: string }[] = [],
): Record<string, unknown> {
  const lang = locale === 'ru' ? 'ru' : 'en';
  const required = eventType ? (catalogEvent(eventType)?.fields ?? []) : [];
  const fields: Record<string, unknown> = { ...SAMPLE_FIELDS[lang] };
  const sample = (f: string) => (lang === 'ru' ? `пример ${f.replace(/_/g, ' ')}` : `sample ${f.replace(/_/g, ' ')}`);
  for (const f of required) fields[f] ??= sample(f);
  const top: Record<string, unknown> = {};
  for (const v of variables) {
    if (v.name.startsWith('fields.')) fields[v.name.slice(7)] ??= sample(v.name.slice(7));
    else if (v.name === 'amount') top.amount = 2490;
    else if (v.name === 'currency') top.currency = 'RUB';
    else if (v.name === 'cart_type') top.cart_type = 'course';
    else if (v.name === 'course_id') top.course_id = '77';
  }
  return {
    event_type: eventType ?? null,
    ...SAMPLE_PERSON[lang],
    order_id: 'ORDER-1001',
    ...top,
    ...(eventType && /paid|purchase|abandoned_cart/.test(eventType) ? { amount: 2490, currency: 'RUB' } : {}),
    ...(isCartStep(eventType) ? { cart_type: eventType!.split('_')[0] } : {}),
    fields,
  };
}

/**
 * What a Liquid parse error says, as a reason of the error catalogue and the tag or filter it names, so
 * the administrator reads it in their language (liquidjs words its messages in English only).
 */
function liquidReason(message: string): { reason: ErrorReason; params: ErrorParams } {
  let m = /^tag (.+) not closed$/.exec(message);
  if (m) return { reason: 'template_tag_not_closed', params: { tag: m[1] } };
  if (/^output .+ not closed$/.test(message)) return { reason: 'template_output_not_closed', params: {} };
  m = /^tag "(.+)" not found$/.exec(message);
  if (m) return { reason: 'template_unknown_tag', params: { tag: m[1] } };
  m = /^undefined filter: (.+)$/.exec(message);
  if (m) return { reason: 'template_unknown_filter', params: { filter: m[1] } };
  return { reason: 'template_syntax', params: {} };
}

export function templateProblemError(
  p: { part: string; line: number; message: string },
  kind?: 'template_mjml' | 'template_render_failed',
): AppError {
  const { reason, params } = kind ? { reason: kind, params: {} } : liquidReason(p.message);
  const said = { reason, params: { part: p.part, line: p.line, detail: p.message, field: p.part, ...params } };
  return new AppError(422, 'validation_error', said, {
    event_type: null,
    missing_fields: [],
    required_fields: [],
    invalid_fields: { [p.part]: `line ${p.line}: ${p.message}` },
    template_problem: { part: p.part, line: p.line, message: p.message },
  });
}

/** 422 template_too_heavy (SPEC §20): the render was stopped at RENDER_BUDGET_MS of CPU. */
export function tooHeavyError(budgetMs: number): AppError {
  return new AppError(422, 'template_too_heavy', { reason: 'render_budget_exceeded', params: { budget_ms: budgetMs } });
}

async function render(input: Omit<EmailInput, 'settings'>, project: RenderProject) {
  try {
    // In the render pool, never on the event loop, and fair to the other projects (SPEC §20).
    return await renderInPool(
      project.id,
      { ...input, settings: { locale: project.locale, timezone: project.timezone } },
      'preview',
    );
  } catch (err) {
    if (isBudgetExceeded(err)) throw tooHeavyError(err.budgetMs);
    // Parsing succeeded, so this is a runtime limit (output too big): the same as the worker would
    // hit, reported against the template rather than as a server error.
    const message = err instanceof Error ? err.message : String(err);
    throw templateProblemError(
      { part: 'html', line: 1, message: `cannot be rendered: ${message}` },
      'template_render_failed',
    );
  }
}

type RenderProject = Pick<Project, 'id' | 'name' | 'site_key' | 'locale' | 'timezone'>;

const previewUnsubscribeUrl = (publicUrl: string) => `${publicUrl}/u/preview-only-not-a-real-link`;
const previewPreferencesUrl = (publicUrl: string) => `${publicUrl}/p/preview-only-not-a-real-link`;

/** The request a stored event of the project carried, as the preview's data ("preview with event #1234"). */
async function eventSample(db: Executor, projectId: number, eventId: number): Promise<Record<string, unknown>> {
  const row = await db
    .selectFrom('events')
    .select(['payload'])
    .where('id', '=', eventId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  const body = parseJson<unknown>(row?.payload, null);
  if (!row || !body || typeof body !== 'object' || Array.isArray(body))
    throw new AppError(404, 'not_found', `No event ${eventId} with a stored request in this project`);
  return body as Record<string, unknown>;
}

type SampleInput = { event_type?: string; sample?: Record<string, unknown>; event_id?: number };

/** The preview's data: the request given, else a stored event's, else sample values in the project's language. */
async function previewData(db: Executor, project: Project, input: SampleInput, variables: TemplateVariable[]) {
  if (input.sample) return input.sample;
  if (input.event_id !== undefined) return eventSample(db, project.id, input.event_id);
  return sampleRequest(input.event_type, project.locale, variables);
}

function previewContext(deps: Deps, project: Project, sample: Record<string, unknown>, eventType?: string) {
  // Cart and campaign e-mails carry an unsubscribe link; a template without an event type is a campaign's.
  const withUnsubscribe = !eventType || isCartStep(eventType);
  return buildContext({
    request: sample,
    project,
    ...(withUnsubscribe
      ? {
          unsubscribeUrl: previewUnsubscribeUrl(deps.config.publicUrl),
          preferencesUrl: previewPreferencesUrl(deps.config.publicUrl),
        }
      : {}),
  });
}

/** Unsaved template source of a project, rendered with the sample, a stored event, or sample values. */
export async function previewTemplate(deps: Deps, input: PreviewBody) {
  const db = deps.db.db;
  const project = await requireProject(db, input.site_key);
  const source = {
    subject: input.subject,
    html: input.html,
    text: input.text,
    format: input.format,
    layout: input.layout,
  };
  const prepared = await prepareSource(db, project, source);
  const layoutName = input.layout ?? project.default_layout;
  const layout = layoutName ? ((await findLayout(db, project.id, layoutName)) ?? null) : null;
  const sample = await previewData(db, project, input, prepared.variables);
  const context = previewContext(deps, project, sample, input.event_type);
  const template = { ...source, compiled_html: prepared.compiled_html };
  return {
    ok: true as const,
    ...(await render({ template, layout, context }, project)),
    sample,
    variables: prepared.variables,
  };
}

/** A saved version (the published one unless `version`) rendered like previewTemplate. */
export async function previewVersion(
  deps: Deps,
  siteKey: string,
  name: string,
  input: SampleInput & { version?: number },
) {
  const db = deps.db.db;
  const project = await requireProject(db, siteKey);
  const template = await findTemplateByName(db, project.id, name);
  if (!template) throw new AppError(404, 'not_found', `No template ${name} in project ${siteKey}`);
  const v = await versionFor(db, template, input.version);
  const content = await emailContent(db, { is_test: true, template_version: Number(v.version) }, template, project);
  const variables = parseVariables(content.source.variables) ?? [];
  const sample = await previewData(db, project, input, variables);
  const context = previewContext(deps, project, sample, input.event_type);
  const parts = await render({ template: content.source, layout: content.layout, context }, project);
  return { ok: true as const, ...parts, sample, variables, version: content.version };
}

/** What an e-mail that has not been rendered yet would look like with its template as it is now. */
export async function previewStoredEmail(db: Executor, row: EmailRow, project: Project, publicUrl: string) {
  const [template, contact] = await Promise.all([findTemplate(db, row.template_id), findContact(db, row.contact_id)]);
  if (!template) throw new AppError(404, 'not_found', `Template ${row.template_id} of this e-mail no longer exists`);
  const context = buildContext({
    request: parseJson<Record<string, unknown>>(row.context, {}),
    contact: contact ?? null,
    project,
    ...(row.kind === 'transactional'
      ? {}
      : { unsubscribeUrl: previewUnsubscribeUrl(publicUrl), preferencesUrl: previewPreferencesUrl(publicUrl) }),
  });
  let content;
  try {
    content = await emailContent(db, row, template, project);
  } catch (err) {
    throw templateProblemError({ part: 'html', line: 1, message: err instanceof Error ? err.message : String(err) });
  }
  const parts = await render({ template: content.source, layout: content.layout, context }, project);
  // No Message-ID or List-Unsubscribe yet: both are made when the e-mail is sent.
  return { ...parts, headers: composeEmail({ project, email: row, contact: contact ?? null, parts }).shown };
}
