// The statements the accept executor (services/accept/execute.ts) writes a plan with, one set per
// engine in the same shape: the executor's steps are the same on both, only the SQL differs.
//   - PostgreSQL: set-based (one statement per table for a whole batch of requests, rows bound as
//     arrays and turned back into rows by unnest()), because there each round trip costs more than the
//     work it carries;
//   - SQLite (repos/acceptSqlite.ts): one prebuilt statement per row, run in the request's unit of the
//     group commit, because there a statement costs microseconds and commits are what is shared.
// Rules are not written here: the contact name rule is NAME_RULE (repos/contacts.ts), the rest are the
// executor's.
import type { Dialect } from '../db/index.js';
import type { NewEmail, NewEvent, OrderRow } from '../db/schema.js';
import { upsertContactsMany, type ContactRef, type ContactWanted } from './contacts.js';
import { insertAcceptedMany } from './events.js';
import type { NewIdempotencyRecord } from './idempotency.js';
import { insertUnpaidOrdersMany, type NewUnpaidOrder } from './orders.js';
import { reserveIds } from './setBased.js';
import { sqliteAcceptStatements } from './acceptSqlite.js';
import type { Executor } from './types.js';

/** How an unpaid order turned out: 'created', or the status of the order that existed already. */
export type StoredOrder = 'created' | OrderRow['status'];

/** The rows a batch writes last, ids drawn ahead (reserveIds). */
export interface AcceptedRows {
  emails: (NewEmail & { id: number })[];
  events: (NewEvent & { id: number })[];
  records: NewIdempotencyRecord[];
}

export interface AcceptStatements {
  /**
   * The contacts (at most one row per project and address), by contactKey, upserted by NAME_RULE;
   * one deleted meanwhile is missing.
   */
  upsertContacts(db: Executor, wanted: ContactWanted[]): Promise<Map<string, ContactRef>>;
  /** Ids for the rows still to be written, so they can name each other before they exist. */
  reserveIds(
    db: Executor,
    counts: { events: number; scheduled_emails: number },
  ): Promise<{ events: number[]; scheduled_emails: number[] }>;
  /** Unpaid orders (at most one row per project and order id), by orderKey. */
  insertUnpaidOrders(db: Executor, orders: (NewUnpaidOrder & { now: number })[]): Promise<Map<string, StoredOrder>>;
  /** The e-mails, event rows and idempotency records; returns how many records were stored. */
  writeAccepted(db: Executor, rows: AcceptedRows): Promise<number>;
}

const postgresAcceptStatements: AcceptStatements = {
  upsertContacts: upsertContactsMany,
  reserveIds,
  insertUnpaidOrders: insertUnpaidOrdersMany,
  writeAccepted: insertAcceptedMany,
};

export const acceptStatements = (dialect: Dialect): AcceptStatements =>
  dialect === 'postgres' ? postgresAcceptStatements : sqliteAcceptStatements;
