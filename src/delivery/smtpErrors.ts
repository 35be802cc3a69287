// What a failed send means for the e-mail (SPEC §8): try again later, give up, or give up and mark the
// address invalid. Input is whatever nodemailer (or a socket) threw.

export interface SmtpFailure {
  transient: boolean;
  /** A permanent rejection of the recipient address itself (5.1.1 and the like): contact -> invalid. */
  recipientInvalid: boolean;
  responseCode: number | null;
  /** RFC 3463 enhanced status, e.g. "5.1.1", when the server sent one. */
  enhanced: string | null;
  /** One line for `last_error`: the server's reply when there is one, else the error. */
  message: string;
}

// Errors about the message or envelope itself: sending the same thing again cannot succeed. Everything
// else (ECONNREFUSED, ETIMEDOUT, ECONNRESET, ESOCKET, EDNS, ...) is a connection-level problem where the
// message never got a verdict, so it is tried again. EAUTH and ETLS are our configuration, not the
// recipient's fault: retrying gives an operator time to fix it.
// ESMTPUTF8 is ours (smtputf8.ts): the relay cannot carry an address with a non-ASCII local part.
const PERMANENT_CODES = new Set([
  'EENVELOPE',
  'EMESSAGE',
  'ECONFIG',
  'EFILEACCESS',
  'EURLACCESS',
  'EMAXRECIPIENTS',
  'ESMTPUTF8',
]);

