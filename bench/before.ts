// The gateway as it was at another commit, for a before/after figure measured in the same run
// (BENCH_BEFORE=<git ref>; issue 23 asks that a refactoring of the accept path show no regression).
// The ref's tree is extracted with `git archive` into .bench/before-<sha>/ (git-ignored), shares this
// checkout's node_modules (the ref must need the same dependencies) and is compiled once with tsc. It
// migrates its own database and loads its own example project through its own CLI, so no code of this
// checkout touches a schema it does not know.
import { execFileSync, execSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { ROOT, type BenchDb } from './lib.js';

/** BENCH_BEFORE: a git ref whose gateway runs beside this one in the accept bench. */
export const BEFORE_REF = process.env.BENCH_BEFORE?.trim() || null;

export interface BeforeBuild {
  /** Short commit id, for the tables. */
  sha: string;
  /** Its compiled CLI. */
  cli: string;
}

export function buildBefore(ref: string): BeforeBuild {
  const sha = execFileSync('git', ['rev-parse', '--short', `${ref}^{commit}`], { cwd: ROOT })
    .toString()
    .trim();
  const dir = join(ROOT, '.bench', `before-${sha}`);
  const cli = join(dir, 'dist', 'cli.js');
  if (!existsSync(cli)) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execSync(`git archive ${sha} | tar -x -C "${dir}"`, { cwd: ROOT });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    execFileSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.build.json')], { stdio: 'inherit' });
  }
  return { sha, cli };
}

/**
 * That build's example project in `b` (an unmigrated database: its `demo` command migrates it), with
 * the rate limit of the key the bench uses raised as for this checkout's run. Returns the key.
 */
export async function loadBeforeProject(build: BeforeBuild, b: BenchDb): Promise<string> {
  const out = execFileSync(process.execPath, [build.cli, 'demo'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: b.url, LOG_LEVEL: 'warn' },
  }).toString();
  const key = /^\s+site backend.*: (\S+)$/m.exec(out)?.[1];
  // The output lists the new keys: shown masked, even for a throw-away bench database.
  if (!key)
    throw new Error(`no "site backend" key in the output of ${build.sha}'s demo:\n${out.replace(/egw_\w+/g, 'egw_…')}`);
  await sql`update api_keys set rate_per_second = 10000000, rate_burst = 10000000`.execute(b.db.db);
  return key;
}
