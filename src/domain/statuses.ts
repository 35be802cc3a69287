// Statuses and kinds, defined once: the database types (db/schema.ts), the TypeBox unions
// (schemas/*) and the admin UI's metadata (GET /api/admin/ui/meta) all derive from these arrays.

/** What may be sent to a contact (SPEC §4; domain/suppression.ts says what each one stops). */
/**
 * How a gateway request ended in the chronology. A repeat is a retry whose body changed under an
 * idempotency key already used (422 idempotency_key_reused, SPEC §1): the first call did its work, so
 * it is counted and shown as a repeated call, not as a rejection, and tells no event.rejected webhook.
 */
export const EVENT_OUTCOMES = ['accepted', 'rejected', 'repeated'] as const;
export type EventOutcome = (typeof EVENT_OUTCOMES)[number];
export const REPEAT_ERROR_CODE = 'idempotency_key_reused';

export const eventOutcome = (r: { accepted: boolean; error_code: string | null }): EventOutcome =>
  r.accepted ? 'accepted' : r.error_code === REPEAT_ERROR_CODE ? 'repeated' : 'rejected';

export const CONTACT_STATUSES = ['active', 'unsubscribed', 'invalid', 'admin_blocked'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

/**
 * The life of one outbox row. `scheduled` rows whose time has come are shown as `queued`
 * (repos/emails.ts visibleStatus).
 */
export const EMAIL_STATUSES = [
  'scheduled',
  'queued',
  'sending',
  'sent',
  'failed',
  'cancelled',
  'suppressed',
  'delivered',
  'bounced',
  'soft_bounced',
  'complained',
] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/**
 * What a report received after `sent` may make of an e-mail (SPEC §12); each of these statuses means
 * the e-mail left the gateway, so figures count them among the sent ones too (SENT_STATUSES).
 */
export const OUTCOME_STATUSES = ['delivered', 'bounced', 'soft_bounced', 'complained'] as const;
export type OutcomeStatus = (typeof OUTCOME_STATUSES)[number];
/** Every status of an e-mail the relay accepted. */
export const SENT_STATUSES = ['sent', ...OUTCOME_STATUSES] as const;

/**
 * What an inbound report (DSN, ARF, provider webhook) says: one of the outcomes, `delayed` (the
 * receiver is still trying: recorded, changes nothing) or `unparsed` (kept with the reason).
 */
export const REPORT_KINDS = [...OUTCOME_STATUSES, 'delayed', 'auto_reply', 'unparsed'] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];

/** Where a report came in: the VERP listener, or a provider's webhook (SPEC §12). */
export const WEBHOOK_PROVIDERS = ['ses', 'postmark', 'sendgrid', 'mailgun', 'unisender_go'] as const;
export type WebhookProvider = (typeof WEBHOOK_PROVIDERS)[number];
export const REPORT_SOURCES = ['smtp', ...WEBHOOK_PROVIDERS] as const;
export type ReportSource = (typeof REPORT_SOURCES)[number];

/** Why a contact has its status (shown on its page, SPEC §12): who or what set it last. */
export const CONTACT_STATUS_REASONS = [
  'admin',
  'unsubscribe_link',
  'smtp_rejection',
  'hard_bounce',
  'complaint',
  'soft_bounces',
  'consent',
  'preference_page',
] as const;
export type ContactStatusReason = (typeof CONTACT_STATUS_REASONS)[number];

/** Where a consent record came from (SPEC §18). */
export const CONSENT_SOURCES = [
  'api',
  'preference_page',
  'unsubscribe_link',
  'list_unsubscribe',
  'complaint',
  'admin',
] as const;
export type ConsentSource = (typeof CONSENT_SOURCES)[number];

/** An erasure answers `done` at once, or `in_progress` while the worker erases a large history. */
export const ERASURE_STATUSES = ['in_progress', 'done'] as const;
export type ErasureStatus = (typeof ERASURE_STATUSES)[number];

/** Why an e-mail exists; decides what an unsubscribed contact still receives. */
export const EMAIL_KINDS = ['transactional', 'cart', 'campaign'] as const;
export type EmailKind = (typeof EMAIL_KINDS)[number];

export const KEY_STATUSES = ['active', 'disabled'] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

