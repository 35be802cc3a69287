// Writing webhook deliveries into the outbox, always inside the caller's transaction: the delivery
// commits with the change it reports, or neither does (SPEC §13). Nothing is written when no active
// endpoint of the project subscribed to the kind; that costs one indexed read.
import { randomBytes } from 'node:crypto';
import type { ContactRow, EmailRow } from '../../db/schema.js';
import type { WebhookKind } from '../../domain/statuses.js';
import { activeEndpointsOf, insertDeliveries, type NewDelivery } from '../../repos/siteWebhooks.js';
import type { Executor } from '../../repos/types.js';

export interface SiteNotice {
  projectId: number;
  kind: WebhookKind;
  /** The payload's data; site_key is added here, sequence when it is sent. */
  data: Record<string, unknown>;
}

/** `webhook-id`: unique per delivery, kept by every retry and re-send (sites de-duplicate on it). */
export const newMessageId = () => `msg_${randomBytes(16).toString('base64url')}`;

/** Enqueues one notice for every active endpoint of the project subscribed to `kind`; returns how many. */
export function enqueueSiteWebhooks(
  trx: Executor,
  projectId: number,
  kind: WebhookKind,
  data: Record<string, unknown>,
  now: number,
): Promise<number> {
  return enqueueNotices(trx, [{ projectId, kind, data }], now);
}

export async function enqueueNotices(trx: Executor, notices: SiteNotice[], now: number): Promise<number> {
  if (notices.length === 0) return 0;
  return insertNotices(trx, await activeEndpointsOf(trx, [...new Set(notices.map((n) => n.projectId))]), notices, now);
}

type ActiveEndpoint = Awaited<ReturnType<typeof activeEndpointsOf>>[number];

/** One delivery per notice and active endpoint of its project subscribed to its kind. */
async function insertNotices(trx: Executor, endpoints: ActiveEndpoint[], notices: SiteNotice[], now: number) {
  if (endpoints.length === 0) return 0;
  const rows: NewDelivery[] = [];
  for (const n of notices)
    for (const e of endpoints)
      if (Number(e.project_id) === n.projectId && subscribed(e.events, n.kind))
        rows.push({
          project_id: n.projectId,
          endpoint_id: Number(e.id),
          msg_id: newMessageId(),
          kind: n.kind,
          data: JSON.stringify({ site_key: e.site_key, ...n.data }),
        });
  await insertDeliveries(trx, rows, now);
  return rows.length;
}

const subscribed = (events: string, kind: WebhookKind): boolean => {
  try {
    return (JSON.parse(events) as string[]).includes(kind);
  } catch {
    return false;
  }
};

export type EmailLike = Pick<
  EmailRow,
  'id' | 'project_id' | 'event_id' | 'order_id' | 'to_email' | 'template_key' | 'chain_step'
>;

const STATUS_OF: Partial<Record<WebhookKind, string>> = {
  'email.sent': 'sent',
  'email.failed': 'failed',
  'email.suppressed': 'suppressed',
  'email.cancelled': 'cancelled',
  'email.delivered': 'delivered',
  'email.bounced': 'bounced',
  'email.soft_bounced': 'soft_bounced',
  'email.complained': 'complained',
};

/**
 * Notices about e-mails, with the identifiers the site sent (event type, order, idempotency key) read
 * from the e-mail's event: what a PHP site needs to update its order without storing gateway ids.
 */
export async function enqueueEmailWebhooks(
  trx: Executor,
  items: { email: EmailLike; kind: WebhookKind; reason?: string | null; extra?: Record<string, unknown> }[],
  now: number,
): Promise<number> {
  if (items.length === 0) return 0;
  const endpoints = await activeEndpointsOf(trx, [...new Set(items.map((i) => Number(i.email.project_id)))]);
  const wanted = items.filter((i) =>
    endpoints.some((e) => Number(e.project_id) === Number(i.email.project_id) && subscribed(e.events, i.kind)),
  );
  if (wanted.length === 0) return 0;
  const eventIds = [...new Set(wanted.map((i) => i.email.event_id).filter((id): id is number => id !== null))];
  const events = eventIds.length
    ? await trx
        .selectFrom('events')
        .select(['id', 'event_type', 'idempotency_key'])
        .where('id', 'in', eventIds.map(Number))
        .execute()
    : [];
  const byId = new Map(events.map((e) => [Number(e.id), e]));
  // The endpoints read above: not a second time.
  return insertNotices(
    trx,
    endpoints,
    wanted.map(({ email, kind, reason, extra }) => {
      const ev = email.event_id === null ? undefined : byId.get(Number(email.event_id));
      return {
        projectId: Number(email.project_id),
        kind,
        data: {
          event_id: email.event_id === null ? null : Number(email.event_id),
          scheduled_email_id: Number(email.id),
          event_type: ev?.event_type ?? null,
          order_id: email.order_id,
          idempotency_key: ev?.idempotency_key ?? null,
          email: email.to_email,
          status: STATUS_OF[kind] ?? null,
          reason: reason ?? null,
          template_key: email.template_key,
          step: email.chain_step,
          ...extra,
        },
      };
    }),
    now,
  );
}

/** contact.unsubscribed of one or more topics: the contact's status is unchanged, `topics` says which it left. */
export function topicNotice(
  contact: Pick<ContactRow, 'id' | 'email' | 'status'>,
  via: string,
  topics: string[],
): Record<string, unknown> {
  return { contact_id: Number(contact.id), email: contact.email, status: contact.status, reason: via, topics };
}

/** contact.unsubscribed: who, and by what (`link`, `admin`, `complaint`). */
export function contactNotice(contact: Pick<ContactRow, 'id' | 'email'>, via: string): Record<string, unknown> {
  return { contact_id: Number(contact.id), email: contact.email, status: 'unsubscribed', reason: via };
}
