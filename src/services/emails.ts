// The outbox as the admin API and UI see it: lists, one e-mail, its preview, cancel and retry.
import { notFound } from '../errors.js';
import { attemptsLog } from '../repos/delivery.js';
import { cancelEmail, retryEmail } from '../repos/emailActions.js';
import { emailDetail, findEmail, findEmailWithSite, listEmails, type RenderedMessage } from '../repos/emails.js';
import { findProjectById } from '../repos/projects.js';
import { reportsOfEmail } from '../repos/reports.js';
import { decodeCursor, encodeCursor, parseJson } from '../repos/types.js';
import type { EmailsQuery } from '../schemas/admin.js';
import { PAGE_SIZE } from '../schemas/common.js';
import { conflict, projectFilter } from './admin.js';
import { enqueueEmailWebhooks } from './webhooks/enqueue.js';
import type { Deps } from './context.js';
import { previewStoredEmail } from './preview.js';

export async function emails(deps: Deps, q: EmailsQuery, scope: readonly number[] | null = null) {
  const db = deps.db.db;
  const { items, nextId } = await listEmails(
    db,
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
  };
}

/** The e-mail as sent, or, before it is rendered, as its template renders it now. */
export async function emailPreview(deps: Deps, id: number) {
  const db = deps.db.db;
  const row = await findEmail(db, id);
  if (!row) throw notFound(`E-mail ${id}`);
  const stored = parseJson<RenderedMessage | null>(row.rendered, null);
  if (stored) return { ok: true as const, id, stored: true, ...stored };
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
export async function cancel(deps: Deps, id: number) {
  const now = deps.clock.now();
  const cancelled = await deps.db.db.transaction().execute(async (trx) => {
    if (!(await cancelEmail(trx, id, now))) return false;
    const row = await findEmail(trx, id);
    if (row)
      await enqueueEmailWebhooks(trx, [{ email: row, kind: 'email.cancelled', reason: 'cancelled_by_admin' }], now);
    return true;
  });
  if (!cancelled)
    throw await actionRefused(deps, id, 'cancelled', 'only a scheduled or queued e-mail can be cancelled');
  return { ok: true as const, id, status: 'cancelled' };
}

/** A failed e-mail is sent again now, its attempts starting over. */
export async function retry(deps: Deps, id: number) {
  if (!(await retryEmail(deps.db.db, id, deps.clock.now())))
    throw await actionRefused(deps, id, 'retried', 'only a failed e-mail can be retried');
  deps.delivery?.wake();
  return { ok: true as const, id, status: 'queued' };
}

async function actionRefused(deps: Deps, id: number, verb: string, rule: string) {
  const row = await findEmailWithSite(deps.db.db, id);
  if (!row) return notFound(`E-mail ${id}`);
  return conflict(`E-mail ${id} is ${emailDetail(row, deps.clock.now()).status} and cannot be ${verb}: ${rule}`);
}
