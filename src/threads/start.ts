// Starting one pool thread (pool.ts): the thread host (host.ts) with the module of tasks, built from
// TypeScript first when the process runs under tsx.
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** URL of a module next to `importMetaUrl` with the same extension (.ts under tsx, .js when built). */
export function siblingModule(importMetaUrl: string, relative: string): string {
  const ext = extname(fileURLToPath(importMetaUrl));
  return new URL(`${relative}${ext}`, importMetaUrl).href;
}

const HOST = siblingModule(import.meta.url, './host');

// A thread gets the process's environment without NODE_TEST_CONTEXT: on Node 24 a thread that inherits
// it from a process started by the test runner sets up a test reporter that keeps the process alive.
function threadEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/** A thread running the tasks of module `tasks`, sharing `mark` with the pool (mark.ts). */
export function startThread(tasks: string, mark: SharedArrayBuffer): Worker {
  const built = HOST.endsWith('.ts') ? devBuild(tasks) : { host: HOST, tasks };
  return new Worker(new URL(built.host), {
    workerData: { module: built.tasks, mark },
    env: threadEnv(),
    resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
  });
}

/**
 * A render's garbage is short-lived and its live set small, so a thread's young generation need not grow
 * to what V8 sizes from the host's memory (up to 128 MiB per thread on a 24 GB host, issue 38): in the
 * e2e bench this took peak RSS from ~530 to ~490 MiB at the same CPU per e-mail.
 */
const THREAD_YOUNG_GENERATION_MB = 12;

/**
 * Under tsx (tests, `npm run cli`) the thread's TypeScript is compiled once per process by esbuild (the
 * compiler tsx itself uses) into JavaScript: a thread that registered tsx would spend ~2 s of CPU
 * compiling before it is ready, ten times a built thread's start, and each stopped render restarts one.
 * The files go under node_modules/.cache so that the packages (left external) resolve as from src/.
 */
const devBuilds = new Map<string, { host: string; tasks: string }>();
function devBuild(tasks: string): { host: string; tasks: string } {
  const known = devBuilds.get(tasks);
  if (known) return known;
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const outdir = join(root, 'node_modules', '.cache', 'egw-threads', `${process.pid}-${devBuilds.size}`);
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  esbuild.buildSync({
    entryPoints: { host: fileURLToPath(HOST), tasks: fileURLToPath(tasks) },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    logLevel: 'error',
  });
  process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
  const built = {
    host: pathToFileURL(join(outdir, 'host.mjs')).href,
    tasks: pathToFileURL(join(outdir, 'tasks.mjs')).href,
  };
  devBuilds.set(tasks, built);
  return built;
}
