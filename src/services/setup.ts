// First run (SPEC §14): with no account and no ADMIN_TOKEN, `serve` prints a one-time setup link. The
// code lives only in the memory of the process that printed it (so only who sees that console can use
// it), as a SHA-256, for one hour, and works once.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.js';
import { countUsers } from '../repos/adminUsers.js';
import { ensureOwner, type UserView } from './accounts.js';
import type { Deps } from './context.js';

export const SETUP_CODE_TTL_MS = 60 * 60 * 1000;
const digest = (s: string) => createHash('sha256').update(s).digest();

export class SetupCode {
  private hash: Buffer | null = null;
  private expiresAt = 0;
  /** An attempt with the code is under way: it holds the code until it succeeds (burn) or fails (release). */
  private busy = false;

  /** A fresh code (the previous one, if any, stops working). */
  issue(now: number): string {
    const code = randomBytes(24).toString('base64url');
    this.hash = digest(code);
    this.expiresAt = now + SETUP_CODE_TTL_MS;
    return code;
  }

  valid(code: string, now: number): boolean {
    return this.hash !== null && now < this.expiresAt && timingSafeEqual(digest(code), this.hash);
  }

  /**
   * Holds a valid code for one attempt: creating the owner awaits (scrypt, the database), and a second
   * request carrying the code meanwhile must not make a second owner. False when invalid or held.
   */
  claim(code: string, now: number): boolean {
    if (this.busy || !this.valid(code, now)) return false;
    this.busy = true;
    return true;
  }

  release(): void {
    this.busy = false;
  }

  burn(): void {
    this.hash = null;
  }
}

/** Does this installation need its first owner (no account, no root token)? */
export async function needsSetup(deps: Deps): Promise<boolean> {
  return !deps.config.adminToken && (await countUsers(deps.db.db)) === 0;
}

export async function completeSetup(
  deps: Deps,
  address: string | null,
  input: { code: string; email: string; name?: string; password: string },
): Promise<UserView> {
  const now = deps.clock.now();
  const setup = deps.setup;
  if (!setup?.claim(input.code, now)) {
    if (setup?.valid(input.code, now)) throw new AppError(409, 'conflict', { reason: 'setup_in_progress' });
    throw new AppError(404, 'not_found', { reason: 'setup_link_invalid' });
  }
  try {
    if ((await countUsers(deps.db.db)) > 0) {
      setup.burn();
      throw new AppError(409, 'conflict', { reason: 'owner_exists' });
    }
    const user = await ensureOwner(
      deps,
      { actor: input.email.trim().toLowerCase(), via: 'setup', address },
      { email: input.email, password: input.password, name: input.name },
      'create',
    );
    setup.burn();
    return user;
  } finally {
    setup.release();
  }
}
