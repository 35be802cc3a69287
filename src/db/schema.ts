// Table types for Kysely. Times are integer milliseconds since the epoch in both dialects (comparable,
// indexable, no time-zone surprises); JSON documents are stored as text and parsed in the repositories.
import type { Generated, Insertable, Selectable } from 'kysely';
import type {
  AdminRole,
  AdminUserStatus,
  AuditVia,
  ContactStatus,
  ConsentSource,
  ContactStatusReason,
  ErasureStatus,
  EmailKind,
  EmailStatus,
  KeyStatus,
  ReportKind,
  ReportSource,
  WebhookDeliveryStatus,
  WebhookEndpointStatus,
  WebhookKind,
} from '../domain/statuses.js';
import type { MachineReason, UaCategory } from '../domain/machineHits.js';

// Re-exported for the repositories that name them beside the row types; defined in domain/statuses.ts.
export type { ContactStatus, EmailKind, EmailStatus };

export interface ProjectsTable {
  id: Generated<number>;
  site_key: string;
  name: string;
  from_email: string;
  /** IANA time zone of the templates' `date` filter (migration 007). */
  timezone: Generated<string>;
  /** Language of the templates' filters: `ru` or `en` (migration 007). */
  locale: Generated<ProjectLocale>;
  created_at: number;
  updated_at: number;
  /** Campaigns and cart chains paused by the complaint rate (migration 013); null: not paused. */
  marketing_paused_at: Generated<number | null>;
  marketing_paused_reason: Generated<string | null>;
  /** 1: this project's webhooks may go to loopback/private addresses (an owner's choice, migration 021). */
  allow_private_webhooks: Generated<number>;
  /** Where answers to the project's e-mails go (migration 020); the relay settings' reply_to wins. */
  reply_to: Generated<string | null>;
  /** Accent colour of the preference page, #rrggbb (migration 019); null: the default. */
  brand_color: Generated<string | null>;
  /** What `{{ name }}` prints when neither the request nor the contact has a name (migration 017). */
  fallback_name: Generated<string | null>;
  /** Layout of the templates that name none (migration 017). */
  default_layout: Generated<string | null>;
  /** Opens/clicks/UTM settings as JSON (migration 018, SPEC §17); null: opens and clicks on, no UTM. */
  tracking: Generated<string | null>;
}

export type ProjectLocale = 'ru' | 'en';

export interface ApiKeysTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  key_hash: string;
  last4: string;
  status: KeyStatus;
  rights: string;
  rate_per_second: number | null;
  rate_burst: number | null;
  created_at: number;
  disabled_at: number | null;
}

export interface ContactsTable {
  id: Generated<number>;
  project_id: number;
  email: string;
  name: string | null;
  fields: string;
  status: ContactStatus;
  created_at: number;
  updated_at: number;
  /** What set the status last, and the e-mail and report that did it (migration 010, SPEC §12). */
  status_reason: Generated<ContactStatusReason | null>;
  status_email_id: Generated<number | null>;
  status_report_id: Generated<number | null>;
  status_changed_at: Generated<number | null>;
  /** When the person was erased (migration 019): the row is kept, without address, name or fields. */
  erased_at: Generated<number | null>;
}

/** Inbound DSN, ARF and provider reports about sent e-mails (SPEC §12). */
export interface EmailReportsTable {
  id: Generated<number>;
  project_id: number | null;
  email_id: number | null;
  contact_id: number | null;
  received_at: number;
  source: ReportSource;
  kind: ReportKind;
  status_code: string | null;
  diagnostic: string | null;
  recipient: string | null;
  message_id: string | null;
  provider_message_id: string | null;
  /** How the e-mail was found: `verp`, `message_id`, `provider_id`; null when it was not. */
  matched_by: string | null;
  dedupe_key: string;
  /** JSON: what the report changed (e-mail and contact status before and after). */
  effects: Generated<string>;
  raw: string;
}

export interface ListsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  created_at: number;
}

