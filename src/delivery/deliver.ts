// One e-mail from claim to recorded outcome (SPEC §4, §8): the checks on what the claim read, rendering,
// tracking, the quota, the hand-over, the send and the outcome. The loop around it is delivery/worker.ts.
import { withUnsubscribeFooter } from '../domain/defaultLayout.js';
import type { Db } from '../db/index.js';
import type { ContactRow, EmailRow, LayoutRow, Project, TemplateRow } from '../db/schema.js';
import { findContact, findContactsByIds, setContactStatus } from '../repos/contacts.js';
import type { RenderedMessage } from '../repos/emails.js';
import { finishes } from '../repos/outbox.js';
import { findProjectById } from '../repos/projects.js';
import { giveBackQuota, senderOf, takeDailyQuota } from './projectPolicy.js';
import type { DeliveryRouter, ProjectDelivery } from './router.js';
import { findTemplate } from '../repos/templates.js';
import { parseJson } from '../repos/types.js';
import { handOverVerdict, type HandOverVerdict } from '../domain/handOver.js';
import type { Clock } from './clock.js';
import { composeEmail } from './compose.js';
import { buildContext, renderEmail } from './render.js';
import { emailContent } from './emailSource.js';
import { MISSING_FIELDS_NOTE, templateShortfall } from '../domain/templateContract.js';
import { applyTracking, trackingSettings } from './tracking.js';
import { backoffDelay, classifySmtpError, type RetryPolicy } from './smtpErrors.js';
import { makeMessageId, type OutgoingMessage } from './transports.js';
import { preferencesUrl, unsubscribeUrl } from './unsubscribe.js';
import { topicOf, TRANSACTIONAL } from '../domain/consent.js';
import { verpAddress } from './verp.js';
import type { Outcome, OutcomeWriters } from './outcomes.js';
import type { WorkerLogger } from '../workers/loop.js';

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
}

/** Returns the function that takes one e-mail to its recorded outcome (undefined: the lease was lost). */
export function makeDeliver(ctx: DeliverContext) {
  const { database, router, clock, retry, random, log, writers } = ctx;
  const db = database.db;
  const id = ctx.workerId;
  const opts = ctx;
  const { write, writeAttempts, handOver } = writers;
  /** One e-mail from claim to recorded outcome; returns what was recorded (undefined: lease lost). */
  return async function deliver(row: EmailRow, cache: BatchCache, release: () => void): Promise<Outcome | undefined> {
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
      settings: opts.tracking ? trackingSettings(project, template, row) : { opens: false, clicks: false, utm: null },
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
  };
}
