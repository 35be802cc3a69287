// Which relay an e-mail leaves through (SPEC §11): the project's own primary, its fallback when the
// primary fails transiently, or the installation's transport when the project has no settings. Each own
// transport is built once per version of the settings (a change applies to the next e-mail, no restart),
// guarded by a circuit breaker and paced by its rate cap.
import { createHash } from 'node:crypto';
import type { Db } from '../db/index.js';
import {
  urlWithPassword,
  type AttemptTransport,
  type DeliverySecrets,
  type StoredSettings,
  type StoredTransport,
  type TransportRole,
  parseRelayReply,
} from '../domain/delivery.js';
import { findDeliveryRow, type AttemptRecord } from '../repos/delivery.js';
import { parseJson } from '../repos/types.js';
import type { SecretBox } from '../services/secrets.js';
import { systemClock, type Clock } from './clock.js';
import { Breaker, type BreakerOptions, type BreakerState } from './breaker.js';
import type { RateCap } from './rateCap.js';
import { classifySmtpError } from './smtpErrors.js';
import { createSmtpTransport, type OutgoingMessage, type SendResult, type Transport } from './transports.js';

export interface ProjectDelivery {
  settings: StoredSettings;
  secrets: DeliverySecrets;
  /** Changes whenever the stored settings do: the transport cache follows it. */
  version: string;
}

export type RouteOutcome =
  | { ok: true; result: SendResult; attempts: AttemptRecord[] }
  | {
      ok: false;
      error: unknown;
      attempts: AttemptRecord[];
      /**
       * False when no relay was tried (every transport's breaker open): not an attempt (SPEC §20); the
       * e-mail waits until `retryAt`, when the first of them may be tried again.
       */
      reached: boolean;
      retryAt?: number;
    };

export interface RouterOptions {
  installation: Transport;
  box: SecretBox;
  clock?: Clock;
  breaker?: Partial<BreakerOptions>;
  rateCap?: RateCap;
  smtpTimeoutMs?: number;
  /** RELAY_CONCURRENCY: a project relay's pool never opens more connections than this (SPEC §20). */
  relayConcurrency?: number;
  /** Told when a transport's breaker changes state (metrics). */
  onBreaker?: (label: string, state: BreakerState) => void;
  createTransport?: typeof createSmtpTransport;
}

interface Built {
  version: string;
  siteKey: string;
  transports: Partial<Record<TransportRole, { t: Transport; id: string; rate: number | null }>>;
}

export class CircuitOpenError extends Error {
  readonly code = 'ECIRCUIT';
}

export class DeliveryRouter {
  private readonly built = new Map<number, Built>();
  /** Pools replaced by a settings change, until their delayed close (or close(), whichever comes first). */
  private readonly retired = new Map<Built, NodeJS.Timeout>();
  private readonly decrypted = new Map<number, { version: string; delivery: ProjectDelivery }>();
  readonly breaker: Breaker;
  private readonly clock: Clock;

  constructor(private readonly o: RouterOptions) {
    this.clock = o.clock ?? systemClock;
    this.breaker = new Breaker(o.breaker, o.onBreaker);
  }

  /** The project's settings, decrypted (once per version), or null: it uses the installation's transport. */
  async load(db: Db, projectId: number): Promise<ProjectDelivery | null> {
    const row = await findDeliveryRow(db.db, projectId);
    if (!row) return null;
    const version = createHash('sha256').update(`${row.updated_at}\n${row.settings}\n${row.secrets}`).digest('hex');
    const hit = this.decrypted.get(projectId);
    if (hit?.version === version) return hit.delivery;
    const delivery: ProjectDelivery = {
      settings: parseJson<StoredSettings>(row.settings, null as never),
      secrets: JSON.parse(this.o.box.open(row.secrets)) as DeliverySecrets,
      version,
    };
    this.decrypted.set(projectId, { version, delivery });
    return delivery;
  }

  private transportsFor(project: { id: number; site_key: string }, d: ProjectDelivery): Built {
    const had = this.built.get(project.id);
    if (had?.version === d.version) return had;
    if (had) this.retire(had);
    const make = this.o.createTransport ?? createSmtpTransport;
    const build = (role: TransportRole, s: StoredTransport) => {
      const url = urlWithPassword(s.url, d.secrets[role]);
      return {
        t: make(url, {
          maxConnections: Math.min(s.pool_size, this.o.relayConcurrency ?? s.pool_size),
          timeoutMs: this.o.smtpTimeoutMs,
          requireTLS: s.starttls === 'required',
          ...(d.settings.dkim && d.secrets.dkim
            ? {
                dkim: {
                  domainName: d.settings.dkim.domain,
                  keySelector: d.settings.dkim.selector,
                  privateKey: d.secrets.dkim,
                },
              }
            : {}),
        }),
        // The breaker and the rate cap belong to the relay account, named without its secret.
        // Hashed from the stored URL, which holds no password: a prefix of a hash over the password would
        // let a Redis key be used to test guesses of it.
        id: `${project.site_key}/${role}/${createHash('sha256').update(s.url).digest('hex').slice(0, 12)}`,
        rate: s.rate_per_second,
      };
    };
    const b: Built = {
      version: d.version,
      siteKey: project.site_key,
      transports: {
        primary: build('primary', d.settings.primary),
        ...(d.settings.fallback ? { fallback: build('fallback', d.settings.fallback) } : {}),
      },
    };
    this.built.set(project.id, b);
    // The gauge shows every transport in use, closed until it fails.
    for (const role of Object.keys(b.transports)) this.o.onBreaker?.(`${project.site_key}/${role}`, 'closed');
    return b;
  }

