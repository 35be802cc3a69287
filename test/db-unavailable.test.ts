// Which errors mean "the database is away" (issue 34): those are answered 503 with Retry-After and make a
// worker back off; every other database error still says something about the request or the code.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDatabaseUnavailable } from '../src/db/unavailable.js';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it('knows the ways PostgreSQL and SQLite say they cannot be reached or written', () => {
    for (const e of [
      coded('57P01', 'terminating connection due to administrator command'),
      coded('57P03', 'the database system is starting up'),
      coded('08006'),
      coded('53300', 'too many connections'),
      coded('ECONNREFUSED'),
      coded('ECONNRESET'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      coded('SQLITE_FULL', 'database or disk is full'),
      coded('SQLITE_IOERR_WRITE'),
      coded('SQLITE_BUSY', 'database is locked'),
      new Error('wrapped', { cause: coded('SQLITE_FULL') }),
    ])
      assert.equal(isDatabaseUnavailable(e), true, `${(e as { code?: string }).code ?? e.message}`);
  });

  it('leaves the errors of a request or of the code alone', () => {
    for (const e of [
      coded('23505', 'duplicate key value'),
      coded('42P01', 'relation does not exist'),
      coded('SQLITE_CONSTRAINT_UNIQUE'),
      coded('SQLITE_ERROR', 'no such table'),
      new Error('cannot rollback - no transaction is active'),
      new TypeError('x is undefined'),
      null,
      'text',
    ])
      assert.equal(isDatabaseUnavailable(e), false, String(e));
  });
});
