// Compiles src/ to dist/ with tsc when dist/ is missing or older than the sources (or always, with
// --force). `npm start` and bin/edu-gateway.js run it first, so production runs plain JavaScript (no tsx
// loader in memory) and a `git pull` never runs stale code. Sources: every .ts under src/ (the admin UI
// is served from src/ui as it is) and the tsconfig files.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const ENTRY = join(DIST, 'cli.js');

/** The newest modification time of the files under `dir` that `keep` accepts. */
function newest(dir, keep) {
  let max = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) max = Math.max(max, newest(path, keep));
    else if (keep(path)) max = Math.max(max, statSync(path).mtimeMs);
  }
  return max;
}

function sourcesTime() {
  const configs = ['tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(join(ROOT, f)).mtimeMs);
  return Math.max(
    newest(join(ROOT, 'src'), (p) => p.endsWith('.ts')),
    ...configs,
  );
}

/** Whether dist/ must be (re)built: missing, or some source changed after the last build. */
export function isStale() {
  return !existsSync(ENTRY) || statSync(ENTRY).mtimeMs < sourcesTime();
}

export function build() {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    throw new Error(
      'dist/ is missing or stale and TypeScript is not installed: run `npm ci` (with dev dependencies), then `npm run build`',
    );
  }
  rmSync(DIST, { recursive: true, force: true }); // no compiled leftovers of deleted sources
  const r = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`tsc failed (exit ${r.status ?? r.signal})`);
}

/** Builds when needed; answers the compiled CLI's path. */
export function ensureBuilt({ force = false } = {}) {
  if (force || isStale()) {
    console.error(force ? 'building dist/ …' : 'dist/ is missing or older than src/: building …');
    build();
  }
  return ENTRY;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    ensureBuilt({ force: process.argv.includes('--force') });
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}