export interface ListMembersTable {
  list_id: number;
  contact_id: number;
  added_at: number;
}

export interface TemplatesTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  subject: string;
  html: string;
  text: string;
  created_at: number;
  updated_at: number;
  /** Consent topic key (SPEC §18); null = the default for the template's use (migration 015). */
  topic: Generated<string | null>;
  /** 1 = opens and clicks tracked (SPEC §17), 0 = never (documents, passwords). */
  tracking: Generated<number>;
  /** JSON [{name, required}] of the published version; null: saved before migration 017, unchecked. */
  variables: Generated<string | null>;
  /** The published version (migration 017); the row holds its content. */
  version: Generated<number | null>;
  layout: Generated<string | null>;
  format: Generated<TemplateFormat>;
  /** MJML compiled to HTML at save (format mjml); null for html. */
  compiled_html: Generated<string | null>;
}

export type TemplateFormat = 'html' | 'mjml';

/** Every saved version of a template, immutable (SPEC §16, migration 017). */
export interface TemplateVersionsTable {
  id: Generated<number>;
  template_id: number;
  project_id: number;
  version: number;
  subject: string;
  html: string;
  compiled_html: string | null;
  text: string;
  layout: string | null;
  format: TemplateFormat;
  topic: string | null;
  tracking: number;
  variables: string | null;
  actor: string | null;
  created_at: number;
}

export interface TemplateLayoutsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  html: string;
  text: string;
  created_at: number;
  updated_at: number;
}

export interface RoutesTable {
  project_id: number;
  routing_key: string;
  template_id: number;
}

export interface CourseCategoriesTable {
  project_id: number;
  category_id: string;
  list_id: number;
  slug: string;
  title: string;
}

export interface PaidListsTable {
  project_id: number;
  cart_type: string;
  list_id: number;
}

export interface SequencesTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  steps: string;
  created_at: number;
}

export interface CartChainsTable {
  project_id: number;
  cart_type: string;
  sequence_id: number;
}

export interface OrdersTable {
  id: Generated<number>;
  project_id: number;
  order_id: string;
  cart_type: string;
  contact_id: number;
  status: 'unpaid' | 'paid';
  course_name: string | null;
  /** Hundredths of the currency unit (domain/money.ts), exact. */
  amount_minor: number | null;
  currency: string | null;
  paid_at: string | null;
  created_event_id: number | null;
  paid_event_id: number | null;
  created_at: number;
  updated_at: number;
}

export interface EventsTable {
  id: Generated<number>;
  project_id: number;
  key_id: number | null;
  key_last4: string | null;
  endpoint: string;
  event_type: string | null;
  email: string | null;
  order_id: string | null;
  idempotency_key: string | null;
  http_status: number;
  accepted: number;
  error_code: string | null;
  payload: string | null;
  effects: string;
  created_at: number;
}

export interface IdempotencyTable {
  project_id: number;
  idempotency_key: string;
  request_hash: string;
  endpoint: string;
  response_status: number;
  response_body: string;
  event_id: number;
  created_at: number;
}

export interface ScheduledEmailsTable {
  id: Generated<number>;
  project_id: number;
  kind: EmailKind;
  template_id: number;
  template_key: string;
  contact_id: number;
  to_email: string;
  to_name: string | null;
  order_id: string | null;
  event_id: number | null;
  campaign_id: number | null;
  chain_step: string | null;
  context: string;
  status: EmailStatus;
  due_at: number;
  attempts: number;
  last_error: string | null;
  locked_by: string | null;
  locked_until: number | null;
  sent_at: number | null;
  message_id: string | null;
  rendered: string | null;
  /** The purchase event that cancelled this cart e-mail (SPEC §13). */
  cancelled_by_event_id: number | null;
  /** When the current attempt was handed to the relay (migration 016); null while only claimed. */
  send_started_at: number | null;
  /** The purchase event that found this cart e-mail already handed to the relay (reason in_flight). */
  in_flight_event_id: number | null;
  /** A test send from the delivery settings (migration 008): left out of every statistic. */
  is_test: Generated<number>;
  /** The consent topic it was scheduled under (migration 019); null: the default of its kind. */
  topic: Generated<string | null>;
  /** The template version the e-mail was (or will be) rendered with (migration 017). */
  template_version: Generated<number | null>;
  created_at: number;
  updated_at: number;
}

