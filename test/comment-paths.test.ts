// Every file a comment in src/ names exists in the repository: a path from the root (src/…, test/…,
// docs/…), a path relative to a directory above the comment's file (services/replay.ts from src/), or a
// bare file name. A rename that leaves a comment pointing nowhere fails here, and so does a comment citing
// a file outside the repository (the contract the comments cite is docs/contract.md).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { it } from 'node:test';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..');
const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
const files = new Set(tracked);
const dirs = new Set(
  tracked.flatMap((f) =>
    f
      .split('/')
      .slice(0, -1)
      .map((_, i, a) => a.slice(0, i + 1).join('/')),
  ),
);
const baseNames = new Set(tracked.map((f) => f.split('/').at(-1)));

/** A slash-separated name, or a name with a source or document extension. */
const PATH = /(?<![\w./@:-])((?:\.\.?\/)*[\w.-]+(?:\/[\w.-]+)*\/[\w.-]*\w|[\w-]+\.(?:ts|js|mjs|md|json))(?![\w/-])/g;
const FROM_ROOT = /^(src|test|docs|bench|scripts|clients|bin)\//;
const FILE = /\.(ts|js|mjs|md|json)$/;

function comments(text: string): string[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const out: string[] = [];
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan())
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia)
      out.push(scanner.getTokenText());
  return out;
}

/** Whether a name a comment of `file` gives is a file or directory of the repository; null: not a path. */
function exists(file: string, name: string): boolean | null {
  if (FROM_ROOT.test(name)) return files.has(name) || dirs.has(name);
  if (!FILE.test(name)) return null;
  if (!name.includes('/')) return baseNames.has(name);
  // Relative to the comment's directory or to any directory above it (src/ for services/x.ts).
  const ancestors = dirname(file)
    .split('/')
    .map((_, i, a) => a.slice(0, a.length - i).join('/'));
  return [...ancestors, ''].some((dir) => files.has(normalize(join(dir, name))));
}

it('no comment in src/ names a file the repository does not have', () => {
  const missing: string[] = [];
  let checked = 0;
  for (const file of tracked.filter((f) => f.startsWith('src/') && /\.(ts|js|mjs)$/.test(f))) {
    for (const comment of comments(readFileSync(join(ROOT, file), 'utf8'))) {
      for (const m of comment.matchAll(PATH)) {
        const name = m[1].replace(/\.$/, '');
        const found = exists(file, name);
        if (found === null) continue;
        checked++;
        if (!found) missing.push(`${file}: ${name}`);
      }
    }
  }
  assert.ok(checked > 50, `the comments name files (${checked} found): the scan reads them`);
  assert.deepEqual(missing, []);
});

it('the check catches a missing file, a moved one and a file outside the repository', () => {
  assert.equal(exists('src/services/accept/acceptPlan.ts', 'test/accept-differential.test.ts'), false);
  assert.equal(exists('src/http/routes/x.ts', 'src/bounces/listener.ts'), false);
  assert.equal(exists('src/http/routes/x.ts', 'SPEC.md'), false);
  assert.equal(exists('src/http/routes/x.ts', '../shared/SPEC.md'), false);
  assert.equal(exists('src/http/routes/x.ts', 'plugins/access.ts'), true);
  assert.equal(exists('src/db/index.ts', 'db/groupCommit.ts'), true);
  assert.equal(exists('src/db/index.ts', 'message/rfc822'), null);
});
