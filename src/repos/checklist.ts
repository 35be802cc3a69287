// What the first-run checklist counts in one project (issue 28): each a small indexed count.
import { SENT_STATUSES } from '../domain/statuses.js';
import type { Executor } from './types.js';

const count = async (q: { executeTakeFirst(): Promise<{ n: number | string | bigint } | undefined> }) =>
  Number((await q.executeTakeFirst())?.n ?? 0);

export async function checklistCounts(db: Executor, projectId: number) {
  const [templates, routes, delivery, testSent] = await Promise.all([
    count(
      db
        .selectFrom('templates')
        .select((e) => e.fn.countAll<number>().as('n'))
        .where('project_id', '=', projectId),
    ),
    count(
      db
        .selectFrom('routes')
        .select((e) => e.fn.countAll<number>().as('n'))
        .where('project_id', '=', projectId),
    ),
    count(
      db
        .selectFrom('project_delivery')
        .select((e) => e.fn.countAll<number>().as('n'))
        .where('project_id', '=', projectId),
    ),
    count(
      db
        .selectFrom('scheduled_emails')
        .select((e) => e.fn.countAll<number>().as('n'))
        .where('project_id', '=', projectId)
        .where('is_test', '=', 1)
        .where('status', 'in', [...SENT_STATUSES]),
    ),
  ]);
  return { templates, routes, delivery, testSent };
}
