// The Kysely database type, assembled from the table groups in tables/. Times are integer milliseconds
// since the epoch in both dialects (comparable, indexable, no time-zone surprises); JSON documents are
// stored as text and parsed in the repositories. test/schema-drift.test.ts compares these types with the
// columns the migrations make, on both engines.
import type { Insertable, Selectable } from 'kysely';
import type { WithBooleans } from './flags.js';
import type { ContactStatus, EmailKind, EmailStatus } from '../domain/statuses.js';
import type {
  ProjectsTable,
  ApiKeysTable,
  SettingsTable,
  ConfigVersionTable,
  SessionsTable,
  AdminUsersTable,
  AdminUserProjectsTable,
  AdminTokensTable,
  AuditLogTable,
  ProjectDeliveryTable,
  SenderDomainsTable,
  LoginThrottleTable,
} from './tables/projects.js';
import type {
  ContactsTable,
  ListsTable,
  ListMembersTable,
  TopicsTable,
  ContactTopicsTable,
  ConsentRecordsTable,
  SuppressedHashesTable,
  ErasuresTable,
} from './tables/contacts.js';
import type {
  TemplatesTable,
  TemplateVersionsTable,
  TemplateLayoutsTable,
  RoutesTable,
  CourseCategoriesTable,
  PaidListsTable,
  SequencesTable,
  CartChainsTable,
} from './tables/templates.js';
import type {
  EmailReportsTable,
  OrdersTable,
  EventsTable,
  IdempotencyTable,
  ScheduledEmailsTable,
  CampaignsTable,
  EmailAttemptsTable,
  DeliveryQuotaUsageTable,
  WebhookEndpointsTable,
  WebhookDeliveriesTable,
  WebhookAttemptsTable,
  TrackingHitsTable,
  EmailEngagementTable,
  EmailLinkClicksTable,
  PurchaseAttributionsTable,
} from './tables/messages.js';

// Re-exported for the repositories that name them beside the row types; defined in domain/statuses.ts.
export type { ContactStatus, EmailKind, EmailStatus };
export type * from './tables/projects.js';
export type * from './tables/contacts.js';
export type * from './tables/templates.js';
export type * from './tables/messages.js';

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
  config_version: ConfigVersionTable;
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
  sender_domains: SenderDomainsTable;
  login_throttle: LoginThrottleTable;
}

export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ContactRow = Selectable<ContactsTable>;
export type LayoutRow = Selectable<TemplateLayoutsTable>;
export type OrderRow = Selectable<OrdersTable>;
export type EmailReportRow = Selectable<EmailReportsTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;

// Rows with flag columns as the repositories give and take them: the flags as booleans (flags.ts). The
// repositories convert with the mappers of repos/flagRows.ts.
export type Project = WithBooleans<Selectable<ProjectsTable>, 'allow_private_webhooks' | 'allow_private_relays'>;
export type TemplateRow = WithBooleans<Selectable<TemplatesTable>, 'tracking'>;
export type TemplateVersionRow = WithBooleans<Selectable<TemplateVersionsTable>, 'tracking'>;
export type EventRow = WithBooleans<Selectable<EventsTable>, 'accepted'>;
export type EmailRow = WithBooleans<Selectable<ScheduledEmailsTable>, 'is_test'>;
/** `is_test` left out: not a test send (the column's default). */
export type NewEmail = WithBooleans<Insertable<ScheduledEmailsTable>, 'is_test'>;
export type NewEvent = WithBooleans<Insertable<EventsTable>, 'accepted'>;
