// The render pool's tasks (renderPool.ts), run inside its threads: everything CPU-heavy a template goes
// through — Liquid, MJML, CSS inlining and the static analysis of a save — so none of it runs on the
// event loop of the process (SPEC §20).
import type { TaskEntry } from '../threads/host.js';
import { loadInlineCss } from './document.js';
import { loadMjml, compileMjml, type MjmlResult } from './mjml.js';
import { checkTemplate, liquidEngines, renderEmail, type EmailInput, type RenderedParts } from './render.js';
import type { TemplateProblem, TemplateSource } from './render.js';
import { analyzeTemplate } from './variables.js';
import type { TemplateVariable } from '../domain/templateContract.js';

// Liquid's own wall-clock render limit would stop a render on a busy machine that has used little CPU;
// here the pool's CPU budget (RENDER_BUDGET_MS) bounds every render instead. Its memory limit stays.
for (const engine of Object.values(liquidEngines)) engine.options.renderLimit = Infinity;

export interface PrepareInput {
  source: TemplateSource & { format?: 'html' | 'mjml' };
  layout: { html: string; text: string } | null;
}

export type PrepareOutput =
  | { ok: true; compiled_html: string | null; variables: TemplateVariable[] }
  | { ok: false; problem: TemplateProblem; mjml: false }
  | { ok: false; problem: TemplateProblem & { part: 'html' }; mjml: true };

// juice is loaded with a thread's first render, before the budget starts (it is not the template's CPU).
const email: TaskEntry<EmailInput, RenderedParts> = { warm: async () => void loadInlineCss(), run: renderEmail };

/** A save's (and an analysis's) work: parse the three parts, compile MJML, find the variables. */
const prepare: TaskEntry<PrepareInput, Promise<PrepareOutput>> = {
  // mjml is imported on a thread's first MJML save (~50 MiB); that import is not the template's CPU.
  warm: async (input) => {
    if (input.source.format === 'mjml') await loadMjml();
  },
  run: async ({ source, layout }) => {
    const problem = checkTemplate(source);
    if (problem) return { ok: false, problem, mjml: false };
    let compiled: string | null = null;
    if (source.format === 'mjml') {
      const out: MjmlResult = await compileMjml(source.html);
      if (!out.ok)
        return { ok: false, mjml: true, problem: { part: 'html', line: out.line, column: 1, message: out.message } };
      compiled = out.html;
    }
    return {
      ok: true,
      compiled_html: compiled,
      variables: analyzeTemplate({ ...source, compiled_html: compiled }, layout),
    };
  },
};

// One renderer under three names, so the pool's budget metric says what was being rendered.
export const tasks = { email, preview: email, save: email, prepare };
