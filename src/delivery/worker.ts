// The delivery worker: claims due e-mails under a lease, renders them, sends them and records the
// outcome (SPEC §4, §8). Runs inside `serve` or alone; several workers may share a PostgreSQL outbox.
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { batcher, fulfilled } from '../batcher.js';
import type { Db } from '../db/index.js';
import type { ContactRow, EmailRow, EmailStatus, LayoutRow, Project, TemplateRow } from '../db/schema.js';
import { findContact, findContactsByIds, setContactStatus } from '../repos/contacts.js';
import type { RenderedMessage } from '../repos/emails.js';
import {
  claimDue,
  emailProgress,
  FINISH_BATCH,
  finishes,
  finishMany,
  nextDueAt,
  releaseClaims,
  renewLease,
  type Finish,
} from '../repos/outbox.js';
import { findProjectById } from '../repos/projects.js';
import { recordAttempts, type AttemptsOf } from '../repos/delivery.js';
import { giveBackQuota, senderOf, takeDailyQuota } from './projectPolicy.js';
import { secretBox } from '../services/secrets.js';
import { DeliveryRouter, type ProjectDelivery } from './router.js';
import { findTemplate } from '../repos/templates.js';
import { parseJson } from '../repos/types.js';
import { handOverVerdict, type HandOverVerdict } from '../domain/handOver.js';
import { handOverMany, type HandOver } from './handOver.js';
import type { WebhookKind } from '../domain/statuses.js';
import { enqueueEmailWebhooks } from '../services/siteWebhooks/enqueue.js';
import { systemClock, type Clock } from './clock.js';
import { composeEmail } from './compose.js';
import { buildContext, renderEmail } from './render.js';
import { emailContent } from './emailSource.js';
import { MISSING_FIELDS_NOTE, templateShortfall } from '../domain/templateContract.js';
import { applyTracking, trackingSettings } from './tracking.js';
import { trackingKey } from '../domain/trackingTokens.js';
import { backoffDelay, classifySmtpError, DEFAULT_RETRY_POLICY, type RetryPolicy } from './smtpErrors.js';
import { makeMessageId, type OutgoingMessage, type Transport } from './transports.js';
import { preferencesUrl, unsubscribeUrl } from './unsubscribe.js';
import { topicOf, TRANSACTIONAL } from '../domain/consent.js';
import { verpAddress } from './verp.js';

export interface WorkerLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface WorkerOptions {
  db: Db;
  /** The installation's transport: SMTP_URL or capture, for projects without their own settings. */
  transport: Transport;
  /** Per-project transports (SPEC §11); one is made over `transport` when absent and closed on stop. */
  router?: DeliveryRouter;
  clock?: Clock;
  publicUrl: string;
  /** Signs unsubscribe links and salts Message-IDs; the same in every process of an installation. */
  secret: string;
  /**
   * Opens and clicks are tracked (SPEC §17) only when true: `serve` sets it when PUBLIC_URL is set
   * (tracked links must lead to an address recipients can reach); tests and tools that make a worker
   * of their own get the message exactly as rendered unless they ask.
   */
  tracking?: boolean;
  workerId?: string;
  batchSize?: number;
  leaseMs?: number;
  concurrency?: number;
  /** Longest sleep when nothing is due (due e-mails leave within about this long). */
  pollMs?: number;
  /** The configured policy (config.retry); defaults to DEFAULT_RETRY_POLICY. */
  retry?: Partial<RetryPolicy>;
  random?: () => number;
  logger?: WorkerLogger;
  /** BOUNCE_DOMAIN: each e-mail's envelope sender becomes its signed VERP address there (SPEC §12). */
  bounceDomain?: string | null;
  /** Told every recorded outcome (metrics): kind, how long delivery took, how late after due it was. */
  onOutcome?: (o: { outcome: Outcome; kind: EmailRow['kind']; durationMs: number; lagMs: number }) => void;
}

/** What a waiting request reports: a final status, or `queued` when a retry has been scheduled. */
export type Outcome = Extract<EmailStatus, 'sent' | 'failed' | 'suppressed' | 'cancelled' | 'queued'>;

