// One e-mail from claim to recorded outcome (SPEC §4, §8): the checks on what the claim read, rendering,
// tracking, the quota, the hand-over, the send and the outcome. The loop around it is delivery/worker.ts.
import { withUnsubscribeFooter } from '../domain/defaultLayout.js';
import type { Db } from '../db/index.js';
import type { ContactRow, EmailRow, LayoutRow, Project, TemplateRow } from '../db/schema.js';
import { findContact, findContactsByIds, setContactStatus } from '../repos/contacts.js';
import type { RenderedMessage } from '../repos/emails.js';
import { finishes, type Finish } from '../repos/outbox.js';
import { findProjectById } from '../repos/projects.js';
import { giveBackQuota, senderOf, takeDailyQuota } from './projectPolicy.js';
import type { DeliveryRouter, ProjectDelivery } from './router.js';
import { findTemplate } from '../repos/templates.js';
import { parseJson } from '../repos/types.js';
import { handOverVerdict, type HandOverVerdict } from '../domain/handOver.js';
import type { Clock } from './clock.js';
import { composeEmail } from './compose.js';
import { buildContext } from './render.js';
import { isBudgetExceeded, renderInPool } from './renderPool.js';
import { emailContent } from './emailSource.js';
import { MISSING_FIELDS_NOTE, templateShortfall } from '../domain/templateContract.js';
import { RENDER_BUDGET_NOTE } from '../domain/emailReason.js';
import { applyTracking, trackingSettings } from './tracking.js';
import { backoffDelay, classifySmtpError, type RetryPolicy } from './smtpErrors.js';
import { makeMessageId, type OutgoingMessage } from './transports.js';
import { preferencesUrl, unsubscribeUrl } from './unsubscribe.js';
import { topicOf, TRANSACTIONAL } from '../domain/consent.js';
import { EXPIRED_NOTE } from '../domain/emailReason.js';
import { verpAddress } from './verp.js';
import type { Outcome, OutcomeWriters } from './outcomes.js';
import type { WorkerLogger } from '../workers/loop.js';
import type { RelaySlots } from './relaySlots.js';

/** A paused project's campaign and cart e-mails are looked at again this much later (or at once on resume). */
const PAUSE_DEFER_MS = 3_600_000;

/** What one claimed batch reads once for all its e-mails: a change applies to the next claim. */
export interface BatchCache {
  projects: Map<number, Promise<Project | undefined>>;
  templates: Map<number, Promise<TemplateRow | undefined>>;
  /** Layouts by project and name (SPEC §16), read once per batch. */
  layouts: Map<string, Promise<LayoutRow | undefined>>;
  /** Read once per claimed batch (one query), right after the claim. */
  contacts: Map<number, Promise<ContactRow | undefined>>;
  /** Each project's delivery settings, read once per batch. */
  deliveries: Map<number, Promise<ProjectDelivery | null>>;
}

