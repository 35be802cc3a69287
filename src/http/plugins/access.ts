// Who may call which admin route (SPEC §14), declared per route and checked here, in one place.
//
// HOW TO ADD AN ADMIN ROUTE: give it `config: { access: {...} }` (domain/access.ts, RouteAccess):
//   { project: 'params.site_key', write: true }   acts on that project (also 'body.site_key', 'query.site_key')
//   { filter: 'query.site_key' }                   a list: optional site key; absent, pass scopeOf(req) to the service
//   { object: { kind: 'email', id: 'params.id' }, write: true }   an object by id: its project is looked up
//   { owner: true } / { self: true } / { public: true }
// A non-GET route that is not public must also say `write: true` or `write: false` (stores nothing).
// Every route under /api/ except /api/scoped/ must declare one: buildApp refuses to start otherwise
// (checkDeclaredAccess), and test/admin-roles.test.ts calls every such route as every role.
//
// The checks, in order:
// 1. onRequest: who is calling (bearer: root ADMIN_TOKEN or a personal token; else the session cookie)
//    -> 401 when nobody; owner-only routes -> 403 for others; `write` -> 403 `permission_denied` for
//    viewers and read-only tokens (a viewer may change nothing anywhere, so this tells nothing about
//    which projects exist).
// 2. preHandler (after validation, the body is known): the project named or owning the object must be
//    one the principal sees, else 404 exactly as for a project that does not exist.
// 3. The audit log: each change's service writes its row in the change's transaction, given
//    `auditActor(req)` (services/audit.ts `audited`); onSend flags a successful change that wrote none.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  accessProblem,
  isOwner,
  mayWrite,
  sees,
  ROOT,
  type Locator,
  type Principal,
  type RouteAccess,
} from '../../domain/access.js';
import { AppError, notFound } from '../../errors.js';
import { findProjectById, findProjectBySiteKey } from '../../repos/projects.js';
import { badTokenMessage, principalOf, principalOfBearer } from '../../services/accounts.js';
import { recordUnaudited, type AuditActor } from '../../services/audit.js';
import type { Deps } from '../../services/context.js';
import { projectOfObject } from '../../repos/access.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
  interface FastifyRequest {
    /** Who is calling an admin route; set before any admin handler runs. */
    principal?: Principal;
    /** The project the route acts on, once checked (for the audit log). */
    accessSiteKey?: string | null;
    accessTarget?: string | null;
    /** The project or object rule has been applied. */
    accessChecked?: boolean;
    /** The audit actor of this request (auditActor). */
    auditActor?: AuditActor;
  }
}

/** Admin and legacy routes: everything under /api/ but the gateway's /api/scoped/. */
export const isAdminPath = (url: string) => url.startsWith('/api/') && !url.startsWith('/api/scoped/');

export interface DeclaredRoute {
  method: string;
  url: string;
  access: RouteAccess;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every admin route with its access rule (the roles test calls each one as each role). */
    adminRoutes: DeclaredRoute[];
  }
}

/** Startup check: an admin route without a declared access rule stops buildApp. */
export function checkDeclaredAccess(app: FastifyInstance): void {
  const routes: DeclaredRoute[] = [];
  app.decorate('adminRoutes', routes);
  app.addHook('onRoute', (route) => {
    if (!isAdminPath(route.url)) return;
    const access = route.config?.access;
    for (const method of [route.method].flat()) {
      const problem = accessProblem(access, method);
      if (problem) throw new Error(`${method} ${route.url} ${problem} (see src/http/plugins/access.ts)`);
    }
    for (const method of [route.method].flat())
      if (method !== 'HEAD') routes.push({ method, url: route.url, access: access! });
  });
}

/** The projects a list must be limited to: null for all. */
export const scopeOf = (req: FastifyRequest): readonly number[] | null =>
  req.principal ? req.principal.projectIds : [];

/** Who the audit log names for this request's changes; one object per request (it notes `recorded`). */
export function auditActor(req: FastifyRequest): AuditActor {
  const p = req.principal;
  return (req.auditActor ??= {
    actor: p?.actor ?? 'anonymous',
    via: p?.via ?? 'session',
    address: req.ip,
    ...(p?.tokenId !== undefined ? { token: { id: p.tokenId, name: p.tokenName ?? '' } } : {}),
  });
}

const SITE_KEY_SHAPE = /^[A-Za-z0-9_.-]{1,100}$/;

function locate(req: FastifyRequest, at: Locator): unknown {
  const [part, name] = at.split('.', 2) as ['params' | 'query' | 'body', string];
  const holder = req[part] as Record<string, unknown> | undefined;
  return holder && typeof holder === 'object' ? holder[name] : undefined;
}

const denied = (message: string, permission: string) => new AppError(403, 'permission_denied', message, { permission });

/** For a member of a body only an owner may set, on a route a project administrator may otherwise use. */
export function requireOwner(req: FastifyRequest, what: string): void {
  if (!req.principal || !isOwner(req.principal))
    throw new AppError(403, 'permission_denied', { reason: 'owner_only', params: { what } }, { permission: 'owner' });
}

