// A circuit breaker per transport (issue 13): after `failures` transient failures in a row the relay is
// skipped for `cooldownMs`; then one e-mail tries it again (half open): success closes the circuit,
// failure opens it for another cool-down. Kept per process: each worker learns a dead relay by itself
// within `failures` attempts, which costs less than sharing the state would.
export interface BreakerOptions {
  failures: number;
  cooldownMs: number;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

interface Entry {
  failures: number;
  /** What the relay said at the last failure: kept on the e-mails it makes wait. */
  lastReply: string | null;
  openUntil: number | null;
  state: BreakerState;
}

export const DEFAULT_BREAKER: BreakerOptions = { failures: 5, cooldownMs: 60_000 };

export class Breaker {
  private readonly entries = new Map<string, Entry>();
  private readonly opts: BreakerOptions;

  constructor(
    opts: Partial<BreakerOptions> = {},
    private readonly onChange?: (label: string, state: BreakerState) => void,
  ) {
    this.opts = { ...DEFAULT_BREAKER, ...opts };
  }

  get failuresToOpen(): number {
    return this.opts.failures;
  }

  private entry(id: string): Entry {
    let e = this.entries.get(id);
    if (!e) this.entries.set(id, (e = { failures: 0, lastReply: null, openUntil: null, state: 'closed' }));
    return e;
  }

  private set(e: Entry, label: string, state: BreakerState) {
    if (e.state !== state) {
      e.state = state;
      this.onChange?.(label, state);
    }
  }

  /** May this transport be tried now? After the cool-down, yes (half open). */
  allow(id: string, label: string, now: number): boolean {
    const e = this.entry(id);
    if (e.state !== 'open') return true;
    if (e.openUntil !== null && now >= e.openUntil) {
      this.set(e, label, 'half_open');
      return true;
    }
    return false;
  }

  success(id: string, label: string): void {
    const e = this.entry(id);
    e.failures = 0;
    e.openUntil = null;
    this.set(e, label, 'closed');
  }

  failure(id: string, label: string, now: number, reply: string | null = null): void {
    const e = this.entry(id);
    e.failures++;
    e.lastReply = reply;
    if (e.state === 'half_open' || e.failures >= this.opts.failures) {
      e.openUntil = now + this.opts.cooldownMs;
      this.set(e, label, 'open');
    }
  }

  /** When an open circuit lets the transport be tried again (null: it is not open). */
  openUntil(id: string): number | null {
    const e = this.entries.get(id);
    return e?.state === 'open' ? e.openUntil : null;
  }

  /** The relay's reply at its last failure (null: none known). */
  lastReply(id: string): string | null {
    return this.entries.get(id)?.lastReply ?? null;
  }

  view(id: string, now: number): { state: BreakerState; failures: number; open_until: string | null } {
    const e = this.entry(id);
    const state = e.state === 'open' && e.openUntil !== null && now >= e.openUntil ? 'half_open' : e.state;
    return {
      state,
      failures: e.failures,
      open_until: e.openUntil === null ? null : new Date(e.openUntil).toISOString(),
    };
  }
}
