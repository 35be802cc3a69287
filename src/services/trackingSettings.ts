// A project's tracking settings as the admin API reads and changes them (SPEC §17). Stored as one JSON
// column (projects.tracking); the defaults, both switches on and no UTM, hold while it is null.
import type { Static } from 'typebox';
import { projectTracking, type StoredTracking } from '../delivery/tracking.js';
import type { TrackingSwitches, Utm } from '../schemas/admin.js';

export function trackingView(stored: string | null) {
  const t = projectTracking(stored);
  return { tracking: { opens: t.opens, clicks: t.clicks }, utm: t.utm };
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
  };
  return JSON.stringify(next);
}