  /** An old pool is closed a little later: e-mails already handed to it finish first. */
  private retire(b: Built) {
    const timer = setTimeout(() => {
      this.retired.delete(b);
      for (const x of Object.values(b.transports)) void x?.t.close();
    }, 30_000);
    timer.unref();
    this.retired.set(b, timer);
  }

  /**
   * Sends through the project's transports, or the installation's. A transient failure of the primary
   * (no verdict, or a 4xx) goes to the fallback at once; a 5xx is the recipient's problem, not the
   * relay's, and is returned as it is.
   */
  async send(
    project: { id: number; site_key: string },
    d: ProjectDelivery | null,
    msg: OutgoingMessage,
  ): Promise<RouteOutcome> {
    const attempts: AttemptRecord[] = [];
    const record = (transport: AttemptTransport, ok: boolean, reply: string) => {
      const ids = ok ? parseRelayReply(reply) : { queueId: null, providerId: null };
      attempts.push({ transport, ok, reply, queueId: ids.queueId, providerId: ids.providerId, at: this.clock.now() });
    };
    if (!d) {
      const kind: AttemptTransport = this.o.installation.kind === 'capture' ? 'capture' : 'installation';
      try {
        const result = await this.o.installation.send(msg);
        record(kind, true, result.response);
        return { ok: true, result, attempts };
      } catch (error) {
        record(kind, false, classifySmtpError(error).message);
        return { ok: false, error, attempts, reached: true };
      }
    }
    const b = this.transportsFor(project, d);
    let last: unknown = null;
    let reached = false;
    let retryAt: number | undefined;
    for (const role of ['primary', 'fallback'] as const) {
      const x = b.transports[role];
      if (!x) continue;
      const label = `${b.siteKey}/${role}`;
      if (!this.breaker.allow(x.id, label, this.clock.now())) {
        const error = new CircuitOpenError(this.skipNote(role, x.id));
        record(role, false, error.message);
        last = error;
        const until = this.breaker.openUntil(x.id);
        if (until !== null) retryAt = Math.min(retryAt ?? until, until);
        continue;
      }
      reached = true;
      if (x.rate && this.o.rateCap) await this.o.rateCap.acquire(x.id, x.rate);
      try {
        const result = await x.t.send(msg);
        this.breaker.success(x.id, label);
        record(role, true, result.response);
        return { ok: true, result, attempts };
      } catch (error) {
        const f = classifySmtpError(error);
        record(role, false, f.message);
        const relayFault = f.transient && (f.responseCode === null || f.responseCode < 500);
        if (!relayFault) {
          // The relay answered with a verdict on the message: it is up, and another relay would say the same.
          this.breaker.success(x.id, label);
          return { ok: false, error, attempts, reached };
        }
        this.breaker.failure(x.id, label, this.clock.now(), f.message);
        last = error;
      }
    }
    return { ok: false, error: last, attempts, reached, ...(reached ? {} : { retryAt }) };
  }

  private skipNote(role: TransportRole, id: string): string {
    const reply = this.breaker.lastReply(id);
    return `not tried: the ${role} relay failed ${this.breaker.failuresToOpen} times in a row (circuit open)${reply ? `; its last reply: ${reply}` : ''}`;
  }

  /**
   * Before rendering: when every relay of the project is skipped by its open breaker, when the first may
   * be tried again and why (the e-mail waits without an attempt, SPEC §20); null when one may be tried.
   */
  blocked(
    project: { id: number; site_key: string },
    d: ProjectDelivery | null,
  ): { until: number; note: string } | null {
    if (!d) return null;
    const b = this.transportsFor(project, d);
    const now = this.clock.now();
    let until: number | null = null;
    let note = '';
    for (const role of ['primary', 'fallback'] as const) {
      const x = b.transports[role];
      if (!x) continue;
      const open = this.breaker.openUntil(x.id);
      if (open === null || now >= open) return null;
      if (until === null || open < until) until = open;
      note ||= this.skipNote(role, x.id);
    }
    return until === null ? null : { until, note };
  }

  /**
   * The relay an e-mail of the project goes to first (its primary, or the installation's): the key of
   * the worker's per-relay slots (delivery/relaySlots.ts) and of its `waiting` gauge; names no secret.
   */
  relayOf(project: { id: number; site_key: string }, d: ProjectDelivery | null): string {
    if (!d) return 'installation';
    return this.transportsFor(project, d).transports.primary?.id ?? `${project.site_key}/primary`;
  }

  /** Breaker state of a project's transports as built in this process (UI), by role. */
  breakerStates(projectId: number): Partial<Record<TransportRole, ReturnType<Breaker['view']>>> {
    const b = this.built.get(projectId);
    const out: Partial<Record<TransportRole, ReturnType<Breaker['view']>>> = {};
    if (!b) return out;
    for (const role of ['primary', 'fallback'] as const) {
      const x = b.transports[role];
      if (x) out[role] = this.breaker.view(x.id, this.clock.now());
    }
    return out;
  }

  async close(): Promise<void> {
    // Retired pools too: a stopped worker must not leave relay connections open for up to 30 s more.
    for (const timer of this.retired.values()) clearTimeout(timer);
    const all = [...this.built.values(), ...this.retired.keys()];
    this.built.clear();
    this.retired.clear();
    for (const b of all) for (const x of Object.values(b.transports)) await x?.t.close();
    await this.o.rateCap?.close();
  }
}