// 5.1.x subjects about the destination address (5.1.7/5.1.8 are about the sender, 5.1.4/5/9 are not a
// verdict on the mailbox).
const RECIPIENT_DETAILS = new Set(['1', '2', '3', '6', '10']);
const RECIPIENT_TEXT =
  /\b(no such (user|mailbox|recipient|address)|(user|mailbox|recipient|address|account)\b[^.]{0,40}\b(unknown|not found|does not exist|doesn't exist|invalid|disabled|unavailable)|(unknown|invalid) (user|recipient|mailbox|address))\b/i;

interface NodemailerLikeError {
  code?: unknown;
  originalCode?: unknown;
  responseCode?: unknown;
  response?: unknown;
  command?: unknown;
  message?: unknown;
}

function oneLine(s: string, max = 1000): string {
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function classifySmtpError(err: unknown): SmtpFailure {
  const e: NodemailerLikeError = typeof err === 'object' && err !== null ? err : { message: String(err) };
  const code = typeof e.code === 'string' ? e.code : null;
  const originalCode = typeof e.originalCode === 'string' ? e.originalCode : null;
  const response = typeof e.response === 'string' ? e.response : null;
  const command = typeof e.command === 'string' ? e.command.toUpperCase() : null;
  let responseCode = typeof e.responseCode === 'number' ? e.responseCode : null;
  if (responseCode === null && response) {
    const m = /^(\d{3})/.exec(response);
    if (m) responseCode = Number(m[1]);
  }
  const enhancedMatch = response ? /^\d{3}[ -](\d\.\d{1,3}\.\d{1,3})\b/.exec(response) : null;
  const enhanced = enhancedMatch ? enhancedMatch[1] : null;
  const errMessage = typeof e.message === 'string' ? e.message : String(err);

  const codes = [code, originalCode].filter((c): c is string => c !== null);
  const label = codes.length ? `${[...new Set(codes)].join('/')}: ` : '';
  const message = oneLine(response ? `${command ? `${command}: ` : ''}${response}` : `${label}${errMessage}`);

  if (responseCode !== null && responseCode >= 400 && responseCode < 600) {
    // 503 is "bad sequence of commands": a protocol hiccup, not a verdict on the message (nodemailer
    // treats it the same way).
    const transient = responseCode < 500 || responseCode === 503;
    let recipientInvalid = false;
    if (!transient && command !== 'MAIL FROM') {
      if (enhanced) {
        const [cls, subject, detail] = enhanced.split('.');
        recipientInvalid =
          cls === '5' &&
          subject === '1' &&
          (RECIPIENT_DETAILS.has(detail) || (detail === '0' && command === 'RCPT TO'));
      } else {
        recipientInvalid = [550, 551, 553].includes(responseCode) && RECIPIENT_TEXT.test(response ?? errMessage);
      }
    }
    return { transient, recipientInvalid, responseCode, enhanced, message };
  }
  // Nodemailer refuses a syntactically impossible address before talking to the server.
  if (code === 'EENVELOPE' && /^Invalid recipient/i.test(errMessage)) {
    return { transient: false, recipientInvalid: true, responseCode, enhanced, message };
  }
  // Anything unknown counts as transient: retries are bounded, so an error we do not recognise costs a
  // few attempts rather than a lost e-mail.
  const transient = !codes.some((c) => PERMANENT_CODES.has(c));
  return { transient, recipientInvalid: false, responseCode, enhanced, message };
}

export interface RetryPolicy {
  /**
   * A ceiling on attempts that reached a relay, or null (the default): no ceiling. A temporary failure is
   * retried until the e-mail has waited `giveUpAfterMs` (SPEC §20), however many attempts that takes.
   */
  maxAttempts: number | null;
  /** SEND_GIVE_UP_AFTER: how long an e-mail may wait for its relay before it ends `failed`, `expired`. */
  giveUpAfterMs: number;
  baseMs: number;
  capMs: number;
}

function envInt(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return def;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max)
    throw new Error(`${name} must be a whole number between ${min} and ${max}, got "${raw}"`);
  return n;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration such as `72h`, `90m`, `3d`, `45s` or `500ms`; a bare number is milliseconds, as in the
 * other *_MS settings.
 */
export function envDuration(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return def;
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(raw);
  const n = m ? Number(m[1]) * UNIT_MS[m[2] ?? 'ms'] : NaN;
  if (!m || n < min || n > max)
    throw new Error(`${name} must be a duration such as 72h, 30m or 3d (at least 1s, at most 365d), got "${raw}"`);
  return n;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: null,
  giveUpAfterMs: 72 * 3_600_000,
  baseMs: 30_000,
  capMs: 3_600_000,
};

/**
 * Env: SEND_GIVE_UP_AFTER, SEND_BACKOFF_BASE_MS, SEND_BACKOFF_CAP_MS, and SEND_MAX_ATTEMPTS only as an
 * explicit ceiling (unset: none) (read by config.ts, once).
 */
export function retryPolicyFromEnv(env: NodeJS.ProcessEnv): RetryPolicy {
  const d = DEFAULT_RETRY_POLICY;
  return {
    maxAttempts: env.SEND_MAX_ATTEMPTS?.trim() ? envInt(env, 'SEND_MAX_ATTEMPTS', 0, 1, 100_000) : null,
    giveUpAfterMs: envDuration(env, 'SEND_GIVE_UP_AFTER', d.giveUpAfterMs, 1000, 365 * 86_400_000),
    baseMs: envInt(env, 'SEND_BACKOFF_BASE_MS', d.baseMs, 1, 86_400_000),
    capMs: envInt(env, 'SEND_BACKOFF_CAP_MS', d.capMs, 1, 7 * 86_400_000),
  };
}

/**
 * Delay before the next attempt after `attemptsSoFar` failed ones: exponential with full jitter
 * (uniform in [0, min(cap, base * 2^(n-1))]), which spreads a burst of failures against one server
 * instead of retrying them in lockstep.
 */
export function backoffDelay(
  attemptsSoFar: number,
  policy: Pick<RetryPolicy, 'baseMs' | 'capMs'>,
  random: () => number = Math.random,
): number {
  const exp = Math.min(Math.max(attemptsSoFar, 1) - 1, 40);
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** exp);
  return Math.max(1, Math.round(random() * ceiling));
}
