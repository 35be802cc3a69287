// Yes/no columns are INTEGER 0/1 on both engines (SQLite has no boolean type, and one column type keeps
// the migrations and queries alike). Only the data layer (src/db, src/repos) sees the 0/1: it writes with
// toFlag and reads with fromFlag, and everything above it gets and gives real booleans.

/** What a flag column holds. */
export type Flag = 0 | 1;

export const toFlag = (b: boolean): Flag => (b ? 1 : 0);

/**
 * A stored flag as a boolean, whatever the driver returned: a number (SQLite, PostgreSQL integer), a
 * bigint (SQLite with safe integers), the text '1' (PostgreSQL aggregates and JSON) or a real boolean.
 */
export function fromFlag(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return Number(v) === 1;
  if (typeof v === 'string') return v === '1';
  return false;
}

/** A row as the repositories give and take it: the named flag columns as booleans (optional stays optional). */
export type WithBooleans<Row, K extends keyof Row> = { [P in keyof Row]: P extends K ? boolean : Row[P] };
