// Time is injected everywhere the delivery engine compares against due dates, so tests can move it.
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A sleep that `wake()` ends early: the idle wait of the outbox loops (webhooks, hits). */
function wakeableSleep(): { wait(ms: number): Promise<void>; wake(): void } {
  let wakeUp: (() => void) | null = null;
  return {
    wait: (ms) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          wakeUp = null;
          resolve();
        };
        const t = setTimeout(done, ms);
        wakeUp = done;
      }),
    wake: () => wakeUp?.(),
  };
}

/**
 * The loop of an outbox worker (webhooks, hits): a full batch is followed at once by the next, otherwise
 * it sleeps `idleMs()` (or `pollMs` after an error) unless woken. `stop` lets the batch under way finish.
 */
export function outboxLoop(o: {
  runOnce(): Promise<number>;
  batchSize: number;
  pollMs: number;
  idleMs(): Promise<number>;
  onError(err: unknown): void;
}) {
  const { wait, wake } = wakeableSleep();
  let running = false;
  let done: Promise<void> | null = null;
  async function loop() {
    while (running) {
      try {
        if ((await o.runOnce()) === o.batchSize) continue;
        await wait(await o.idleMs());
      } catch (err) {
        o.onError(err);
        await wait(o.pollMs);
      }
    }
  }
  return {
    start() {
      if (running) return;
      running = true;
      done = loop();
    },
    /** False when it was not running. */
    async stop(): Promise<boolean> {
      if (!running) return false;
      running = false;
      wake();
      await done;
      return true;
    },
    wake,
  };
}
