// Admin UI sessions (SPEC §6, §14): the browser logs in once with an account's e-mail and password (or
// the root ADMIN_TOKEN, or a personal token) and then carries an HttpOnly session cookie bound to the
// account; what the session may do is the account's role (http/plugins/access.ts), read at every request.
//
// - Sessions live in the database (services/sessions.ts: keyed by the SHA-256 of the cookie token), so
//   logout and expiry are real and every process of an installation agrees. Lifetime 12 h (a working
//   day), ended sooner after 2 h without a request.
// - A root onRequest hook turns a valid cookie into `req.adminSessionRow`, which the access hook
//   (plugins/access.ts) accepts in place of a bearer token. A request that carries an
//   Authorization header is left to that header alone: API clients never depend on cookies.
// - CSRF: every unsafe request authenticated by the cookie must echo the session's CSRF token in
//   X-CSRF-Token (and, when the browser names an Origin, it must be ours). SameSite=Strict already
//   keeps the cookie off cross-site requests; the token covers browsers and proxies that get that wrong.
// - Failed logins are counted per account and per client address in the database, so every process counts
//   the same attempts; no installation-wide cap (services/loginThrottle.ts, SPEC §21).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../domain/access.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, validationError } from '../../errors.js';
import { AccountInfo } from '../../schemas/accounts.js';
import { accountInfo, badTokenMessage, checkLogin, principalOf, principalOfBearer } from '../../services/accounts.js';
import { errors } from '../../schemas/common.js';
import type { Deps } from '../../services/context.js';
import { loginAttempt } from '../../services/loginThrottle.js';
import {
  endSession,
  liveSession,
  SESSION_IDLE_MS,
  SESSION_LIFETIME_MS,
  startSession,
  type SessionRow,
} from '../../services/sessions.js';

export const CSRF_HEADER = 'x-csrf-token';
export const SESSION_PATH = '/api/admin/session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

declare module 'fastify' {
  interface FastifyRequest {
    /** The live session of the request's cookie (access check, session routes). */
    adminSessionRow?: SessionRow;
  }
}

const sha256 = (s: string) => createHash('sha256').update(s).digest();
const sameText = (a: string, b: string) => timingSafeEqual(sha256(a), sha256(b));

function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Only the admin and legacy API is reachable with the session; the gateway and unsubscribe pages never are. */
function usesSession(url: string): boolean {
  const path = url.split('?')[0];
  return path.startsWith('/api/') && !path.startsWith('/api/scoped/');
}

