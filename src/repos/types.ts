import type { Kysely } from 'kysely';
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

export function decodeCursor(cursor: string | undefined): number | null {
  if (!cursor) return null;
  const m = /^id:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  return m ? Number(m[1]) : null;
}
