// A project's tracking settings as the admin API reads and changes them (SPEC §17). Stored as one JSON
// column (projects.tracking); the defaults, both switches on and no UTM, hold while it is null. New
// projects store NEW_PROJECT_TRACKING (no opens in transactional e-mails, SPEC §22).
import type { Static } from 'typebox';
import { projectTracking, type StoredTracking } from '../delivery/tracking.js';
import type { TrackingSwitches, Utm } from '../schemas/admin.js';

export function trackingView(stored: string | null) {
  const t = projectTracking(stored);
  return {
    tracking: { opens: t.opens, clicks: t.clicks, transactional_opens: t.transactional_opens },
    utm: t.utm,
  };
}

/** The column after a PATCH: members given replace those stored, absent ones stay; unchanged: the same text. */
export function mergeTracking(
  stored: string | null,
  switches: Static<typeof TrackingSwitches> | undefined,
  utm: Static<typeof Utm> | null | undefined,
): string | null | undefined {
  if (switches === undefined && utm === undefined) return undefined;
  const t = projectTracking(stored);
  const next: StoredTracking = {
    opens: switches?.opens ?? t.opens,
    clicks: switches?.clicks ?? t.clicks,
    utm: utm === undefined ? t.utm : utm,
    transactional_opens: switches?.transactional_opens ?? t.transactional_opens,
  };
  return JSON.stringify(next);
}
