// Which request members a template needs (SPEC §16), read from liquidjs' own parse tree and static
// analysis: liquidjs finds every variable that is not assigned in the template itself (its `globals`, with
// scopes of for/assign/capture handled); this file only decides, per use, whether the use tolerates a
// blank value. A use does when its output or argument has a `default` filter, when it is the test of an
// `{% if %}`/`{% unless %}`, or when it sits inside an if/unless that tests the same member.
import { IfTag, Liquid, toValueSync, UnlessTag, Value, type Arguments, type Template, type Variable } from 'liquidjs';

type Argument = Arguments extends Iterable<infer A> ? A : never;
import type { TemplateVariable } from '../domain/templateContract.js';
import { memberOf, SUPPLIED_MEMBERS } from '../domain/templateContract.js';
import { liquidEngines } from './render.js';

interface Use {
  member: string;
  soft: boolean;
}

const at = (v: Variable) => `${v.location.row}:${v.location.col}`;

/** The variables liquidjs finds in some arguments, whatever their scope (only locations are used). */
function argumentVariables(engine: Liquid, args: Iterable<Argument>): Variable[] {
  const list = [...args];
  const probe = { token: undefined, render: () => undefined, arguments: () => list } as unknown as Template;
  return Object.values(engine.analyzeSync([probe], { partials: false }).variables).flat();
}

const hasDefault = (a: Argument) => a instanceof Value && a.filters.some((f) => f.name === 'default');

/** Locations (row:col) of the uses that tolerate a blank value. */
function softLocations(engine: Liquid, nodes: Template[], guarded: ReadonlySet<string>, out: Set<string>): void {
  for (const node of nodes) {
    if (node instanceof IfTag || node instanceof UnlessTag) {
      const tested = new Set(guarded);
      for (const v of argumentVariables(engine, node.arguments())) {
        out.add(at(v));
        const m = memberOf(v.segments);
        if (m) tested.add(m);
      }
      const branches = [...node.branches.map((b) => b.templates), node.elseTemplates ?? []];
      for (const b of branches) softLocations(engine, b, tested, out);
      continue;
    }
    if (node.arguments) {
      for (const arg of node.arguments()) {
        for (const v of argumentVariables(engine, [arg])) {
          const m = memberOf(v.segments);
          if (hasDefault(arg) || (m && guarded.has(m))) out.add(at(v));
        }
      }
    }
    if (node.children) softLocations(engine, toValueSync(node.children(false, true)), guarded, out);
  }
}

/** Every use of a request member in one part's source (which must parse). */
export function memberUses(engine: Liquid, source: string, ignore: readonly string[] = []): Use[] {
  const parsed = engine.parse(source);
  const soft = new Set<string>();
  softLocations(engine, parsed, new Set(), soft);
  const uses: Use[] = [];
  for (const v of Object.values(engine.analyzeSync(parsed, { partials: false }).globals).flat()) {
    const member = memberOf(v.segments);
    if (!member || ignore.includes(member)) continue;
    uses.push({ member, soft: soft.has(at(v)) });
  }
  return uses;
}

/**
 * The variables of a whole template from its parts' uses: required when some use does not tolerate a
 * blank and the gateway does not always supply it. Sorted by name, one entry per member.
 */
export function variablesOf(uses: Use[]): TemplateVariable[] {
  const required = new Map<string, boolean>();
  for (const u of uses) required.set(u.member, (required.get(u.member) ?? false) || !u.soft);
  return [...required.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, req]) => ({ name, required: req && !SUPPLIED_MEMBERS.has(name) }));
}

interface Parts {
  subject: string;
  html: string;
  text: string;
  compiled_html?: string | null;
}

const CONTENT = 'fields.content';

/** The variables of a template with its layout (null for none); every part must parse. */
export function analyzeTemplate(tpl: Parts, layout: { html: string; text: string } | null): TemplateVariable[] {
  const { plain, html } = liquidEngines;
  return variablesOf([
    ...memberUses(plain, tpl.subject),
    ...memberUses(html, tpl.compiled_html ?? tpl.html),
    ...memberUses(plain, tpl.text),
    ...(layout ? [...memberUses(html, layout.html, [CONTENT]), ...memberUses(plain, layout.text, [CONTENT])] : []),
  ]);
}

/** How many times each part of a layout prints `{{ content }}` (it must be exactly once). */
export function contentUses(layout: { html: string; text: string }): { html: number; text: number } {
  const { plain, html } = liquidEngines;
  const count = (e: Liquid, s: string) => memberUses(e, s).filter((u) => u.member === CONTENT).length;
  return { html: count(html, layout.html), text: count(plain, layout.text) };
}
