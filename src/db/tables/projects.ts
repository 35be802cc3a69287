// Projects, their keys and delivery settings, and the administrators who run them.
// Times are integer milliseconds since the epoch; JSON documents are text (see ../schema.ts).
import type { Generated } from 'kysely';
import type { Flag } from '../flags.js';
import type { AdminRole, AdminUserStatus, AuditVia, KeyStatus, SenderDomainStatus } from '../../domain/statuses.js';

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
  allow_private_webhooks: Generated<Flag>;
  /** 1: this project's relay URLs may name loopback/private addresses (an owner's choice, migration 023). */
  allow_private_relays: Generated<Flag>;
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
  /** Logo in the default layout's header, an https URL (migration 024, SPEC §22); null: the name only. */
  logo_url: Generated<string | null>;
  /** The sender's postal address in the default layout's footer (migration 024); null: not shown. */
  postal_address: Generated<string | null>;
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
  read_only: Flag;
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

/** One row: moves forward with every change to cached configuration (migration 004, services/configCache.ts). */
export interface ConfigVersionTable {
  version: number;
}

/** A domain a project may send from (migration 023, SPEC §21); `token` is the TXT record's value. */
export interface SenderDomainsTable {
  id: Generated<number>;
  project_id: number;
  domain: string;
  status: SenderDomainStatus;
  token: string;
  created_at: number;
  updated_at: number;
  /** The last TXT lookup. */
  checked_at: number | null;
  /** Who approved it (`upgrade` for the domains approved by migration 023). */
  approved_by: string | null;
}

/** Failed logins per account (`a:` + SHA-256 of its address) and per source address (`i:`), migration 023. */
export interface LoginThrottleTable {
  key: string;
  failures: number;
  window_start: number;
}
