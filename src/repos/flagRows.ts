// The rows with flag columns, converted between what the database stores (0/1) and what the repositories
// give and take (booleans): the one place each table's flags are named (db/flags.ts).
import type { Insertable, Selectable } from 'kysely';
import { fromFlag, toFlag } from '../db/flags.js';
import type {
  EmailRow,
  EventRow,
  EventsTable,
  NewEmail,
  NewEvent,
  Project,
  ProjectsTable,
  ScheduledEmailsTable,
  TemplateRow,
  TemplatesTable,
  TemplateVersionRow,
  TemplateVersionsTable,
} from '../db/schema.js';

export const projectFromRow = (r: Selectable<ProjectsTable>): Project => ({
  ...r,
  allow_private_webhooks: fromFlag(r.allow_private_webhooks),
  allow_private_relays: fromFlag(r.allow_private_relays),
});

export const templateFromRow = (r: Selectable<TemplatesTable>): TemplateRow => ({
  ...r,
  tracking: fromFlag(r.tracking),
});

export const versionFromRow = (r: Selectable<TemplateVersionsTable>): TemplateVersionRow => ({
  ...r,
  tracking: fromFlag(r.tracking),
});

export const eventFromRow = (r: Selectable<EventsTable>): EventRow => ({ ...r, accepted: fromFlag(r.accepted) });

export const eventToRow = (e: NewEvent): Insertable<EventsTable> => ({ ...e, accepted: toFlag(e.accepted) });

export const emailFromRow = (r: Selectable<ScheduledEmailsTable>): EmailRow => ({ ...r, is_test: fromFlag(r.is_test) });

export function emailToRow({ is_test, ...e }: NewEmail): Insertable<ScheduledEmailsTable> {
  return is_test === undefined ? e : { ...e, is_test: toFlag(is_test) };
}
