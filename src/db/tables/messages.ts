// What the gateway records and sends: orders, events, e-mails, their attempts, reports, site webhooks
// and tracking.
// Times are integer milliseconds since the epoch; JSON documents are text (see ../schema.ts).
import type { Generated } from 'kysely';
import type { Flag } from '../flags.js';
import type {
  EmailKind,
  EmailStatus,
  ReportKind,
  ReportSource,
  WebhookDeliveryStatus,
  WebhookEndpointStatus,
  WebhookKind,
} from '../../domain/statuses.js';
import type { MachineReason, UaCategory } from '../../domain/machineHits.js';

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
  accepted: Flag;
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
  is_test: Generated<Flag>;
  /** The consent topic it was scheduled under (migration 019); null: the default of its kind. */
  topic: Generated<string | null>;
  /** The template version the e-mail was (or will be) rendered with (migration 017). */
  template_version: Generated<number | null>;
  /** When it first could not go for a temporary reason (migration 022); it expires SEND_GIVE_UP_AFTER later. */
  waiting_since: Generated<number | null>;
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

/** One delivery attempt of an e-mail: which transport, what the relay answered. */
export interface EmailAttemptsTable {
  id: Generated<number>;
  scheduled_email_id: number;
  attempt: number;
  transport: string;
  ok: Flag;
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

/** A hit on /c/ or /o/ (migration 018): written in batches, folded into the counters by a worker. */
export interface TrackingHitsTable {
  id: Generated<number>;
  project_id: number;
  email_id: number;
  kind: 'open' | 'click';
  position: number | null;
  url: string | null;
  machine: Flag;
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
  open_notified: Generated<Flag>;
  click_notified: Generated<Flag>;
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
