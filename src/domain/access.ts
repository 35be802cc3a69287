// Who may do what in the admin API (SPEC §14), as plain rules; the HTTP hook that applies them is
// http/plugins/access.ts. Every admin route declares a RouteAccess in its `config.access`.
import type { AdminRole, AuditVia } from './statuses.js';

/** Where in the request a value is: `params.site_key`, `query.site_key`, `body.site_key`, `params.id`... */
export type Locator = `${'params' | 'query' | 'body'}.${string}`;

/** Objects addressed by id whose project is looked up before the route runs. */
export const ACCESS_OBJECTS = ['email', 'contact', 'list', 'event', 'campaign', 'key', 'template'] as const;
export type AccessObject = (typeof ACCESS_OBJECTS)[number];

/**
 * The access rule of one route. Exactly one of public / self / owner / project / filter / object.
 * - `project`: the route acts on the one project whose site key is at that place (404 when not permitted).
 *   With `create: true` an unknown site key is allowed to owners only (creating a project).
 * - `filter`: the site key there is an optional filter; absent, the handler must pass `scopeOf(req)` to
 *   its service so lists hold only permitted projects.
 * - `object`: the route addresses an object by id; its project is looked up, then as `project`.
 * - `owner`: owners and the root token only (accounts, installation-wide figures).
 * - `self`: any signed-in principal; what it touches is its own (its tokens, sessions) or no project's.
 * - `public`: no authentication (login, first-run setup).
 * `write: true` marks a change: 403 `permission_denied` for viewers and read-only tokens. Its service
 * writes the audit row in the change's own transaction (services/audit.ts `audited`, given auditActor(req)).
 * Every non-GET route that is not public must say `write: true` or `write: false` (a computation that
 * stores nothing, such as a preview): forgetting it stops the app at startup (SPEC §21, read-only means
 * read-only), so no change route can be left open to viewers by omission.
 */
export interface RouteAccess {
  public?: true;
  self?: true;
  owner?: true;
  project?: Locator;
  create?: true;
  filter?: Locator;
  object?: { kind: AccessObject; id: Locator };
  write?: boolean;
}

const READING_METHODS = new Set(['GET', 'HEAD']);

export function accessProblem(a: RouteAccess | undefined, method = 'GET'): string | null {
  if (!a) return 'declares no config.access';
  const kinds = [a.public, a.self, a.owner, a.project, a.filter, a.object].filter((x) => x !== undefined);
  if (kinds.length !== 1) return 'must declare exactly one of public, self, owner, project, filter, object';
  if (!a.public && !READING_METHODS.has(method) && typeof a.write !== 'boolean')
    return 'must declare write: true (a change) or write: false (stores nothing)';
  return null;
}

/** The signed-in party of an admin request. */
export interface Principal {
  /** null for the root ADMIN_TOKEN (and sessions opened with it). */
  userId: number | null;
  /** What the audit log names: the account's e-mail, or `root`. */
  actor: string;
  role: AdminRole;
  /** Projects a non-owner may see; null: all. */
  projectIds: readonly number[] | null;
  /** A read-only personal token: may read what its account may, change nothing. */
  readOnly: boolean;
  via: AuditVia;
  tokenId?: number;
  /** The personal token's name, for the audit log. */
  tokenName?: string;
  sessionId?: string;
}

export const ROOT: Omit<Principal, 'via'> = {
  userId: null,
  actor: 'root',
  role: 'owner',
  projectIds: null,
  readOnly: false,
};

export const isOwner = (p: Principal) => p.role === 'owner' && !p.readOnly;
export const sees = (p: Principal, projectId: number) => p.projectIds === null || p.projectIds.includes(projectId);
export const mayWrite = (p: Principal) => !p.readOnly && p.role !== 'viewer';

/** Names whose values never reach the audit log or a log line. */
const SECRET_NAME = /pass|token|secret|^key$|api_key|code|authorization|cookie|smtp_url|signing/i;

/** A copy of a JSON value with secret members replaced by "[redacted]". */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 20 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_NAME.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
}
