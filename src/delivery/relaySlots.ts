// At most RELAY_CONCURRENCY sends at once per relay in one worker (SPEC §20), so a slow or hung relay
// holds only its own slots: its e-mails queue behind each other, never in front of another relay's.
// E-mails waiting here do not count against the worker's batch (the loop's `parked`), and once a relay
// has as many waiting as it has slots it is "full": the worker's claims leave its projects out
// (fullProjects) until it drains, so its queue never grows past one claim and nothing churns.

export interface RelaySlotsOptions {
  /** Sends at once per relay (RELAY_CONCURRENCY, default 5). */
  perRelay: number;
  /** Told how many e-mails wait for a slot of a relay, whenever that changes (the `waiting` gauge). */
  onWaiting?: (relay: string, waiting: number) => void;
}

interface Lane {
  active: number;
  waiting: (() => void)[];
  projects: Set<number>;
}

export class RelaySlots {
  private readonly lanes = new Map<string, Lane>();
  readonly perRelay: number;

  constructor(private readonly o: RelaySlotsOptions) {
    this.perRelay = Math.max(1, o.perRelay);
  }

  private lane(relay: string): Lane {
    let l = this.lanes.get(relay);
    if (!l) this.lanes.set(relay, (l = { active: 0, waiting: [], projects: new Set() }));
    return l;
  }

  private full(l: Lane): boolean {
    return l.active >= this.perRelay && l.waiting.length >= this.perRelay;
  }

  /** A slot of `relay` for one send by `projectId`: resolves with its release when one is free. */
  acquire(relay: string, projectId: number): Promise<() => void> {
    const l = this.lane(relay);
    l.projects.add(projectId);
    const release = () => {
      l.active--;
      const next = l.waiting.shift();
      if (next) {
        this.parked--;
        this.o.onWaiting?.(relay, l.waiting.length);
        next();
      } else if (l.active === 0) this.lanes.delete(relay);
    };
    if (l.active < this.perRelay) {
      l.active++;
      return Promise.resolve(once(release));
    }
    return new Promise((resolve) => {
      l.waiting.push(() => {
        l.active++;
        resolve(once(release));
      });
      this.parked++;
      this.o.onWaiting?.(relay, l.waiting.length);
    });
  }

  /** E-mails waiting for a slot of any relay: held by the worker, but not work it is doing. */
  parked = 0;

  /** Projects whose relay is full now: the next claim leaves them out. */
  fullProjects(): number[] {
    const out: number[] = [];
    for (const l of this.lanes.values()) if (this.full(l)) out.push(...l.projects);
    return out;
  }
}

function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    f();
  };
}