export interface CampaignsTable {
  id: Generated<number>;
  project_id: number;
  template_id: number;
  list_id: number;
  send_at: number;
  recipients: number;
  created_at: number;
}

export interface SettingsTable {
  name: string;
  value: string;
}

/** Admin UI sessions; `id` is the SHA-256 of the cookie token, never the token itself. */
export interface SessionsTable {
  id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
  last_seen: number;
  /** The account logged in; null for a session opened with the root ADMIN_TOKEN (migration 009). */
  user_id?: number | null;
}

export interface AdminUsersTable {
  id: Generated<number>;
  email: string;
  name: string;
  password_hash: string;
  role: AdminRole;
  status: AdminUserStatus;
  created_at: number;
  updated_at: number;
}

export interface AdminUserProjectsTable {
  user_id: number;
  project_id: number;
}

export interface AdminTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  token_hash: string;
  last4: string;
  read_only: number;
  expires_at: number | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: number;
  actor: string;
  via: AuditVia;
  address: string | null;
  action: string;
  site_key: string | null;
  target: string | null;
  before: string | null;
  after: string | null;
  /** The personal token that made the change (migration 014); null for sessions, the root token, the CLI. */
  token_id: number | null;
  token_name: string | null;
}

/** A project's own delivery settings (migration 008); `secrets` is AES-256-GCM ciphertext. */
export interface ProjectDeliveryTable {
  project_id: number;
  settings: string;
  secrets: string;
  updated_at: number;
}

/** One delivery attempt of an e-mail: which transport, what the relay answered. */
export interface EmailAttemptsTable {
  id: Generated<number>;
  scheduled_email_id: number;
  attempt: number;
  transport: string;
  ok: number;
  reply: string | null;
  queue_id: string | null;
  provider_message_id: string | null;
  message_id: string | null;
  at: number;
}

export interface DeliveryQuotaUsageTable {
  project_id: number;
  day: string;
  used: number;
}