export interface Worker {
  readonly id: string;
  start(): void;
  /** Stops claiming, hands back unstarted claims, waits for in-flight sends. */
  stop(): Promise<void>;
  /** Something became due (a request created an e-mail): look now instead of at the next poll. */
  wake(): void;
  waitForOutcome(emailId: number, timeoutMs: number): Promise<Outcome | undefined>;
  /** Claims and delivers one batch due at clock.now(), without the loop (CLI, tests). Returns its size. */
  runOnce(): Promise<number>;
}

// Outcomes of every worker of this process; waiters in the same process hear them at once.
const outcomeEvents = new EventEmitter();
outcomeEvents.setMaxListeners(0);
// While a worker runs here, most outcomes arrive as events and polling is only the safety net for
// e-mails another process delivers; without one, polling is the only way to learn anything.
let localWorkers = 0;

/** The e-mail outcomes that are webhook kinds (a retry is not an outcome a site hears about). */
const NOTIFIED: Partial<Record<EmailStatus, WebhookKind>> = {
  sent: 'email.sent',
  failed: 'email.failed',
  suppressed: 'email.suppressed',
  // Only the hand-over writes `cancelled` here: it found the order paid (domain/handOver.ts).
  cancelled: 'email.cancelled',
};

/** The webhook's reason for an outcome: SPEC §13's word for a cancel, the recorded note otherwise. */
const webhookReason = (f: Finish) =>
  f.status === 'sent' ? null : f.status === 'cancelled' ? 'cancelled_by_purchase' : (f.lastError ?? null);

/** A paused project's campaign and cart e-mails are looked at again this much later (or at once on resume). */
const PAUSE_DEFER_MS = 3_600_000;

