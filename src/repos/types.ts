import { sql, type Kysely, type RawBuilder } from 'kysely';
import { validationError } from '../errors.js';
import type { Database } from '../db/schema.js';

/** A connection or an open transaction: repositories work inside whatever the caller started. */
export type Executor = Kysely<Database>;

export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export const iso = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();

/** Opaque keyset cursor over a descending or ascending id. */
export function encodeCursor(id: number): string {
  return Buffer.from(`id:${id}`).toString('base64url');
}

/**
 * The id a cursor stands for; null without one. A cursor this service did not give out (or one that
 * decodes to an id no row can have) is refused, rather than silently starting again from the first page.
 */
export function decodeCursor(cursor: string | undefined): number | null {
  if (!cursor) return null;
  const m = /^id:([1-9]\d{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  const id = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(id)) {
    throw validationError(
      { reason: 'cursor_invalid' },
      {
        invalid_fields: { 'querystring.cursor': 'is not a cursor from a previous page' },
      },
    );
  }
  return id;
}

/**
 * Sum of an amount column (hundredths) that cannot overflow: `* 1.0` makes it numeric on PostgreSQL
 * (exact, unbounded) and floating point on SQLite, whose integer sum() raises an error past 2^63
 * (a float is exact to 2^53 hundredths, 90 trillion currency units). Null when there are no amounts.
 */
export function sumMinor(column: RawBuilder<unknown>): RawBuilder<number | null> {
  return sql<number | null>`sum(${column} * 1.0)`;
}

/**
 * A list's project filter: one project, or the several an administrator may see (SPEC §14). Queried as
 * `=` for one (the plan and SQL stay as before) and `in` for several; none matches no row.
 */
export type ProjectFilter = number | readonly number[];
const idList = (ids: readonly number[]): number[] => (ids.length ? [...ids] : [-1]);

/** The operator and operand of a ProjectFilter: `q.where('t.project_id', ...byProject(filter))`. */
export const byProject = (f: ProjectFilter): ['=' | 'in', number | number[]] =>
  typeof f === 'number' ? ['=', f] : ['in', idList(f)];
