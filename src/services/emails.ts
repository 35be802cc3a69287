// The outbox as the admin API and UI see it: lists, one e-mail, its preview, cancel and retry.
import { AppError, notFound } from '../errors.js';
import { attemptsLog } from '../repos/delivery.js';
import { cancelEmail, retryEmail } from '../repos/emailActions.js';
import {
  emailDetail,
  findEmail,
  findEmailWithSite,
  listEmails,
  visibleStatus,
  type RenderedMessage,
} from '../repos/emails.js';
import type { EmailRow } from '../db/schema.js';
import { findProjectById } from '../repos/projects.js';
import { reportsOfEmail } from '../repos/reports.js';
import { decodeCursor, encodeCursor, parseJson } from '../repos/types.js';
import type { EmailsQuery } from '../schemas/chronology.js';
import { PAGE_SIZE } from '../schemas/common.js';
import { projectFilter } from './admin.js';
import { enqueueEmailWebhooks } from './siteWebhooks/enqueue.js';
import type { Deps } from './context.js';
import { audited, type AuditActor } from './audit.js';
import { previewStoredEmail } from './preview.js';
import { emailEngagement } from './engagement.js';
import { withoutOpenPixel } from '../delivery/tracking.js';

export async function emails(deps: Deps, q: EmailsQuery, scope: readonly number[] | null = null) {
  const db = deps.db.db;
  const { items, nextId } = await listEmails(
    db,
    deps.db.dialect,
    {
      projectId: await projectFilter(db, q.site_key, scope),
      orderId: q.order_id,
      status: q.status,
      to: q.to,
      eventId: q.event_id,
      contactId: q.contact_id,
      campaignId: q.campaign_id,
      limit: q.limit ?? PAGE_SIZE,
      cursor: decodeCursor(q.cursor),
    },
    deps.clock.now(),
  );
  return { ok: true as const, items, next_cursor: nextId === null ? null : encodeCursor(nextId) };
}

export async function email(deps: Deps, id: number) {
  const row = await findEmailWithSite(deps.db.db, id);
  if (!row) throw notFound('E-mail');
  return {
    ...emailDetail(row, deps.clock.now()),
    attempts_log: await attemptsLog(deps.db.db, id),
    reports: await reportsOfEmail(deps.db.db, id),
    engagement: await emailEngagement(deps, id),
  };
}

/** The e-mail as sent, or, before it is rendered, as its template renders it now. */
export async function emailPreview(deps: Deps, id: number) {
  const db = deps.db.db;
  const row = await findEmail(db, id);
  if (!row) throw notFound(`E-mail ${id}`);
  const stored = parseJson<RenderedMessage | null>(row.rendered, null);
  // Without the open pixel: an administrator looking at the e-mail is not its addressee opening it.
  if (stored)
    return {
      ok: true as const,
      id,
      stored: true,
      ...stored,
      html: withoutOpenPixel(stored.html, deps.config.publicUrl),
    };
  const project = await findProjectById(db, row.project_id);
  if (!project) throw notFound(`Project of e-mail ${id}`);
  return {
    ok: true as const,
    id,
    stored: false,
    ...(await previewStoredEmail(db, row, project, deps.config.publicUrl)),
  };
}

/** Only a scheduled or queued e-mail can be cancelled (409 once it is being sent or done). */
export async function cancel(deps: Deps, who: AuditActor, id: number) {
  const now = deps.clock.now();
  // The cancellation, its email.cancelled webhook and the audit row commit together; a refusal writes none.
  return audited(deps, who, async (trx, note) => {
    const before = await findEmailWithSite(trx, id);
    if (!before || !(await cancelEmail(trx, id, now))) throw actionRefused(before, id, now, 'email_not_cancellable');
    const row = (await findEmail(trx, id))!;
    await enqueueEmailWebhooks(trx, [{ email: row, kind: 'email.cancelled', reason: 'cancelled_by_admin' }], now);
    note({
      action: 'email.cancel',
      site_key: before.site_key,
      target: `email:${id}`,
      before: { status: visibleStatus(before.status, Number(before.due_at), now) },
      after: { status: visibleStatus(row.status, Number(row.due_at), now) },
    });
    return { ok: true as const, id, status: 'cancelled' };
  });
}

/** A failed e-mail is sent again now, its attempts starting over. */
export async function retry(deps: Deps, who: AuditActor, id: number) {
  const now = deps.clock.now();
  const done = await audited(deps, who, async (trx, note) => {
    const before = await findEmailWithSite(trx, id);
    if (!before || !(await retryEmail(trx, id, now))) throw actionRefused(before, id, now, 'email_not_retriable');
    const row = (await findEmail(trx, id))!;
    note({
      action: 'email.retry',
      site_key: before.site_key,
      target: `email:${id}`,
      before: { status: visibleStatus(before.status, Number(before.due_at), now), attempts: before.attempts },
      after: { status: visibleStatus(row.status, Number(row.due_at), now), attempts: row.attempts },
    });
    return { ok: true as const, id, status: 'queued' };
  });
  deps.delivery?.wake();
  return done;
}

function actionRefused(
  row: (EmailRow & { site_key: string }) | undefined,
  id: number,
  now: number,
  reason: 'email_not_cancellable' | 'email_not_retriable',
) {
  if (!row) return notFound(`E-mail ${id}`);
  return new AppError(409, 'conflict', { reason, params: { id, status: emailDetail(row, now).status } });
}
