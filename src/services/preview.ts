// Rendering for people, not for delivery: the template editor's live preview (unsaved source, sample
// values for the event's fields) and the view of an e-mail that has not been sent yet. Both go through
// the same renderer and context builder as the worker, so what the preview shows is what will be sent.
import { CART_STEPS, CART_TYPES, cartStepKey, catalogEvent } from '../domain/catalog.js';
import { composeEmail } from '../delivery/compose.js';
import { buildContext, checkTemplate, renderMessage, type TemplateSource } from '../delivery/render.js';
import type { EmailRow, Project } from '../db/schema.js';
import { AppError } from '../errors.js';
import { findContact } from '../repos/contacts.js';
import { findTemplate } from '../repos/templates.js';
import { parseJson, type Executor } from '../repos/types.js';
import type { PreviewBody } from '../schemas/adminUi.js';
import { requireProject } from './admin.js';
import type { Deps } from './context.js';

/** Plausible values for every field the catalog names, and the optional ones the document shows. */
const SAMPLE_FIELDS: Record<string, unknown> = {
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
};

const cartSteps = new Set(CART_TYPES.flatMap((c) => CART_STEPS.map((s) => cartStepKey(c, s.step))));

export function isCartStep(key: string | undefined): boolean {
  return key !== undefined && cartSteps.has(key);
}

/** The event request a preview renders when the editor gives none. */
export function sampleRequest(eventType?: string): Record<string, unknown> {
  const required = eventType ? (catalogEvent(eventType)?.fields ?? []) : [];
  const fields: Record<string, unknown> = { ...SAMPLE_FIELDS };
  for (const f of required) fields[f] ??= `sample ${f.replace(/_/g, ' ')}`;
  return {
    event_type: eventType ?? null,
    email: 'anna.petrova@example.org',
    name: 'Anna Petrova',
    order_id: 'ORDER-1001',
    ...(eventType && /paid|purchase|abandoned_cart/.test(eventType) ? { amount: 2490, currency: 'RUB' } : {}),
    ...(isCartStep(eventType) ? { cart_type: eventType!.split('_')[0] } : {}),
    fields,
  };
}

export function templateProblemError(p: { part: string; line: number; message: string }): AppError {
  return new AppError(422, 'validation_error', `The template does not parse: ${p.part}, line ${p.line}: ${p.message}`, {
    event_type: null,
    missing_fields: [],
    required_fields: [],
    invalid_fields: { [p.part]: `line ${p.line}: ${p.message}` },
    template_problem: { part: p.part, line: p.line, message: p.message },
  });
}

function render(tpl: TemplateSource, context: Record<string, unknown>, project: RenderProject) {
  try {
    return renderMessage(tpl, context, { locale: project.locale, timezone: project.timezone });
  } catch (err) {
    // Parsing succeeded, so this is a runtime limit (a loop too long, output too big): the same as the
    // worker would hit, reported against the template rather than as a server error.
    const message = err instanceof Error ? err.message : String(err);
    throw templateProblemError({ part: 'html', line: 1, message: `cannot be rendered: ${message}` });
  }
}

type RenderProject = Pick<Project, 'name' | 'site_key' | 'locale' | 'timezone'>;

const previewUnsubscribeUrl = (publicUrl: string) => `${publicUrl}/u/preview-only-not-a-real-link`;
const previewPreferencesUrl = (publicUrl: string) => `${publicUrl}/p/preview-only-not-a-real-link`;

/** Unsaved template source of a project, rendered with the sample (or sample values for the event type). */
export async function previewTemplate(deps: Deps, input: PreviewBody) {
  const project = await requireProject(deps.db.db, input.site_key);
  const tpl = { subject: input.subject, html: input.html, text: input.text };
  const problem = checkTemplate(tpl);
  if (problem) throw templateProblemError(problem);
  const sample = input.sample ?? sampleRequest(input.event_type);
  // Cart and campaign e-mails carry an unsubscribe link; a template without an event type is a campaign's.
  const withUnsubscribe = !input.event_type || isCartStep(input.event_type);
  const context = buildContext({
    request: sample,
    project,
    ...(withUnsubscribe
      ? {
          unsubscribeUrl: previewUnsubscribeUrl(deps.config.publicUrl),
          preferencesUrl: previewPreferencesUrl(deps.config.publicUrl),
        }
      : {}),
  });
  return { ok: true as const, ...render(tpl, context, project), sample };
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
  const parts = render(template, context, project);
  // No Message-ID or List-Unsubscribe yet: both are made when the e-mail is sent.
  return { ...parts, headers: composeEmail({ project, email: row, contact: contact ?? null, parts }).shown };
}
