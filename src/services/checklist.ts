// The first-run checklist of a project (issue 28): project → template → routing → key → delivery → test
// e-mail, each step ticked from what the database holds, never from what the UI remembers.
import { CHECKLIST_STEPS, type ChecklistStep } from '../domain/statuses.js';
import { checklistCounts } from '../repos/checklist.js';
import { listKeys } from '../repos/keys.js';
import type { Deps } from './context.js';
import { requireProject } from './admin.js';

export async function checklist(deps: Deps, siteKey: string) {
  const db = deps.db.db;
  const project = await requireProject(db, siteKey);
  const [c, keys] = await Promise.all([checklistCounts(db, project.id), listKeys(db, project.id)]);
  // A key counts once it may send something: a key with no event and no cart type is refused every call.
  const usable = keys.filter(
    (k) =>
      k.status === 'active' &&
      ((k.rights.allowed_api_events ?? []).length > 0 || (k.rights.allowed_cart_types ?? []).length > 0),
  ).length;
  // The installation's SMTP_URL delivers for every project that has no relay of its own.
  const delivery = c.delivery > 0 || Boolean(deps.config.smtpUrl);
  const state: Record<ChecklistStep, { done: boolean; count: number }> = {
    project: { done: true, count: 1 },
    template: { done: c.templates > 0, count: c.templates },
    routing: { done: c.routes > 0, count: c.routes },
    key: { done: usable > 0, count: usable },
    delivery: { done: delivery, count: c.delivery },
    test_email: { done: c.testSent > 0, count: c.testSent },
  };
  const steps = CHECKLIST_STEPS.map((step) => ({ step, ...state[step] }));
  return { ok: true as const, site_key: project.site_key, complete: steps.every((s) => s.done), steps };
}
