// MJML templates are compiled to HTML when they are saved (SPEC §16), with the `mjml` package; the
// Liquid inside survives compilation as text and is rendered at send time like any HTML template.
import mjml2html from 'mjml';

export type MjmlResult = { ok: true; html: string } | { ok: false; line: number; message: string };

export async function compileMjml(source: string): Promise<MjmlResult> {
  try {
    // strict: an unknown element or attribute is an error the author sees at save, not a broken e-mail.
    // ignoreIncludes: mj-include would read files from the server's disk.
    const out = await mjml2html(source, { validationLevel: 'strict', ignoreIncludes: true, keepComments: false });
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