async function authenticate(deps: Deps, req: FastifyRequest): Promise<Principal> {
  // Without a root token the usual cause is a script still sending one: say so.
  const unauthorized = (message: string) =>
    new AppError(
      401,
      'unauthorized',
      deps.config.adminToken ? message : `${message} (ADMIN_TOKEN is not set: use an account or a personal token)`,
    );
  const h = req.headers.authorization;
  if (h !== undefined) {
    const m = /^Bearer\s+(.+)$/i.exec(h);
    if (!m) throw unauthorized('Send the token as Authorization: Bearer <token>');
    const p = await principalOfBearer(deps, m[1].trim());
    if (!p) throw new AppError(401, 'unauthorized', badTokenMessage(deps));
    return p;
  }
  const row = req.adminSessionRow;
  if (row) {
    // A session opened with the root token is the root; one of an account follows the account's state.
    const p =
      row.user_id === null || row.user_id === undefined
        ? { ...ROOT, via: 'session' as const, sessionId: row.id }
        : await principalOf(deps, Number(row.user_id), 'session', { sessionId: row.id });
    if (!p) throw unauthorized('This account is disabled');
    return p;
  }
  throw unauthorized('Log in, or send a token as Authorization: Bearer <token>');
}

export function registerAccess(app: FastifyInstance, deps: Deps): void {
  app.addHook('onRequest', async (req: FastifyRequest) => {
    const access = req.routeOptions.config.access;
    if (!access || access.public) return;
    const p = await authenticate(deps, req);
    req.principal = p;
    if (access.owner && p.role !== 'owner') throw denied('Only an owner may do this', 'owner');
    if (access.write && !mayWrite(p))
      throw denied(
        p.readOnly ? 'This token is read-only' : 'A viewer may read but not change anything',
        access.owner ? 'owner' : 'write',
      );
    if (access.owner && access.write && !isOwner(p)) throw denied('Only an owner may do this', 'owner');
  });

  // Before validation when the value is there (the body is parsed by then): a project the caller may
  // not see is 404 whatever else is wrong with the request. Checked again after validation when the
  // value was absent or unusable before it, so no route runs unchecked.
  const check = (final: boolean) => async (req: FastifyRequest) => {
    const access = req.routeOptions.config.access;
    const p = req.principal;
    if (!access || !p || req.accessChecked) return;
    const at = access.project ?? access.filter;
    if (at) {
      const value = locate(req, at);
      if (value === undefined && access.filter) return void (req.accessChecked = true);
      // Only a well-formed site key is looked up: anything else (NUL, surrogates, 10 KB) is left to
      // validation before the handler, and is no project after it.
      if (typeof value !== 'string' || !SITE_KEY_SHAPE.test(value)) {
        if (!final) return;
        throw notFound('Project');
      }
      const project = await findProjectBySiteKey(deps.db.db, value);
      req.accessChecked = true;
      if (!project) {
        if (access.create && isOwner(p)) return void (req.accessSiteKey = value);
        if (access.create && mayWrite(p)) throw denied('Only an owner may create a project', 'owner');
        throw notFound(`Project ${value}`);
      }
      if (!sees(p, project.id)) throw notFound(`Project ${value}`);
      req.accessSiteKey = project.site_key;
      return;
    }
    if (access.object) {
      const raw = locate(req, access.object.id);
      const id = typeof raw === 'number' || (typeof raw === 'string' && /^\d{1,15}$/.test(raw)) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(id)) {
        if (!final) return;
        throw notFound(`${access.object.kind} ${String(raw)}`);
      }
      req.accessChecked = true;
      req.accessTarget = `${access.object.kind}:${id}`;
      const projectId = await projectOfObject(deps.db.db, access.object.kind, id);
      // An unknown object is left to the route's own 404 for those who see everything.
      if (projectId === undefined) {
        if (p.projectIds === null) return;
        throw notFound(`${access.object.kind} ${id}`);
      }
      if (!sees(p, projectId)) throw notFound(`${access.object.kind} ${id}`);
      req.accessSiteKey = (await findProjectById(deps.db.db, projectId))?.site_key ?? null;
      return;
    }
    req.accessChecked = true;
  };
  app.addHook('preValidation', check(false));
  app.addHook('preHandler', check(true));

  // Every change writes its audit row inside its own transaction (services/audit.ts `audited`). A
  // successful change that recorded none is a bug in its service: it is logged as one and, so that the
  // log still says who did it, recorded here after the fact with the answer as `after`.
  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload) => {
    const access = req.routeOptions.config.access;
    const changes = access?.write || access?.self;
    if (!changes || req.method === 'GET' || !req.principal || reply.statusCode >= 400) return payload;
    const who = auditActor(req);
    if (who.recorded) return payload;
    req.log.error({ route: req.routeOptions.url, method: req.method }, 'admin change without an audit row');
    let after: unknown = null;
    if (typeof payload === 'string') {
      try {
        after = JSON.parse(payload);
      } catch {
        after = null;
      }
    }
    await recordUnaudited(
      deps.db.db,
      who,
      {
        route: `${req.method} ${req.routeOptions.url}`,
        site_key: req.accessSiteKey ?? siteKeyOf(after),
        target: req.accessTarget ?? null,
        after,
      },
      deps.clock.now(),
    );
    return payload;
  });
}

function siteKeyOf(body: unknown): string | null {
  const v = body && typeof body === 'object' ? (body as Record<string, unknown>).site_key : undefined;
  return typeof v === 'string' ? v : null;
}
