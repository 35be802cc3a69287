// MJML templates are compiled to HTML when they are saved (SPEC §16), with the `mjml` package; the
// Liquid inside survives compilation as text and is rendered at send time like any HTML template.
//
// `mjml` is imported on the first compile, not at start: it alone adds ~50 MiB to a process's memory
// (measured: 39 → 93 MiB RSS), and only a template save ever needs it; workers never do.
const load = () => import('mjml').then((m) => m.default);
let loaded: ReturnType<typeof load> | null = null;
/** The package, imported once per thread (renderTasks.ts warms it before a save's budget starts). */
export const loadMjml = () => (loaded ??= load());

export type MjmlResult = { ok: true; html: string } | { ok: false; line: number; message: string };

export async function compileMjml(source: string): Promise<MjmlResult> {
  try {
    // strict: an unknown element or attribute is an error the author sees at save, not a broken e-mail.
    // ignoreIncludes: mj-include would read files from the server's disk.
    const out = await (
      await loadMjml()
    )(source, { validationLevel: 'strict', ignoreIncludes: true, keepComments: false });
    const first = out.errors[0];
    if (first) return { ok: false, line: first.line, message: first.message };
    return { ok: true, html: out.html };
  } catch (err) {
    const e = err as { errors?: { line?: number; message?: string }[]; message?: string };
    const first = e.errors?.[0];
    return {
      ok: false,
      line: first?.line ?? 1,
      message: first?.message ?? (e.message ?? String(err)).trim(),
    };
  }
}