export async function registerSessions(root: FastifyInstance, deps: Deps): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const publicUrl = new URL(deps.config.publicUrl);
  const secure = publicUrl.protocol === 'https:';
  // __Host- makes the browser refuse the cookie unless it is Secure, host-only and Path=/.
  const cookieName = secure ? '__Host-egw_session' : 'egw_session';

  const cookie = (value: string, maxAgeSeconds: number) =>
    `${cookieName}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;

  const sameOrigin = (req: FastifyRequest): boolean => {
    const origin = req.headers.origin;
    if (!origin) return true; // not sent by every browser on every request; the CSRF token still decides
    return origin === publicUrl.origin || origin === `${req.protocol}://${req.host}`;
  };

  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (!usesSession(req.url) || req.headers.authorization !== undefined) return;
    // Logging in is not authenticated by the cookie: a stale or foreign one must not get in its way.
    if (req.method === 'POST' && req.url.split('?')[0] === SESSION_PATH) return;
    const row = await liveSession(deps, readCookie(req.headers.cookie, cookieName));
    if (!row) return;
    if (!SAFE_METHODS.has(req.method)) {
      const given = req.headers[CSRF_HEADER];
      if (typeof given !== 'string' || !sameText(given, row.csrf_token) || !sameOrigin(req)) {
        throw new AppError(403, 'csrf_failed', { reason: 'csrf_missing' });
      }
    }
    req.adminSessionRow = row;
  });

  const SessionInfo = Type.Object({
    ok: Type.Literal(true),
    csrf_token: Type.String({ description: 'send it as X-CSRF-Token with every change made with this session' }),
    expires_at: Type.String({ description: 'the latest the session can last (ISO 8601)' }),
    idle_timeout_seconds: Type.Integer(),
    account: AccountInfo,
  });
  const info = async (row: SessionRow, p: Principal) => ({
    ok: true as const,
    csrf_token: row.csrf_token,
    expires_at: new Date(row.expires_at).toISOString(),
    idle_timeout_seconds: SESSION_IDLE_MS / 1000,
    account: await accountInfo(deps, p),
  });
  const tags = ['admin'];
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');
  const wrongLogin = () => new AppError(401, 'unauthorized', { reason: 'login_wrong' });

  app.post(
    SESSION_PATH,
    {
      config: { access: { public: true } },
      schema: {
        tags,
        summary:
          'Admin UI login with {email, password}, or {token} (the root ADMIN_TOKEN or a personal token): sets the session cookie; rate limited per address and per account',
        body: Type.Object(
          {
            email: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
            password: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
            token: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: SessionInfo, ...errors(400, 401, 403, 415, 422, 429, 500) },
      },
    },
    async (req, reply) => {
      const { email, password, token } = req.body;
      const account = email?.trim().toLowerCase();
      const ticket = await loginAttempt(deps, req.ip, account);
      const wait = ticket.wait;
      if (wait > 0) {
        throw new AppError(
          429,
          'rate_limited',
          { reason: 'login_too_many', params: { seconds: wait } },
          { retry_after_seconds: wait },
          { 'retry-after': String(wait) },
        );
      }
      let principal: Principal | null;
      // A wrong password or token stays counted; any other answer takes the attempt back.
      let failed = false;
      try {
        if (!sameOrigin(req)) throw new AppError(403, 'csrf_failed', { reason: 'login_elsewhere' });
        if (token !== undefined && account === undefined && password === undefined) {
          principal = await principalOfBearer(deps, token.trim());
          if (!principal) {
            failed = true;
            req.log.warn({ ip: req.ip }, 'admin UI login refused');
            throw new AppError(401, 'unauthorized', badTokenMessage(deps));
          }
          if (principal.readOnly)
            throw new AppError(
              403,
              'permission_denied',
              { reason: 'read_only_token_ui' },
              {
                permission: 'write',
              },
            );
        } else if (account !== undefined && password !== undefined && token === undefined) {
          const user = await checkLogin(deps, account, password);
          principal = user && (await principalOf(deps, user.id, 'session'));
          if (!principal) {
            failed = true;
            req.log.warn({ ip: req.ip }, 'admin UI login refused');
            throw wrongLogin();
          }
        } else {
          throw validationError(
            { reason: 'login_body' },
            {
              missing_fields: token === undefined ? [email === undefined ? 'email' : 'password'] : [],
            },
          );
        }
      } finally {
        if (!failed) await ticket.release();
      }
      // A fresh token at every login (no session fixation); the previous session of this browser ends.
      const { token: secret, row } = await startSession(
        deps,
        readCookie(req.headers.cookie, cookieName),
        principal.userId,
      );
      req.log.info({ ip: req.ip, account: principal.userId }, 'admin UI login');
      noStore(reply).header('set-cookie', cookie(secret, SESSION_LIFETIME_MS / 1000));
      return info(row, { ...principal, sessionId: row.id });
    },
  );

  app.get(
    SESSION_PATH,
    {
      config: { access: { self: true } },
      schema: {
        tags,
        summary: 'The current admin UI session, its CSRF token and account (session cookie only)',
        response: { 200: SessionInfo, ...errors(401, 500) },
      },
    },
    async (req, reply) => {
      if (!req.adminSessionRow || !req.principal)
        throw new AppError(401, 'unauthorized', 'Not logged in, or the session has expired');
      noStore(reply);
      return info(req.adminSessionRow, req.principal);
    },
  );

  app.delete(
    SESSION_PATH,
    {
      config: { access: { public: true } },
      schema: {
        tags,
        summary: 'Admin UI logout: ends the session (needs X-CSRF-Token)',
        response: { 200: Type.Object({ ok: Type.Literal(true) }), ...errors(403, 500) },
      },
    },
    async (req, reply) => {
      if (req.adminSessionRow) await endSession(deps, req.adminSessionRow);
      noStore(reply).header('set-cookie', cookie('', 0));
      return { ok: true as const };
    },
  );
}