/** Administrator roles (SPEC §14): owner sees everything; the two others only their chosen projects. */
/** A sender domain (SPEC §21): pending until its TXT record is found (verified) or an owner approves it. */
export const SENDER_DOMAIN_STATUSES = ['pending', 'verified', 'approved'] as const;
export type SenderDomainStatus = (typeof SENDER_DOMAIN_STATUSES)[number];

export const ADMIN_ROLES = ['owner', 'project_admin', 'viewer'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

export const ADMIN_USER_STATUSES = ['active', 'disabled'] as const;
export type AdminUserStatus = (typeof ADMIN_USER_STATUSES)[number];

/** How an audited change came in: a UI session, a personal token, the root ADMIN_TOKEN, the CLI. */
// `key`: a site's API key (a scoped erase, issue 39).
export const AUDIT_VIAS = ['session', 'token', 'root', 'cli', 'setup', 'key'] as const;
export type AuditVia = (typeof AUDIT_VIAS)[number];

/** What an audit row says was done (SPEC §14): `<object>.<change>`. */
export const AUDIT_ACTIONS = [
  'project.create',
  'project.update',
  'project.marketing_resume',
  'key.create',
  'key.update',
  'key.disable',
  'template.create',
  'template.update',
  'template.draft',
  'template.publish',
  'layout.save',
  'layout.delete',
  'routing.replace',
  'course_categories.replace',
  'paid_lists.replace',
  'cart_chains.replace',
  'sequence.create',
  'campaign.create',
  'delivery.set',
  'delivery.clear',
  'delivery.verify',
  'delivery.test_send',
  'secrets.rotate',
  'webhook.create',
  'webhook.update',
  'webhook.delete',
  'webhook.resend',
  'event.replay',
  'event.unpaid_order',
  'contact.upsert',
  'contact.status',
  'list.create',
  'list.add_contact',
  'email.cancel',
  'email.retry',
  'user.create',
  'user.change',
  'user.password',
  'user.disable',
  'token.create',
  'token.revoke',
  'session.end',
  'demo.load',
  'topics.replace',
  'consent.record',
  'contact.export',
  'contact.erase',
  'domain.add',
  'domain.verify',
  'domain.approve',
  'user.unlock',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What a site's webhook endpoint may subscribe to (SPEC §13). */
export const WEBHOOK_KINDS = [
  'email.sent',
  'email.delivered',
  'email.failed',
  'email.bounced',
  'email.soft_bounced',
  'email.complained',
  'email.suppressed',
  'email.cancelled',
  'email.opened',
  'email.clicked',
  'contact.unsubscribed',
  'event.rejected',
] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

/** A disabled endpoint gets nothing until an administrator enables it again. */
export const WEBHOOK_ENDPOINT_STATUSES = ['active', 'disabled'] as const;
export type WebhookEndpointStatus = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];

/** pending (due at due_at) → sending (leased) → delivered, or failed once retries are over. */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'sending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** How the admin UI colours a status badge. */
export type StatusTone = 'ok' | 'bad' | 'warn' | 'info' | 'muted';
/**
 * The tone of every status the UI shows as a badge, beside the statuses themselves so that a new one
 * cannot be left without (the type requires each); served to the UI by /api/admin/ui/meta.
 */
export const STATUS_TONES: Record<
  EventOutcome | ContactStatus | EmailStatus | ReportKind | KeyStatus | 'none',
  StatusTone
> = {
  accepted: 'ok',
  rejected: 'bad',
  repeated: 'info',
  active: 'ok',
  unsubscribed: 'warn',
  invalid: 'bad',
  admin_blocked: 'bad',
  disabled: 'bad',
  scheduled: 'info',
  queued: 'info',
  sending: 'info',
  sent: 'ok',
  failed: 'bad',
  cancelled: 'muted',
  suppressed: 'warn',
  delivered: 'ok',
  bounced: 'bad',
  soft_bounced: 'warn',
  complained: 'bad',
  delayed: 'info',
  auto_reply: 'muted',
  unparsed: 'muted',
  none: 'warn',
};

/**
 * The first-run checklist's steps, in the order an administrator takes them (issue 28): each is ticked
 * from the project's real state (services/checklist.ts).
 */
export const CHECKLIST_STEPS = ['project', 'template', 'routing', 'key', 'delivery', 'test_email'] as const;
export type ChecklistStep = (typeof CHECKLIST_STEPS)[number];
