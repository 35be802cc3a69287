// Who may receive which kind of e-mail (SPEC §4). One rule for the delivery worker, which checks it at
// send time, and for campaign creation, whose set-based INSERT (repos/campaigns.ts) is derived from it
// and tested against it for every status and kind.
import { CONTACT_STATUSES, type ContactStatus, type EmailKind } from './statuses.js';

/** Why an e-mail of this kind must not go to a contact with this status, or null when it may. */
export function suppressionReason(status: ContactStatus, kind: EmailKind): string | null {
  switch (status) {
    case 'active':
      return null;
    case 'invalid':
      return 'suppressed: the address is invalid';
    case 'admin_blocked':
      return 'suppressed: the contact is blocked by an administrator';
    case 'unsubscribed':
      // An unsubscribed person still gets e-mails about their own order, course or document.
      return kind === 'transactional' ? null : 'suppressed: the contact unsubscribed';
  }
}

export function mayReceive(status: ContactStatus, kind: EmailKind): boolean {
  return suppressionReason(status, kind) === null;
}

/** The contact statuses that may receive an e-mail of this kind. */
export function receivingStatuses(kind: EmailKind): ContactStatus[] {
  return CONTACT_STATUSES.filter((s) => mayReceive(s, kind));
}