export const newCache = (): BatchCache => ({
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

/** The batch's contacts in one query (suppression is checked on these, read after the claim). */
export function prefetchContacts(db: Db['db'], rows: EmailRow[], cache: BatchCache): void {
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

export interface DeliverContext {
  database: Db;
  router: DeliveryRouter;
  clock: Clock;
  retry: RetryPolicy;
  random: () => number;
  log: WorkerLogger;
  workerId: string;
  publicUrl: string;
  secret: string;
  trackKey: Buffer;
  tracking: boolean;
  bounceDomain: string | null;
  writers: OutcomeWriters;
  /** RELAY_CONCURRENCY sends at once per relay in this worker. */
  slots: RelaySlots;
  /** The worker is stopping: an e-mail that was waiting for a relay slot is handed back, not sent. */
  stopping: () => boolean;
}

/** Returns the function that takes one e-mail to its recorded outcome (undefined: the lease was lost). */
export function makeDeliver(ctx: DeliverContext) {
  const { database, router, clock, retry, random, log, writers } = ctx;
  const db = database.db;
  const id = ctx.workerId;
  const opts = ctx;
  const { write, handOver } = writers;
  /** One e-mail from claim to recorded outcome; returns what was recorded (undefined: lease lost). */
  return async function deliver(row: EmailRow, cache: BatchCache, release: () => void): Promise<Outcome | undefined> {
    let relaySlot: (() => void) | null = null;
    const record = async (outcome: Outcome, write: Promise<boolean>) => {
      // The send is over: its slots go to the next e-mail while the outcome waits for its batched write.
      release();
      relaySlot?.();
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
    /**
     * No relay was reached (breaker open, settings unreadable): rescheduled without an attempt, at
     * `retryAt` (when the breaker lets the relay be tried again, spread over a second) or after a backoff;
     * given up once it has waited SEND_GIVE_UP_AFTER, keeping the last relay reply.
     */
    const waitForRelay = (note: string | undefined, retryAt: number | undefined) => {
      const now = clock.now();
      const since = Number(row.waiting_since ?? now);
      if (now >= since + retry.giveUpAfterMs) {
        const last = row.last_error ?? note ?? 'none';
        const error = `${EXPIRED_NOTE} the relay did not take it within ${formatDuration(retry.giveUpAfterMs)} (waiting since ${new Date(since).toISOString()}); last reply: ${last}`;
        return record('failed', write(row, finishes.failed(row.id, { now, error, countAttempt: false })));
      }
      // last_error keeps what a relay said last; a note only fills it when there is nothing yet.
      const keep = row.last_error !== null && note !== undefined && !note.startsWith('delivery settings');
      const later =
        retryAt !== undefined && retryAt > now
          ? retryAt + Math.round(random() * 1000)
          : now + backoffDelay(row.attempts + 1, retry, random);
      const dueAt = Math.min(since + retry.giveUpAfterMs, later);
      return record('queued', write(row, finishes.relayWait(row.id, { now, dueAt, note: keep ? undefined : note })));
    };
    // SEND_MAX_ATTEMPTS, when an operator set one: a ceiling on attempts that reached a relay.
    if (retry.maxAttempts !== null && row.attempts >= retry.maxAttempts) {
      const error = `${EXPIRED_NOTE} gave up after ${row.attempts} attempts; last reply: ${row.last_error ?? 'none'}`;
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
      // No relay was reached: not an attempt, but the wait counts toward SEND_GIVE_UP_AFTER.
      const note = `delivery settings unreadable: ${err instanceof Error ? err.message : String(err)}`;
      return waitForRelay(note, undefined);
    }
    // Every relay of the project skipped by its open breaker: wait without rendering, hand-over or attempt.
    const blocked = router.blocked(project, delivery);
    if (blocked) return waitForRelay(blocked.note, blocked.until);
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
      replyAddress: delivery?.settings.reply_to ?? project.reply_to ?? sender.from_email,
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
      // In the render pool (SPEC §20): off the event loop, fair across projects, within RENDER_BUDGET_MS.
      parts = await renderInPool(project.id, {
        template: content.source,
        layout: content.layout,
        context,
        settings: { locale: project.locale, timezone: project.timezone },
        planKey: content.planKey,
        markLinks: true,
      });
    } catch (err) {
      // The same template and context fail the same way every time: no point retrying.
      const message = err instanceof Error ? err.message : String(err);
      const error = isBudgetExceeded(err)
        ? `${RENDER_BUDGET_NOTE} the template ${message}`
        : `template error: ${message}`;
      return record('failed', write(row, finishes.failed(row.id, { now: clock.now(), error, countAttempt: false })));
    }
    // SPEC §22: no advertising e-mail without a visible way out, whatever its template and layout show.
    if (topic !== TRANSACTIONAL)
      parts = withUnsubscribeFooter(parts, {
        locale: project.locale,
        siteName: project.name,
        unsubscribeUrl: unsubscribe,
        preferencesUrl: typeof context.preferences_url === 'string' ? context.preferences_url : null,
      });
    // After Liquid, before DKIM signing (the transport signs): links and the open pixel (SPEC §17).
    parts = applyTracking(parts, {
      publicUrl: opts.publicUrl,
      key: ctx.trackKey,
      emailId: row.id,
      projectId: project.id,
      templateKey: row.template_key,
      sentAt: clock.now(),
      settings: opts.tracking
        ? trackingSettings(project, template, row, topic)
        : { opens: false, clicks: false, utm: null },
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

    // One of the relay's RELAY_CONCURRENCY slots (SPEC §20). Waiting for it does not hold one of the
    // worker's own slots (release): a slow relay delays only the e-mails that go to it.
    release();
    relaySlot = await ctx.slots.acquire(router.relayOf(project, delivery), project.id);
    if (ctx.stopping()) {
      // Waited through a stop: handed back unsent, like a claim never started.
      const now = clock.now();
      return record('queued', write(row, finishes.deferred(row.id, { now, dueAt: now })));
    }
    try {
      const quota = await takeDailyQuota(db, project.id, delivery, row.is_test, clock.now());
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
      if (!routed.ok && !routed.reached) {
        // Every relay of the project was skipped (breaker open): neither an attempt nor a failure.
        await giveBackQuota(db, project.id, quota);
        const note = routed.attempts.at(-1)?.reply;
        return waitForRelay(note, routed.retryAt);
      }
      // The relay was reached: the attempt log is written with the outcome, in its transaction.
      const attempted = (f: Finish) =>
        write(row, f, { emailId: row.id, attempt: row.attempts + 1, messageId, attempts: routed.attempts });
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
        return record('sent', attempted(finishes.sent(row.id, { now: clock.now(), rendered, messageId })));
      }
      {
        const err = routed.error;
        await giveBackQuota(db, project.id, quota);
        const f = classifySmtpError(err);
        const attempts = row.attempts + 1;
        const now = clock.now();
        if (f.transient) {
          // Kept until it has waited SEND_GIVE_UP_AFTER since it first could not go (SPEC §20), as a mail
          // server keeps its queue for days; the last retry falls on that moment, so none is cut short.
          const since = Number(row.waiting_since ?? now);
          const deadline = since + retry.giveUpAfterMs;
          const ceiling = retry.maxAttempts !== null && attempts >= retry.maxAttempts;
          if (now < deadline && !ceiling) {
            const dueAt = Math.min(deadline, now + backoffDelay(attempts, retry, random));
            log.warn(
              { email_id: row.id, attempts, retry_at: new Date(dueAt).toISOString(), error: f.message },
              'send failed, will retry',
            );
            return record(
              'queued',
              attempted(finishes.retry(row.id, { now, dueAt, error: f.message, rendered, messageId })),
            );
          }
          const why = ceiling
            ? `gave up after ${attempts} attempts (SEND_MAX_ATTEMPTS)`
            : `the relay did not take it within ${formatDuration(retry.giveUpAfterMs)} (waiting since ${new Date(since).toISOString()})`;
          const error = `${EXPIRED_NOTE} ${why}; last reply: ${f.message}`;
          log.warn({ email_id: row.id, attempts, error }, 'e-mail expired: the relay stayed unavailable');
          return record('failed', attempted(finishes.failed(row.id, { now, error, rendered, messageId })));
        }
        const error = f.message;
        log.warn(
          { email_id: row.id, attempts, error, recipient_invalid: f.recipientInvalid },
          'send failed permanently',
        );
        if (f.recipientInvalid) {
          // admin_blocked is the stronger statement about the contact and is kept.
          await setContactStatus(db, contact.id, 'invalid', now, ['active', 'unsubscribed', 'invalid'], {
            reason: 'smtp_rejection',
            emailId: row.id,
          });
        }
        return record('failed', attempted(finishes.failed(row.id, { now, error, rendered, messageId })));
      }
    } finally {
      relaySlot?.();
    }
  };
}

/** `72h`, `90m`, `45s`: how SEND_GIVE_UP_AFTER is written back in a note. */
function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}
