// Time is injected everywhere the delivery engine compares against due dates, so tests can move it.
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
