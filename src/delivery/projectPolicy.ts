// What a project's own delivery settings change for one e-mail before it is sent (issue 13): the sender
// it goes out as, and whether its daily quota lets it go today.
import type { Project } from '../db/schema.js';
import { nextUtcDay, utcDay } from '../domain/delivery.js';
import { returnQuota, takeQuota } from '../repos/delivery.js';
import type { Executor } from '../repos/types.js';
import type { ProjectDelivery } from './router.js';

export function senderOf(project: Project, d: ProjectDelivery | null): Project {
  if (!d) return project;
  return {
    ...project,
    name: d.settings.from_name ?? project.name,
    from_email: d.settings.from_email ?? project.from_email,
  };
}

export type QuotaTake = { taken: true; day: string | null } | { taken: false; dueAt: number; reason: string };

/** Takes one unit of today's quota (UTC); test sends and projects without a quota take none. */
export async function takeDailyQuota(
  db: Executor,
  projectId: number,
  d: ProjectDelivery | null,
  isTest: boolean,
  now: number,
): Promise<QuotaTake> {
  const quota = isTest ? null : (d?.settings.daily_quota ?? null);
  if (quota === null) return { taken: true, day: null };
  const day = utcDay(now);
  if (await takeQuota(db, projectId, day, quota)) return { taken: true, day };
  const dueAt = nextUtcDay(now);
  return {
    taken: false,
    dueAt,
    reason: `quota: the project's daily quota of ${quota} e-mails is used up; waits until ${new Date(dueAt).toISOString()}`,
  };
}

/** The unit goes back when the send it was taken for did not go out. */
export async function giveBackQuota(db: Executor, projectId: number, take: QuotaTake): Promise<void> {
  if (take.taken && take.day !== null) await returnQuota(db, projectId, take.day);
}
