// How a pool task fails (pool.ts): stopped at its budget, or with an error from its thread.
export class BudgetExceeded extends Error {
  constructor(
    readonly budgetMs: number,
    readonly usedMs: number,
  ) {
    super(`used more than its budget of ${budgetMs} ms of CPU`);
    this.name = 'BudgetExceeded';
  }
}

/** An error a task threw, carried over from its thread by name and message. */
export class TaskError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}
