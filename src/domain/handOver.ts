// The hand-over rule (issue 30): whether a claimed e-mail may be handed to the relay now. Every reason an
// e-mail must not go is decided here and nowhere else, at claim (on what the batch read) and again at
// hand-over (on one read made after the e-mail's row is locked: repos/handOver.ts readHandOverFacts), so a
// stop that committed before the hand-over is always seen. A new stop (a withdrawn topic, a consent) is
// one more fact and one more branch here.
import type { ContactStatus, EmailKind } from './statuses.js';
import { pausedByMarketingStop } from './bounces.js';
import { suppressionReason } from './suppression.js';

/** What the hand-over decision reads about one claimed e-mail. */
export interface HandOverFacts {
  kind: EmailKind;
  /** The contact's status; null when the contact no longer exists. */
  contactStatus: ContactStatus | null;
  /** The e-mail's order is paid (only cart e-mails are stopped by it). Unknown at claim: false. */
  orderPaid: boolean;
  /** The project's marketing is paused by its complaint rate (issue 14). */
  marketingPaused: boolean;
  /**
   * Why the e-mail's consent topic stops it (SPEC §18: the contact left the topic, or a topic that needs
   * consent has no grant), as decided by domain/consent.ts topicStop; null: it may go.
   */
  topicStop: string | null;
}

/** The note a purchase writes on the cart e-mails it stops (domain/emailReason.ts reads it back). */
export const ORDER_PAID_NOTE = 'order paid';

export type HandOverVerdict =
  | { go: true }
  /** Stopped for good: the purchase's cancellation (a worker that found the order paid writes it too). */
  | { go: false; stop: 'cancelled'; note: string }
  /** The contact may not receive this kind of e-mail (SPEC §4): suppressed, with the reason. */
  | { go: false; stop: 'suppressed'; note: string }
  /** Waits, not lost: a paused project's marketing goes on when an administrator resumes it. */
  | { go: false; stop: 'paused' }
  /** The contact is gone: nothing can be sent. */
  | { go: false; stop: 'failed'; note: string };

export function handOverVerdict(f: HandOverFacts): HandOverVerdict {
  if (f.contactStatus === null) return { go: false, stop: 'failed', note: 'contact no longer exists' };
  if (f.kind === 'cart' && f.orderPaid) return { go: false, stop: 'cancelled', note: ORDER_PAID_NOTE };
  // Campaigns and cart chains wait while the project is paused (complaints); transactional mail goes on.
  if (f.marketingPaused && pausedByMarketingStop(f.kind)) return { go: false, stop: 'paused' };
  const reason = suppressionReason(f.contactStatus, f.kind) ?? f.topicStop;
  if (reason) return { go: false, stop: 'suppressed', note: reason };
  return { go: true };
}
