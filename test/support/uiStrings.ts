// A static scan for user-facing text written outside the UI's message catalogue (src/ui/assets/js/i18n/).
// The JavaScript is parsed (TypeScript's parser reads plain JS) and every string literal is judged by
// where it stands:
// - in a display position (a child of h(), a title/aria-label/placeholder attribute, textContent,
//   toast(), field() labels, table labels and cells, select option texts, …) any letter is a finding,
//   even a single lowercase word: "none" on a badge is text a person reads;
// - in a structural position (import paths, tag names, attribute values such as class and id, CSS
//   selectors, API paths, catalogue keys, comparisons, console output, Intl options) nothing is;
// - anywhere else (a constant, a map of messages) a literal is a finding when it reads as prose:
//   Cyrillic, two words with a space between them, or a capitalised word; identifiers, CSS classes,
//   ids, URLs and selectors do not.
// index.html may hold only {{key}} placeholders of the catalogue in its text and text attributes.
import ts from 'typescript';

export interface Finding {
  file: string;
  line: number;
  text: string;
  why: 'display' | 'prose';
}

type Ctx = 'normal' | 'structural' | 'display';

const DISPLAY_ATTRS = new Set([
  'title',
  'placeholder',
  'aria-label',
  'aria-description',
  'aria-roledescription',
  'aria-valuetext',
  'aria-placeholder',
  'alt',
  'label',
]);
/** Members of option objects whose values people read (table columns, pagers, charts, errors). */
const DISPLAY_PROPS = new Set([
  'label',
  'empty',
  'title',
  'caption',
  'info',
  'prevLabel',
  'nextLabel',
  'labelHeader',
  'message',
  'name',
  'cell',
  'text',
  'description',
]);
const DISPLAY_ASSIGN = new Set([
  'textContent',
  'innerText',
  'title',
  'placeholder',
  'alt',
  'ariaLabel',
  'label',
  'nodeValue',
]);
/** Functions whose arguments at these positions are shown ('rest' from there on). */
const DISPLAY_CALLS: Record<string, (number | 'rest')[]> = {
  toast: [0],
  errorBox: [0],
  confirmDialog: [0, 1],
  field: [0, 2],
  checkbox: [0],
  badge: [0],
  code: [0],
  jsonBlock: [1],
  facts: [0],
  card: [0, 1],
  checkGroup: [0, 4],
  saveForm: [2],
  createTextNode: [0],
  append: ['rest'],
  prepend: ['rest'],
  replaceChildren: ['rest'],
  before: ['rest'],
  after: ['rest'],
  alert: [0],
  confirm: [0],
  prompt: [0, 1],
};
/** Calls whose arguments are code, not text (all of them unless an index list is given). */
const STRUCTURAL_CALLS: Record<string, number[] | 'all'> = {
  api: 'all',
  fetch: 'all',
  qs: 'all',
  navigate: 'all',
  querySelector: 'all',
  querySelectorAll: 'all',
  closest: 'all',
  matches: 'all',
  getElementById: 'all',
  getElementsByClassName: 'all',
  createElement: 'all',
  createElementNS: 'all',
  addEventListener: [0],
  removeEventListener: [0],
  getAttribute: 'all',
  hasAttribute: 'all',
  removeAttribute: 'all',
  toggleAttribute: 'all',
  add: 'all',
  remove: 'all',
  toggle: 'all',
  contains: 'all',
  getItem: 'all',
  setItem: 'all',
  removeItem: 'all',
  get: 'all',
  set: 'all',
  delete: 'all',
  has: 'all',
  t: [0],
  tNodes: [0],
  hasKey: [0],
  startsWith: 'all',
  endsWith: 'all',
  includes: 'all',
  split: 'all',
  replace: 'all',
  replaceAll: 'all',
  padStart: 'all',
  padEnd: 'all',
  join: 'all',
  indexOf: 'all',
  encodeURIComponent: 'all',
  decodeURIComponent: 'all',
  error: 'all', // console.error
  warn: 'all',
  log: 'all',
  info: 'all',
  debug: 'all',
  supportedValuesOf: 'all',
  urlWith: 'all',
  pathToFileURL: 'all',
};
/** Calls whose argument at this index is an attribute object like h()'s second. */
const ATTRS_ARG: Record<string, number> = { h: 1, s: 1, select: 2, checkbox: 2 };
/** Calls whose first argument is a tag name and whose arguments from the third on are children. */
const ELEMENT_CALLS = new Set(['h', 's']);

