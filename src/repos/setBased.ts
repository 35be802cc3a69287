// Building blocks of the set-based statements (PostgreSQL) that write many requests' rows at once: one
// bound array per column, turned back into rows by unnest(), so a statement's text and its number of
// parameters do not depend on how many rows it carries.
import { sql, type RawBuilder } from 'kysely';
import { PREPARED } from '../db/index.js';
import type { Database } from '../db/schema.js';
import type { Executor } from './types.js';

type PgType = 'bigint' | 'integer' | 'text';

/** The columns of R written by a statement, with their PostgreSQL types, in statement order. */
type Columns<R> = { [K in keyof R & string]?: PgType };

/**
 * `unnest($1::bigint[], $2::text[], …) [with ordinality] as u(a, b, … [, ord])` over the rows' members
 * (absent ones are null). With ordinality, `u.ord` is the row's position (from 1) for an `order by`.
 */
export function unnest<R extends object>(
  rows: readonly R[],
  columns: Columns<R>,
  ordinality = false,
): RawBuilder<unknown> {
  const names = Object.keys(columns) as (keyof R & string)[];
  const arrays = names.map((n) => sql`${rows.map((r) => r[n] ?? null)}::${sql.raw(columns[n]!)}[]`);
  const aliases = sql.join([...names, ...(ordinality ? ['ord'] : [])].map((n) => sql.id(n)));
  return sql`unnest(${sql.join(arrays)})${sql.raw(ordinality ? ' with ordinality' : '')} as u(${aliases})`;
}

/** The column list `a, b, …` of the same columns, qualified by `u.` when given. */
export function columnList<R>(columns: Columns<R>, qualifier?: 'u'): RawBuilder<unknown> {
  return sql.join(Object.keys(columns).map((n) => (qualifier ? sql.id(qualifier, n) : sql.id(n))));
}

type SequencedTable = keyof Database & ('events' | 'scheduled_emails');

/**
 * Ids drawn ahead from the tables' sequences, in one round trip for all of them: rows written together
 * know their ids (and can refer to each other) before they are inserted.
 */
export async function reserveIds<T extends SequencedTable>(
  db: Executor,
  counts: Record<T, number>,
): Promise<Record<T, number[]>> {
  const tables = Object.keys(counts) as T[];
  const arrays = tables.map(
    (t) =>
      sql`array(select nextval(pg_get_serial_sequence(${t}, 'id')) from generate_series(1, ${counts[t]}::int)) as ${sql.id(t)}`,
  );
  const { rows } = await sql<Record<T, (string | number)[]>>`${sql.raw(PREPARED)}select ${sql.join(arrays)}`.execute(
    db,
  );
  return Object.fromEntries(tables.map((t) => [t, rows[0][t].map(Number)])) as Record<T, number[]>;
}
