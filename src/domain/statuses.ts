// Statuses and kinds, defined once: the database types (db/schema.ts), the TypeBox unions
// (schemas/*) and the admin UI's metadata (GET /api/admin/ui/meta) all derive from these arrays.

/** What may be sent to a contact (SPEC §4; domain/suppression.ts says what each one stops). */
export const CONTACT_STATUSES = ['active', 'unsubscribed', 'invalid', 'admin_blocked'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

/**
 * The life of one outbox row. `scheduled` rows whose time has come are shown as `queued`
 * (repos/emails.ts visibleStatus).
 */
export const EMAIL_STATUSES = ['scheduled', 'queued', 'sending', 'sent', 'failed', 'cancelled', 'suppressed'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/** Why an e-mail exists; decides what an unsubscribed contact still receives. */
export const EMAIL_KINDS = ['transactional', 'cart', 'campaign'] as const;
export type EmailKind = (typeof EMAIL_KINDS)[number];

export const KEY_STATUSES = ['active', 'disabled'] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

/** Administrator roles (SPEC §14): owner sees everything; the two others only their chosen projects. */
export const ADMIN_ROLES = ['owner', 'project_admin', 'viewer'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

export const ADMIN_USER_STATUSES = ['active', 'disabled'] as const;
export type AdminUserStatus = (typeof ADMIN_USER_STATUSES)[number];

/** How an audited change came in: a UI session, a personal token, the root ADMIN_TOKEN, the CLI. */
export const AUDIT_VIAS = ['session', 'token', 'root', 'cli', 'setup'] as const;
export type AuditVia = (typeof AUDIT_VIAS)[number];

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
