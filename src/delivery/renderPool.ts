// The process's one render pool (SPEC §20): every e-mail render, preview and template save runs in it,
// off the event loop, fair across projects and within RENDER_BUDGET_MS of CPU each. One per process,
// because a process has one set of cores: an `all` process's API and worker share it. Configured at
// start (server.ts, buildApp); a process that never configures it gets the defaults on first use.
import { BudgetExceeded, siblingModule, ThreadPool, type PoolOptions } from '../threads/pool.js';
import type { EmailInput, RenderedParts } from './render.js';
import type { PrepareInput, PrepareOutput } from './renderTasks.js';

export { BudgetExceeded } from '../threads/pool.js';

export const DEFAULT_RENDER_BUDGET_MS = 500;

export interface RenderPoolSettings {
  budgetMs: number;
  /** 0: the cores this process may use. */
  threads: number;
  /** Told of each render stopped at the budget: what it was for, and the project's id. */
  onBudgetExceeded?: (use: string, projectId: number) => void;
}

const TASKS = siblingModule(import.meta.url, './renderTasks');

let shared: { pool: ThreadPool; settings: RenderPoolSettings } | null = null;

function create(settings: RenderPoolSettings): ThreadPool {
  const opts: PoolOptions = {
    tasks: TASKS,
    budgetMs: settings.budgetMs,
    ...(settings.threads > 0 ? { size: settings.threads } : {}),
    // Read at the time of the stop: a later configureRenderPool with the same budget may replace it.
    onBudgetExceeded: (task, key) =>
      shared?.settings.onBudgetExceeded?.(task === 'prepare' ? 'save' : task, Number(key.slice(1))),
  };
  return new ThreadPool(opts);
}

/** Sets the budget and size; a pool with other settings is replaced (its threads end when idle work ends). */
export function configureRenderPool(settings: RenderPoolSettings): void {
  const same = shared && shared.settings.budgetMs === settings.budgetMs && shared.settings.threads === settings.threads;
  if (same) {
    shared!.settings.onBudgetExceeded = settings.onBudgetExceeded;
    return;
  }
  const old = shared?.pool;
  shared = { pool: create(settings), settings: { ...settings } };
  // Tasks already running on the old pool finish there; it is closed once they have.
  if (old) void drainThenClose(old);
}

async function drainThenClose(pool: ThreadPool): Promise<void> {
  while (pool.pending > 0) await new Promise((r) => setTimeout(r, 100));
  await pool.close();
}

function pool(): ThreadPool {
  shared ??= {
    pool: create({ budgetMs: DEFAULT_RENDER_BUDGET_MS, threads: 0 }),
    settings: { budgetMs: DEFAULT_RENDER_BUDGET_MS, threads: 0 },
  };
  return shared.pool;
}

/** Starts the pool's threads now; resolves when they are all ready (a process's start, tests). */
export const warmRenderPool = (): Promise<void> => pool().warm();

/** Fair share key of a project: its id (ids are unique; keys share no namespace with anything else). */
const keyOf = (projectId: number) => `p${projectId}`;

/** What a render is for: an e-mail, a preview, or a save's trial render (the metric's `task` label). */
export type RenderUse = 'email' | 'preview' | 'save';

/** renderEmail in the pool. Rejects with BudgetExceeded, or with the renderer's own error (message kept). */
export function renderInPool(projectId: number, input: EmailInput, use: RenderUse = 'email'): Promise<RenderedParts> {
  return pool().run<RenderedParts>(keyOf(projectId), use, input);
}

/** A template save's parse, MJML compilation and variable analysis in the pool. */
export function prepareInPool(projectId: number, input: PrepareInput): Promise<PrepareOutput> {
  return pool().run<PrepareOutput>(keyOf(projectId), 'prepare', input);
}

export const isBudgetExceeded = (err: unknown): err is BudgetExceeded => err instanceof BudgetExceeded;