const LETTER = /\p{L}/u;
const CYRILLIC = /[\u0400-\u04ff]/;
const SELECTORISH = /^[\w\s.#[\]="':>,()*+~-]+$/;

/**
 * Reads as prose: Cyrillic, a capitalised word, or two words with whitespace between them, unless
 * every word is a class of the stylesheet (a class list) or the string is a CSS selector.
 */
export function isProse(text: string, cssClasses: ReadonlySet<string> = new Set()): boolean {
  if (CYRILLIC.test(text)) return true;
  if (SELECTORISH.test(text) && /[.#[]/.test(text)) return false;
  if (/(^|[^A-Za-z])[A-Z][a-z]{2,}/.test(text)) return true;
  if (!/[A-Za-z]{2,}\s+[A-Za-z]{2,}/.test(text)) return false;
  const words = text.trim().split(/\s+/);
  return !words.every((w) => cssClasses.has(w));
}

/** The class names a stylesheet defines. */
export function cssClassesOf(css: string): Set<string> {
  return new Set([...css.replace(/\/\*[\s\S]*?\*\//g, '').matchAll(/\.(-?[A-Za-z_][\w-]*)/g)].map((m) => m[1]));
}

function calleeName(e: ts.Expression): string | null {
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  return null;
}

function rootName(e: ts.Expression): string | null {
  while (ts.isPropertyAccessExpression(e) || ts.isCallExpression(e)) e = e.expression;
  return ts.isIdentifier(e) ? e.text : null;
}

function propName(n: ts.PropertyName): string | null {
  if (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isNumericLiteral(n)) return n.text;
  return null;
}

function literalText(n: ts.Node): string | null {
  if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) return n.text;
  if (ts.isTemplateExpression(n)) return [n.head.text, ...n.templateSpans.map((s) => s.literal.text)].join(' ');
  return null;
}

const COMPARISON = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
  ts.SyntaxKind.InKeyword,
]);

export function scanJs(file: string, source: string, cssClasses: ReadonlySet<string> = new Set()): Finding[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const findings: Finding[] = [];
  const report = (n: ts.Node, text: string, why: Finding['why']) =>
    findings.push({ file, line: sf.getLineAndCharacterOfPosition(n.getStart()).line + 1, text, why });

  // returnCtx: the context of what the enclosing function returns (a table cell renderer's result is
  // shown); fnReturns: n is a function whose result is shown (items.map(fn) in a display position).
  const walk = (n: ts.Node, ctx: Ctx, returnCtx: Ctx = 'normal', fnReturns = false): void => {
    const text = literalText(n);
    if (text !== null) {
      if (ctx === 'display' && LETTER.test(text)) report(n, text, 'display');
      else if (ctx === 'normal' && isProse(text, cssClasses)) report(n, text, 'prose');
      if (ts.isTemplateExpression(n))
        n.templateSpans.forEach((s) => walk(s.expression, ctx === 'display' ? 'normal' : ctx));
      return;
    }
    if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) return;
    if (ts.isRegularExpressionLiteral(n)) return;

    if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
      walk(n.expression, 'normal');
      const name = calleeName(n.expression);
      const args = n.arguments ?? ts.factory.createNodeArray();
      const own = <T>(table: Record<string, T>) => (name && Object.hasOwn(table, name) ? table[name] : undefined);
      const structural = own(STRUCTURAL_CALLS);
      const display = own(DISPLAY_CALLS);
      const attrsArg = own(ATTRS_ARG);
      const root = rootName(n.expression);
      args.forEach((arg, i) => {
        let argCtx: Ctx = 'normal';
        if (root === 'Intl' || root === 'console' || root === 'JSON') argCtx = 'structural';
        else if (name && ELEMENT_CALLS.has(name)) argCtx = i === 0 ? 'structural' : i === 1 ? 'normal' : 'display';
        else if (structural === 'all' || (Array.isArray(structural) && structural.includes(i))) argCtx = 'structural';
        else if (display && (display.includes(i) || (display.includes('rest') && i >= display.indexOf('rest'))))
          argCtx = 'display';
        if (name === 'setAttribute' && i === 0) argCtx = 'structural';
        if (name === 'setAttribute' && i === 1) {
          const attr = literalText(args[0]);
          argCtx = attr && DISPLAY_ATTRS.has(attr) ? 'display' : 'structural';
        }
        if (name === 'select' && i === 0) return walkOptions(arg);
        if (name === 'select' && i === 1) argCtx = 'structural';
        if (attrsArg === i && ts.isObjectLiteralExpression(arg)) return walkAttrs(arg);
        // items.map((x) => 'text') where the result is shown: the callback's result is shown too.
        if ((name === 'map' || name === 'flatMap') && ctx === 'display' && i === 0)
          return walk(arg, 'normal', 'normal', true);
        walk(arg, argCtx);
      });
      return;
    }

    if (ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isFunctionDeclaration(n)) {
      const inner: Ctx = ctx === 'display' || fnReturns ? 'display' : 'normal';
      n.parameters.forEach((p) => walk(p, 'normal')); // default values may be labels
      if (n.body && !ts.isBlock(n.body)) return walk(n.body, inner);
      if (n.body) walk(n.body, 'normal', inner);
      return;
    }
    if (ts.isReturnStatement(n)) {
      if (n.expression) walk(n.expression, returnCtx);
      return;
    }
    if (ts.isBinaryExpression(n)) {
      if (COMPARISON.has(n.operatorToken.kind)) {
        walk(n.left, 'structural');
        walk(n.right, 'structural');
        return;
      }
      const assign = n.operatorToken.kind === ts.SyntaxKind.EqualsToken;
      if (assign && ts.isPropertyAccessExpression(n.left)) {
        const target = n.left.name.text;
        const isDocTitle = target === 'title' && rootName(n.left.expression) === 'document';
        walk(n.right, DISPLAY_ASSIGN.has(target) || isDocTitle ? 'display' : 'normal', returnCtx);
        return;
      }
      walk(n.left, ctx, returnCtx);
      walk(n.right, ctx, returnCtx);
      return;
    }
    if (ts.isCaseClause(n)) {
      walk(n.expression, 'structural');
      n.statements.forEach((s) => walk(s, 'normal', returnCtx));
      return;
    }
    if (ts.isElementAccessExpression(n)) {
      walk(n.expression, 'normal');
      walk(n.argumentExpression, 'structural');
      return;
    }
    if (ts.isPropertyAssignment(n)) {
      const key = propName(n.name);
      const display = ctx !== 'structural' && key !== null && DISPLAY_PROPS.has(key);
      walk(n.initializer, display ? 'display' : ctx === 'display' ? 'normal' : ctx);
      return;
    }
    if (ts.isConditionalExpression(n)) {
      walk(n.condition, 'normal');
      walk(n.whenTrue, ctx, returnCtx);
      walk(n.whenFalse, ctx, returnCtx);
      return;
    }
    if (
      ts.isArrayLiteralExpression(n) ||
      ts.isParenthesizedExpression(n) ||
      ts.isSpreadElement(n) ||
      ts.isObjectLiteralExpression(n)
    ) {
      ts.forEachChild(n, (c) => walk(c, ctx, returnCtx));
      return;
    }
    ts.forEachChild(n, (c) => walk(c, ctx === 'display' ? 'normal' : ctx, returnCtx));
  };

  /** h()'s attributes: title, aria-label… are shown; class, id, href… are code. */
  const walkAttrs = (obj: ts.ObjectLiteralExpression) => {
    for (const p of obj.properties) {
      if (ts.isPropertyAssignment(p)) {
        const key = propName(p.name);
        walk(p.initializer, key && DISPLAY_ATTRS.has(key) ? 'display' : 'structural');
      } else walk(p, 'structural');
    }
  };

  /** select()'s options: [value, text] pairs (the text is shown), or bare values shown as they are. */
  const walkOptions = (arg: ts.Expression) => {
    if (!ts.isArrayLiteralExpression(arg)) return walk(arg, 'normal');
    for (const el of arg.elements) {
      if (ts.isArrayLiteralExpression(el)) {
        el.elements.forEach((x, i) => walk(x, i === 1 ? 'display' : 'structural'));
      } else walk(el, ts.isSpreadElement(el) ? 'normal' : 'display');
    }
  };

  walk(sf, 'normal');
  return findings;
}

/** The {{key}} placeholders of index.html, and any text or text attribute that is not one. */
export function scanHtml(file: string, html: string): { findings: Finding[]; keys: string[] } {
  const findings: Finding[] = [];
  const keys: string[] = [];
  const lineOf = (i: number) => html.slice(0, i).split('\n').length;
  const check = (text: string, at: number) => {
    for (const m of text.matchAll(/\{\{([\w.]+)\}\}/g)) keys.push(m[1]);
    const rest = text.replace(/\{\{[\w.]+\}\}/g, '');
    if (LETTER.test(rest)) findings.push({ file, line: lineOf(at), text: text.trim(), why: 'display' });
  };
  // Comments are for developers; script and style bodies are not text.
  const clean = html.replace(/<!--[\s\S]*?-->|<(script|style)\b[^>]*>[\s\S]*?<\/\1>/gi, (m) =>
    m.replace(/[^\n]/g, ' '),
  );
  for (const m of clean.matchAll(/>([^<]+)</g)) check(m[1], m.index);
  for (const tag of clean.matchAll(/<([a-z][\w-]*)\b([^>]*)>/gi)) {
    for (const a of tag[2].matchAll(/([\w:-]+)\s*=\s*"([^"]*)"/g)) {
      const isText = DISPLAY_ATTRS.has(a[1]) || (a[1] === 'content' && /name="description"/.test(tag[2]));
      if (isText || a[1] === 'lang') check(a[2], tag.index);
    }
  }
  return { findings, keys };
}
