// Time is injected everywhere the delivery engine compares against due dates, so tests can move it.
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A sleep that `wake()` ends early: the idle wait of the outbox loops (webhooks, hits). */
export function wakeableSleep(): { wait(ms: number): Promise<void>; wake(): void } {
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