const noopLogger: WorkerLogger = { info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Resolves when the e-mail leaves `scheduled`/`queued`/`sending` for the first time seen (a retry counts:
 * `queued`), or undefined on timeout. Works in any process: an outcome from a worker in this process
 * arrives through the event; one from another process is found by polling the row every 50 ms.
 */
export async function waitForEmailOutcome(db: Db, emailId: number, timeoutMs: number): Promise<Outcome | undefined> {
  return new Promise<Outcome | undefined>((resolve) => {
    let done = false;
    const event = `email:${emailId}`;
    const finish = (o: Outcome | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      outcomeEvents.off(event, finish);
      resolve(o);
    };
    const timer = setTimeout(() => finish(undefined), Math.max(0, timeoutMs));
    outcomeEvents.on(event, finish);
    void (async () => {
      while (!done) {
        try {
          const row = await emailProgress(db.db, emailId);
          if (!row) return finish(undefined);
          if (['sent', 'failed', 'suppressed', 'cancelled'].includes(row.status)) return finish(row.status as Outcome);
          if (row.status !== 'sending' && row.attempts > 0) return finish('queued');
        } catch {
          // A failed poll is retried; the timeout still bounds the wait.
        }
        await sleep(localWorkers > 0 ? 200 : 50);
      }
    })();
  });
}

interface BatchCache {
  projects: Map<number, Promise<Project | undefined>>;
  templates: Map<number, Promise<TemplateRow | undefined>>;
  /** Layouts by project and name (SPEC §16), read once per batch. */
  layouts: Map<string, Promise<LayoutRow | undefined>>;
  /** Read once per claimed batch (one query), right after the claim. */
  contacts: Map<number, Promise<ContactRow | undefined>>;
  /** Each project's delivery settings, read once per batch: a change applies to the next claim. */
  deliveries: Map<number, Promise<ProjectDelivery | null>>;
}

export function createWorker(opts: WorkerOptions): Worker {
  const { db: database, transport } = opts;
  const db = database.db;
  const clock = opts.clock ?? systemClock;
  const id = opts.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  // Claims of up to 200: under a backlog each claim, contact read and outcome write carries more
  // e-mails (on SQLite those wait their turn behind the API's commits).
  const batchSize = Math.max(1, opts.batchSize ?? 200);
  const leaseMs = Math.max(100, opts.leaseMs ?? 60_000);
  const concurrency = Math.max(1, opts.concurrency ?? 10);
  // E-mails made due by another process (an API-only process, a campaign) are found by this poll: 200 ms
  // keeps them well inside the one-second promise; an idle poll is two reads of small partial indexes.
  const pollMs = Math.max(10, opts.pollMs ?? 200);
  const retry: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
  const random = opts.random ?? Math.random;
  const log = opts.logger ?? noopLogger;
  const ownRouter = !opts.router;
  const router = opts.router ?? new DeliveryRouter({ installation: transport, box: secretBox(opts.secret) });
  const trackKey = trackingKey(opts.secret);

  let running = false;
  let loopDone: Promise<void> | null = null;
  let stopping: Promise<void> | null = null;
  let heartbeat: NodeJS.Timeout | null = null;
  const held = new Set<number>(); // claimed and not finished: queued here or in flight
  const queue: { row: EmailRow; cache: BatchCache }[] = [];
  const inFlight = new Set<Promise<void>>();
  let wakeUp: (() => void) | null = null;
  let wakePending = false;

  const signal = () => {
    if (wakeUp) wakeUp();
    else wakePending = true;
  };
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      if (wakePending || !running) {
        wakePending = false;
        return resolve();
      }
      const t = setTimeout(() => done(), ms);
      const done = () => {
        clearTimeout(t);
        wakeUp = null;
        resolve();
      };
      wakeUp = done;
    });

  const newCache = (): BatchCache => ({
    projects: new Map(),
    templates: new Map(),
    layouts: new Map(),
    contacts: new Map(),
    deliveries: new Map(),
  });
  const cached = <T>(m: Map<number, Promise<T>>, key: number, load: () => Promise<T>) => {
    let p = m.get(key);
    if (!p) m.set(key, (p = load()));
    return p;
  };

  // Outcomes are written in batches: every delivery that finishes while a write is under way joins the
  // next one, a single UPDATE for all of them (on SQLite one fsync instead of one per e-mail). Each
  // learns whether its row was written (false: the lease was lost).
  //
  // An outcome a site may subscribe to (sent, failed, suppressed) enqueues its webhooks in the same
  // transaction as the status change: both commit or neither does (SPEC §13).
  const writeBatch = batcher<{ f: Finish; row: EmailRow }, boolean>({
    maxBatch: FINISH_BATCH,
    run: async (batch) => {
      const written = await db.transaction().execute(async (trx) => {
        const done = await finishMany(
          trx,
          id,
          batch.map((b) => b.f),
        );
        const notices = batch.flatMap(({ f, row }) => {
          const kind = NOTIFIED[f.status];
          // A test send from the delivery settings is the administrator's, not the site's business.
          return kind && done.has(f.id) && Number(row.is_test) !== 1
            ? [{ email: row, kind, reason: webhookReason(f) }]
            : [];
        });
        await enqueueEmailWebhooks(trx, notices, clock.now());
        return done;
      });
      return batch.map(({ f }) => fulfilled(written.has(f.id)));
    },
  });
  const write = (row: EmailRow, f: Finish) => writeBatch({ f, row });

  // What each attempt went through and what the relay said, written in batches like the outcomes.
  const writeAttempts = batcher<AttemptsOf, void>({
    maxBatch: FINISH_BATCH,
    run: async (batch) => {
      await recordAttempts(db, batch);
      return batch.map(() => fulfilled(undefined));
    },
  });

  // Hand-overs are decided in batches like the outcomes: every e-mail that reaches the relay's door
  // while one hand-over transaction runs joins the next (one transaction, on SQLite one fsync, for all).
  const handOver = batcher<number, HandOver>({
    maxBatch: FINISH_BATCH,
    run: async (ids) => {
      const decided = await handOverMany(database, id, ids, clock.now(), opts.secret);
      return ids.map((i) => fulfilled(decided.get(i) ?? { gone: null }));
    },
  });

  function emit(emailId: number, outcome: Outcome) {
    outcomeEvents.emit(`email:${emailId}`, outcome);
  }

  /** One e-mail from claim to recorded outcome; returns what was recorded (undefined: lease lost). */
  async function deliver(row: EmailRow, cache: BatchCache, release: () => void): Promise<Outcome | undefined> {
    const record = async (outcome: Outcome, write: Promise<boolean>) => {
      // The send is over: its slot goes to the next e-mail while the outcome waits for its batched write.
      release();
      if (await write) return outcome;
      log.warn(
        { email_id: row.id, worker: id },
        'lease lost before the outcome was recorded; another worker owns the e-mail',
      );
      return undefined;
    };
    const recordStop = (r: EmailRow, v: Exclude<HandOverVerdict, { go: true }>) => {
      const now = clock.now();
      switch (v.stop) {
        case 'paused':
          return record('queued', write(r, finishes.paused(r.id, { now, dueAt: now + PAUSE_DEFER_MS })));
        case 'suppressed':
          return record('suppressed', write(r, finishes.suppressed(r.id, { now, reason: v.note })));
        case 'cancelled':
          return record('cancelled', write(r, finishes.cancelled(r.id, { now, note: v.note })));
        case 'failed':
          return record('failed', write(r, finishes.failed(r.id, { now, error: v.note, countAttempt: false })));
      }
    };
    if (row.attempts >= retry.maxAttempts) {
      const error = `gave up after ${row.attempts} attempts; last error: ${row.last_error ?? 'none'}`;
      return record('failed', write(row, finishes.failed(row.id, { now: clock.now(), error, countAttempt: false })));
    }
    const [contact, project, template] = await Promise.all([
      cached(cache.contacts, row.contact_id, () => findContact(db, row.contact_id)),
      cached(cache.projects, row.project_id, () => findProjectById(db, row.project_id)),
      cached(cache.templates, row.template_id, () => findTemplate(db, row.template_id)),
    ]);
    if (!contact || !project || !template) {
      const what = !contact ? 'contact' : !project ? 'project' : `template ${row.template_id}`;
      return record(
        'failed',
        write(
          row,
          finishes.failed(row.id, { now: clock.now(), error: `${what} no longer exists`, countAttempt: false }),
        ),
      );
    }
    // Checked at claim on what the batch read (nothing rendered for an e-mail that cannot go), and again
    // at hand-over (handOver below), where the decision is final. The topic is read there only, with the
    // contact's status of the same moment: one read per e-mail, and the reason names the real cause.
    const early = handOverVerdict({
      kind: row.kind,
      contactStatus: contact.status,
      orderPaid: false,
      marketingPaused: project.marketing_paused_at != null,
      topicStop: null,
    });
    if (!early.go) return recordStop(row, early);

    let delivery: ProjectDelivery | null;
    try {
      delivery = await cached(cache.deliveries, project.id, () => router.load(database, project.id));
    } catch (err) {
      // Settings that cannot be decrypted (SECRET_KEY changed without `secrets rotate`): an operator's fix.
      const error = `delivery settings unreadable: ${err instanceof Error ? err.message : String(err)}`;
      const now = clock.now();
      const dueAt = now + backoffDelay(row.attempts + 1, retry, random);
      return record('queued', write(row, finishes.retry(row.id, { now, dueAt, error })));
    }
    const sender = senderOf(project, delivery);

    // The link leaves this e-mail's topic only (SPEC §18); a transactional e-mail offers none to leave.
    const topic = topicOf(row.topic, row.kind);
    const unsubscribe = unsubscribeUrl(
      opts.publicUrl,
      opts.secret,
      contact,
      topic === TRANSACTIONAL ? undefined : topic,
    );
    const context = buildContext({
      request: parseJson<Record<string, unknown>>(row.context, {}),
      contact,
      project,
      unsubscribeUrl: unsubscribe,
      preferencesUrl: topic === TRANSACTIONAL ? null : preferencesUrl(opts.publicUrl, opts.secret, contact),
    });
    let parts;
    let version: number | null;
    try {
      const content = await emailContent(db, row, template, project, cache.layouts);
      version = content.version;
      // SPEC §16: data that no longer satisfies the template published now fails the e-mail, never blank.
      const { missing } = templateShortfall([content.source], context);
      if (missing.length) {
        const error = `${MISSING_FIELDS_NOTE} ${missing.join(', ')}`;
        return record('failed', write(row, finishes.failed(row.id, { now: clock.now(), error, countAttempt: false })));
      }
      parts = renderEmail({
        template: content.source,
        layout: content.layout,
        context,
        settings: { locale: project.locale, timezone: project.timezone },
      });
    } catch (err) {
      // The same template and context fail the same way every time: no point retrying.
      const error = `template error: ${err instanceof Error ? err.message : String(err)}`;
      return record('failed', write(row, finishes.failed(row.id, { now: clock.now(), error, countAttempt: false })));
    }
    // After Liquid, before DKIM signing (the transport signs): links and the open pixel (SPEC §17).
    parts = applyTracking(parts, {
      publicUrl: opts.publicUrl,
      key: trackKey,
      emailId: row.id,
      projectId: project.id,
      templateKey: row.template_key,
      sentAt: clock.now(),
      settings:
        opts.tracking === true ? trackingSettings(project, template, row) : { opens: false, clicks: false, utm: null },
    });

    const messageId = makeMessageId(row.id, sender, opts.secret);
    const { from, to, headers, shown } = composeEmail({
      project: sender,
      email: row,
      contact,
      parts,
      unsubscribeUrl: unsubscribe,
      messageId,
    });
    if (delivery?.settings.reply_to) headers['Reply-To'] = shown['Reply-To'] = delivery.settings.reply_to;
    const msg: OutgoingMessage = {
      from,
      to,
      ...parts,
      headers,
      messageId,
      ...(opts.bounceDomain ? { envelopeFrom: verpAddress(row.id, opts.secret, opts.bounceDomain) } : {}),
    };
    const rendered = JSON.stringify({ ...parts, headers: shown, template_version: version } satisfies RenderedMessage);

    const quota = await takeDailyQuota(db, project.id, delivery, Number(row.is_test) === 1, clock.now());
    if (!quota.taken) {
      const { dueAt, reason } = quota;
      return record('queued', write(row, finishes.waitQuota(row.id, { now: clock.now(), dueAt, reason })));
    }
    const handed = await handOver(row.id);
    if (!('verdict' in handed) || !handed.verdict.go) {
      await giveBackQuota(db, project.id, quota);
      if ('verdict' in handed && !handed.verdict.go) return recordStop(row, handed.verdict);
      // Cancelled by a purchase or an administrator after the claim: they recorded it (and its webhook).
      if ('gone' in handed && handed.gone === 'cancelled') return 'cancelled';
      log.warn({ email_id: row.id, worker: id }, 'lease lost before the hand-over; another worker owns the e-mail');
      return undefined;
    }
    const routed = await router.send(project, delivery, msg);
    const logged = writeAttempts({ emailId: row.id, attempt: row.attempts + 1, messageId, attempts: routed.attempts });
    logged.catch((err: unknown) => log.warn({ email_id: row.id, err }, 'could not record the attempts log'));
    if (routed.ok) {
      const res = routed.result;
      log.info(
        {
          email_id: row.id,
          message_id: messageId,
          response: res.response,
          transport: routed.attempts.at(-1)?.transport,
        },
        'e-mail sent',
      );
      return record('sent', write(row, finishes.sent(row.id, { now: clock.now(), rendered, messageId })));
    }
    {
      const err = routed.error;
      await giveBackQuota(db, project.id, quota);
      const f = classifySmtpError(err);
      const attempts = row.attempts + 1;
      const now = clock.now();
      if (f.transient && attempts < retry.maxAttempts) {
        const dueAt = now + backoffDelay(attempts, retry, random);
        log.warn(
          { email_id: row.id, attempts, retry_at: new Date(dueAt).toISOString(), error: f.message },
          'send failed, will retry',
        );
        return record(
          'queued',
          write(row, finishes.retry(row.id, { now, dueAt, error: f.message, rendered, messageId })),
        );
      }
      const error = f.transient ? `${f.message} (gave up after ${attempts} attempts)` : f.message;
      log.warn({ email_id: row.id, attempts, error, recipient_invalid: f.recipientInvalid }, 'send failed permanently');
      if (f.recipientInvalid) {
        // admin_blocked is the stronger statement about the contact and is kept.
        await setContactStatus(db, contact.id, 'invalid', now, ['active', 'unsubscribed', 'invalid'], {
          reason: 'smtp_rejection',
          emailId: row.id,
        });
      }
      return record('failed', write(row, finishes.failed(row.id, { now, error, rendered, messageId })));
    }
  }

  async function deliverSafely(row: EmailRow, cache: BatchCache, release: () => void = () => {}): Promise<void> {
    try {
      const started = Date.now();
      const outcome = await deliver(row, cache, release);
      if (outcome) {
        emit(row.id, outcome);
        opts.onOutcome?.({
          outcome,
          kind: row.kind,
          durationMs: Date.now() - started,
          lagMs: Math.max(0, clock.now() - Number(row.due_at)),
        });
      }
    } catch (err) {
      // Typically the database went away mid-way: the lease expires and the e-mail is tried again.
      log.error({ email_id: row.id, err }, 'delivery crashed; the e-mail is retried when its lease expires');
    }
  }

  // `concurrency` bounds e-mails being rendered and sent; ones waiting for their outcome to be written
  // (held, in inFlight) no longer take a slot.
  let sending = 0;
  function pump() {
    while (running && sending < concurrency && queue.length) {
      const { row, cache } = queue.shift()!;
      sending++;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        sending--;
        pump();
      };
      const task = deliverSafely(row, cache, release).finally(() => {
        release();
        inFlight.delete(task);
        held.delete(row.id);
        pump();
        signal();
      });
      inFlight.add(task);
    }
  }

  async function claim(limit: number): Promise<EmailRow[]> {
    const rows = await claimDue(db, database.dialect, { workerId: id, now: clock.now(), leaseMs, limit });
    for (const r of rows) held.add(r.id);
    return rows;
  }

  /** The batch's contacts in one query (suppression is checked on these, read after the claim). */
  function prefetchContacts(rows: EmailRow[], cache: BatchCache): void {
    const ids = [...new Set(rows.map((r) => r.contact_id))];
    if (ids.length < 2) return;
    const all = findContactsByIds(db, ids);
    for (const cid of ids) {
      const one = all.then((m) => m.get(cid));
      one.catch(() => {}); // a row never delivered (stop) must not leave an unhandled rejection
      cache.contacts.set(cid, one);
    }
    // A failed read is not kept: each delivery then reads its own contact.
    all.catch(() => ids.forEach((cid) => cache.contacts.delete(cid)));
  }

  async function loop() {
    const threshold = Math.ceil(batchSize / 2);
    while (running) {
      try {
        const room = batchSize - held.size;
        let claimed = 0;
        if (room >= threshold) {
          const rows = await claim(room);
          claimed = rows.length;
          const cache = newCache();
          prefetchContacts(rows, cache);
          for (const row of rows) queue.push({ row, cache });
          pump();
          if (claimed === room) continue; // more may be due: claim again as soon as there is room
        }
        if (held.size > 0) {
          await wait(pollMs);
          continue;
        }
        const next = await nextDueAt(db);
        let delay = next === null ? pollMs : Math.min(pollMs, Math.max(0, next - clock.now()));
        // Due but not claimable (another worker holds it right now): do not spin.
        if (claimed === 0) delay = Math.max(delay, 20);
        await wait(delay);
      } catch (err) {
        log.error({ err }, 'outbox poll failed; retrying');
        await wait(pollMs);
      }
    }
  }

  async function renew() {
    try {
      await renewLease(db, id, [...held], clock.now(), leaseMs);
    } catch (err) {
      log.warn({ err }, 'could not renew leases');
    }
  }

  return {
    id,
    start() {
      if (running) return;
      running = true;
      localWorkers++;
      heartbeat = setInterval(() => void renew(), Math.max(50, Math.floor(leaseMs / 3)));
      heartbeat.unref();
      loopDone = loop();
    },
    stop() {
      if (!running) return stopping ?? Promise.resolve();
      running = false;
      localWorkers--;
      signal();
      stopping = (async () => {
        await loopDone;
        loopDone = null;
        const unstarted = queue.splice(0).map((q) => q.row.id);
        for (const rid of unstarted) held.delete(rid);
        try {
          await releaseClaims(db, id, unstarted, clock.now());
        } catch (err) {
          log.warn({ err }, 'could not hand back unstarted e-mails; their lease will expire');
        }
        await Promise.all([...inFlight]);
        if (heartbeat) clearInterval(heartbeat);
        heartbeat = null;
        if (ownRouter) await router.close();
      })();
      return stopping;
    },
    wake: signal,
    waitForOutcome: (emailId, timeoutMs) => waitForEmailOutcome(database, emailId, timeoutMs),
    async runOnce() {
      const rows = await claim(batchSize);
      const cache = newCache();
      prefetchContacts(rows, cache);
      let next = 0;
      const lane = async () => {
        while (next < rows.length) {
          const row = rows[next++];
          await deliverSafely(row, cache);
          held.delete(row.id);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, rows.length) }, lane));
      return rows.length;
    },
  };
}