export interface WebhookEndpointsTable {
  id: Generated<number>;
  project_id: number;
  url: string;
  description: string | null;
  /** JSON array of WebhookKind. */
  events: string;
  secret_sealed: string;
  status: WebhookEndpointStatus;
  /** First failure since the last success; three days of it disables the endpoint. */
  failing_since: number | null;
  disabled_at: number | null;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  project_id: number;
  endpoint_id: number;
  /** The `webhook-id` header: the same on every attempt and re-send. */
  msg_id: string;
  kind: WebhookKind;
  data: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  due_at: number;
  locked_by: string | null;
  locked_until: number | null;
  last_error: string | null;
  delivered_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  at: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

/** Consent topics of a project (SPEC §18, migration 019). */
export interface TopicsTable {
  project_id: number;
  key: string;
  title: string;
  advertising: number;
  require_consent: number;
  position: number;
  created_at: number;
  updated_at: number;
}

/** A contact's choice for one topic; no row means subscribed. */
export interface ContactTopicsTable {
  contact_id: number;
  topic: string;
  subscribed: number;
  updated_at: number;
}

/** Append-only evidence of consent given or withdrawn (SPEC §18). */
export interface ConsentRecordsTable {
  id: Generated<number>;
  project_id: number;
  contact_id: number;
  topic: string;
  granted: number;
  at: number;
  source: ConsentSource;
  text_version: string | null;
  ip: string | null;
  user_agent: string | null;
  recorded_at: number;
}

/** The keyed hash of an erased address that must stay suppressed. */
export interface SuppressedHashesTable {
  project_id: number;
  email_hash: string;
  reason: string;
  created_at: number;
}

export interface ErasuresTable {
  id: Generated<number>;
  project_id: number;
  contact_id: number;
  status: ErasureStatus;
  /** The address, sealed, while the erasure runs; null once done. */
  sealed_email: string | null;
  /** JSON: rows erased per table. */
  erased: Generated<string>;
  locked_by: string | null;
  locked_until: number | null;
  created_at: number;
  finished_at: number | null;
}

/** A hit on /c/ or /o/ (migration 018): written in batches, folded into the counters by a worker. */
export interface TrackingHitsTable {
  id: Generated<number>;
  project_id: number;
  email_id: number;
  kind: 'open' | 'click';
  position: number | null;
  url: string | null;
  machine: number;
  machine_reason: MachineReason | null;
  at: number;
  /** Personal data, truncated: the /24 (IPv4) or /48 (IPv6) network of the client. */
  ip_prefix: string | null;
  ua_category: UaCategory;
  processed_at: number | null;
  locked_by: string | null;
  locked_until: number | null;
}

export interface EmailEngagementTable {
  email_id: number;
  project_id: number;
  opens: Generated<number>;
  clicks: Generated<number>;
  machine_opens: Generated<number>;
  machine_clicks: Generated<number>;
  first_open_at: number | null;
  first_click_at: number | null;
  last_click_at: number | null;
  open_notified: Generated<number>;
  click_notified: Generated<number>;
}

export interface EmailLinkClicksTable {
  email_id: number;
  position: number;
  url: string;
  clicks: number;
  last_at: number;
}

export interface PurchaseAttributionsTable {
  project_id: number;
  order_id: string;
  email_id: number;
  event_id: number;
  clicked_at: number;
  created_at: number;
}

export interface Database {
  topics: TopicsTable;
  contact_topics: ContactTopicsTable;
  consent_records: ConsentRecordsTable;
  suppressed_hashes: SuppressedHashesTable;
  erasures: ErasuresTable;
  tracking_hits: TrackingHitsTable;
  email_engagement: EmailEngagementTable;
  email_link_clicks: EmailLinkClicksTable;
  purchase_attributions: PurchaseAttributionsTable;
  project_delivery: ProjectDeliveryTable;
  email_attempts: EmailAttemptsTable;
  delivery_quota_usage: DeliveryQuotaUsageTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  settings: SettingsTable;
  campaigns: CampaignsTable;
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  contacts: ContactsTable;
  lists: ListsTable;
  list_members: ListMembersTable;
  templates: TemplatesTable;
  template_versions: TemplateVersionsTable;
  template_layouts: TemplateLayoutsTable;
  routes: RoutesTable;
  course_categories: CourseCategoriesTable;
  paid_lists: PaidListsTable;
  sequences: SequencesTable;
  cart_chains: CartChainsTable;
  orders: OrdersTable;
  events: EventsTable;
  idempotency: IdempotencyTable;
  scheduled_emails: ScheduledEmailsTable;
  sessions: SessionsTable;
  admin_users: AdminUsersTable;
  admin_user_projects: AdminUserProjectsTable;
  admin_tokens: AdminTokensTable;
  audit_log: AuditLogTable;
  email_reports: EmailReportsTable;
}

export type Project = Selectable<ProjectsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ContactRow = Selectable<ContactsTable>;
export type TemplateRow = Selectable<TemplatesTable>;
export type TemplateVersionRow = Selectable<TemplateVersionsTable>;
export type LayoutRow = Selectable<TemplateLayoutsTable>;
export type OrderRow = Selectable<OrdersTable>;
export type EventRow = Selectable<EventsTable>;
export type EmailRow = Selectable<ScheduledEmailsTable>;
export type NewEmail = Insertable<ScheduledEmailsTable>;
export type NewEvent = Insertable<EventsTable>;
export type EmailReportRow = Selectable<EmailReportsTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;
