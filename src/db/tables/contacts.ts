// Contacts, address books and what each person agreed to (SPEC §4, §18).
// Times are integer milliseconds since the epoch; JSON documents are text (see ../schema.ts).
import type { Generated } from 'kysely';
import type { Flag } from '../flags.js';
import type { ContactStatus, ConsentSource, ContactStatusReason, ErasureStatus } from '../../domain/statuses.js';

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

/** Consent topics of a project (SPEC §18, migration 019). */
export interface TopicsTable {
  project_id: number;
  key: string;
  title: string;
  advertising: Flag;
  require_consent: Flag;
  position: number;
  created_at: number;
  updated_at: number;
}

/** A contact's choice for one topic; no row means subscribed. */
export interface ContactTopicsTable {
  contact_id: number;
  topic: string;
  subscribed: Flag;
  updated_at: number;
}

/** Append-only evidence of consent given or withdrawn (SPEC §18). */
export interface ConsentRecordsTable {
  id: Generated<number>;
  project_id: number;
  contact_id: number;
  topic: string;
  granted: Flag;
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
