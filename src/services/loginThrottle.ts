// Login throttling (SPEC §21 "Logins"): failed attempts are counted per account and per source address,
// in the database (repos/loginThrottle.ts), so every API process of an installation agrees.
//
// - An address with LOGIN_FAILURES_PER_ADDRESS failures in the window may not try again (any account,
//   the root token too) until the window ends.
// - An account with LOGIN_FAILURES_PER_ACCOUNT failures is locked, but only against addresses that have
//   failures of their own: a right password from an address without failures always gets in, whatever
//   others tried. There is no installation-wide counter, so no one can lock every login out.
// - Windows are LOGIN_WINDOW_MS (15 minutes) long: a lock ends by itself within 15 minutes, or when an
//   owner unlocks the account (POST /api/admin/users/{id}/unlock).
// An attempt is counted before the password is checked (so concurrent guesses cannot all slip in under the
// limit) and taken back when it was not a failure.
import { createHash } from 'node:crypto';
import { notFound } from '../errors.js';
import { findUser } from '../repos/adminUsers.js';
import { attemptsOf, countAttempt, forgetAttempts, uncountAttempt } from '../repos/loginThrottle.js';
import { audited, type AuditActor } from './audit.js';
import type { Deps } from './context.js';

export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
export const LOGIN_FAILURES_PER_ACCOUNT = 10;
export const LOGIN_FAILURES_PER_ADDRESS = 30;

export const accountKey = (email: string) =>
  `a:${createHash('sha256').update(email.trim().toLowerCase()).digest('hex')}`;
const addressKey = (ip: string) => `i:${ip}`;

export interface LoginTicket {
  /** Seconds to wait: the attempt is refused (and not counted). 0: go on and check the credentials. */
  wait: number;
  /** The attempt was not a failure: take it back. */
  release(): Promise<void>;
}

export async function loginAttempt(
  deps: Pick<Deps, 'db' | 'clock'>,
  ip: string,
  account?: string,
): Promise<LoginTicket> {
  const db = deps.db.db;
  const now = deps.clock.now();
  const counted: { key: string; window_start: number }[] = [];
  const release = async () => {
    for (const c of counted) await uncountAttempt(db, c.key, c.window_start);
  };
  const waitFor = (windowStart: number) => Math.max(1, Math.ceil((windowStart + LOGIN_WINDOW_MS - now) / 1000));

  const address = await countAttempt(db, addressKey(ip), now, LOGIN_WINDOW_MS);
  counted.push({ key: addressKey(ip), window_start: address.window_start });
  // Failures of this address before this attempt (and other attempts of it under way).
  const addressFailures = address.failures - 1;
  if (addressFailures >= LOGIN_FAILURES_PER_ADDRESS) {
    await release();
    return { wait: waitFor(address.window_start), release: async () => {} };
  }
  if (account !== undefined) {
    const key = accountKey(account);
    const acc = await countAttempt(db, key, now, LOGIN_WINDOW_MS);
    counted.push({ key, window_start: acc.window_start });
    if (acc.failures - 1 >= LOGIN_FAILURES_PER_ACCOUNT && addressFailures > 0) {
      await release();
      return { wait: waitFor(acc.window_start), release: async () => {} };
    }
  }
  let released = false;
  return {
    wait: 0,
    release: async () => {
      if (released) return;
      released = true;
      await release();
    },
  };
}

/** An owner's unlock (audited): the account's failures are forgotten; its next login is not throttled. */
export async function unlockUser(deps: Deps, who: AuditActor, id: number) {
  return audited(deps, who, async (trx, note) => {
    const u = await findUser(trx, id);
    if (!u) throw notFound(`Account ${id}`);
    const before = await attemptsOf(trx, accountKey(u.email));
    await forgetAttempts(trx, accountKey(u.email));
    note({
      action: 'user.unlock',
      target: `user:${id}`,
      before: { email: u.email, failures: before?.failures ?? 0 },
      after: { email: u.email, failures: 0 },
    });
    return { ok: true as const, id, email: u.email, failures_forgotten: before?.failures ?? 0 };
  });
}
