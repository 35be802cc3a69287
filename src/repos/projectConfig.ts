// Per-project configuration that the cart and purchase logic reads: course categories, paid-order
// address books per cart type, sequences and the cart chain chosen per cart type.
import { parseJson, type Executor } from './types.js';

export interface CourseCategory {
  id: string;
  list_id: number;
  slug: string;
  title: string;
}

export async function getCourseCategories(db: Executor, projectId: number): Promise<CourseCategory[]> {
  const rows = await db.selectFrom('course_categories').selectAll().where('project_id', '=', projectId).execute();
  return rows
    .map((r) => ({ id: r.category_id, list_id: r.list_id, slug: r.slug, title: r.title }))
    .sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }));
}

export async function findCourseCategory(
  db: Executor,
  projectId: number,
  id: string,
): Promise<CourseCategory | undefined> {
  const r = await db
    .selectFrom('course_categories')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('category_id', '=', id)
    .executeTakeFirst();
  return r && { id: r.category_id, list_id: r.list_id, slug: r.slug, title: r.title };
}

export async function replaceCourseCategories(db: Executor, projectId: number, cats: CourseCategory[]): Promise<void> {
  await db.deleteFrom('course_categories').where('project_id', '=', projectId).execute();
  if (cats.length) {
    await db
      .insertInto('course_categories')
      .values(
        cats.map((c) => ({
          project_id: projectId,
          category_id: c.id,
          list_id: c.list_id,
          slug: c.slug,
          title: c.title,
        })),
      )
      .execute();
  }
}

export async function getPaidLists(db: Executor, projectId: number): Promise<Record<string, number>> {
  const rows = await db.selectFrom('paid_lists').selectAll().where('project_id', '=', projectId).execute();
  return Object.fromEntries(rows.map((r) => [r.cart_type, r.list_id]));
}

export async function replacePaidLists(db: Executor, projectId: number, lists: Record<string, number>): Promise<void> {
  await db.deleteFrom('paid_lists').where('project_id', '=', projectId).execute();
  const rows = Object.entries(lists).map(([cart_type, list_id]) => ({ project_id: projectId, cart_type, list_id }));
  if (rows.length) await db.insertInto('paid_lists').values(rows).execute();
}

export interface SequenceStep {
  template_id: number;
  delay_minutes: number;
}

export interface Sequence {
  id: number;
  project_id: number;
  name: string;
  steps: SequenceStep[];
}

export async function insertSequence(
  db: Executor,
  projectId: number,
  name: string,
  steps: SequenceStep[],
  now: number,
): Promise<number> {
  const row = await db
    .insertInto('sequences')
    .values({ project_id: projectId, name, steps: JSON.stringify(steps), created_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function listSequences(db: Executor, projectId: number): Promise<Sequence[]> {
  const rows = await db.selectFrom('sequences').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  return rows.map((r) => ({
    id: r.id,
    project_id: r.project_id,
    name: r.name,
    steps: parseJson<SequenceStep[]>(r.steps, []),
  }));
}

/** The sequence a project chose as its cart chain for a cart type, if it replaced the default. */
export async function cartChainSequence(
  db: Executor,
  projectId: number,
  cartType: string,
): Promise<Sequence | undefined> {
  const r = await db
    .selectFrom('cart_chains')
    .innerJoin('sequences', 'sequences.id', 'cart_chains.sequence_id')
    .selectAll('sequences')
    .where('cart_chains.project_id', '=', projectId)
    .where('cart_chains.cart_type', '=', cartType)
    .executeTakeFirst();
  return r && { id: r.id, project_id: r.project_id, name: r.name, steps: parseJson<SequenceStep[]>(r.steps, []) };
}

export async function getCartChains(db: Executor, projectId: number): Promise<Record<string, number>> {
  const rows = await db.selectFrom('cart_chains').selectAll().where('project_id', '=', projectId).execute();
  return Object.fromEntries(rows.map((r) => [r.cart_type, r.sequence_id]));
}

export async function replaceCartChains(
  db: Executor,
  projectId: number,
  chains: Record<string, number>,
): Promise<void> {
  await db.deleteFrom('cart_chains').where('project_id', '=', projectId).execute();
  const rows = Object.entries(chains).map(([cart_type, sequence_id]) => ({
    project_id: projectId,
    cart_type,
    sequence_id,
  }));
  if (rows.length) await db.insertInto('cart_chains').values(rows).execute();
}
