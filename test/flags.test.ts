// Flag columns are 0/1 in the database and booleans everywhere else (src/db/flags.ts): the conversion
// tolerates what each driver returns, and no code above the data layer compares a flag column with 0/1
// or writes one as 0/1. The flag columns are read from the row types (those typed Flag), so a new one is
// covered as soon as it is declared.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fromFlag, toFlag } from '../src/db/flags.js';

const ROOT = join(import.meta.dirname, '..');
/** Code that gets rows from the repositories and must only see booleans for flags. */
const ABOVE_DATA_LAYER = ['services', 'delivery', 'domain', 'workers', 'http'].map((d) => join(ROOT, 'src', d));

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

function flagColumns(): string[] {
  const names = new Set<string>();
  for (const file of tsFiles(join(ROOT, 'src', 'db', 'tables')))
    for (const m of readFileSync(file, 'utf8').matchAll(/^\s+(\w+): (?:Generated<)?Flag>?;/gm)) names.add(m[1]);
  return [...names].sort();
}

describe('flags', () => {
  it('read as booleans whatever the driver returns', () => {
    for (const yes of [1, 1n, '1', true]) assert.equal(fromFlag(yes), true, `${typeof yes} ${String(yes)}`);
    for (const no of [0, 0n, '0', false, null, undefined])
      assert.equal(fromFlag(no), false, `${typeof no} ${String(no)}`);
    assert.equal(toFlag(true), 1);
    assert.equal(toFlag(false), 0);
  });

  it('are compared and written as 0/1 only in the data layer (src/db, src/repos)', () => {
    const columns = flagColumns();
    // The row types name them: a rename of the marker would silently empty this check.
    for (const c of ['is_test', 'accepted', 'tracking', 'read_only', 'subscribed']) assert.ok(columns.includes(c), c);
    const n = columns.join('|');
    const patterns = [
      // row.is_test === 1, (row.tracking) !== 0
      new RegExp(`\\.(${n})\\)?\\s*[!=]==?\\s*[01]\\b`),
      // Number(row.is_test)
      new RegExp(`Number\\([^()]*\\.(${n})\\)`),
      // machine: reason ? 1 : 0
      new RegExp(`\\b(${n}):\\s*[^,]*\\?\\s*1\\s*:\\s*0`),
      // is_test: 1, { subscribed: 0 }
      new RegExp(`\\b(${n}):\\s*[01]\\s*[,}]`),
      // .where('accepted', '=', 1)
      new RegExp(`'(${n})',\\s*'[^']+',\\s*[01]\\)`),
    ];
    const found: string[] = [];
    for (const file of ABOVE_DATA_LAYER.flatMap(tsFiles))
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (patterns.some((p) => p.test(line))) found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
        });
    assert.deepEqual(found, [], 'use the booleans the repositories give; convert in src/repos with db/flags.ts');
  });
});
