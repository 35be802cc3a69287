// Admin API of SPEC §14: accounts (owners only), each account's own tokens and sessions, the audit log,
// and the first-run setup. Access is declared per route (plugins/access.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { IdParams, Ok } from '../../schemas/admin.js';
import {
  AuditItem,
  AuditQuery,
  CreatedToken,
  CreateTokenBody,
  CreateUserBody,
  PatchUserBody,
  SessionView,
  SetupBody,
  TokenView,
  UserView,
} from '../../schemas/accounts.js';
import { errors } from '../../schemas/common.js';
import { siteKeysOf } from '../../repos/access.js';
import * as accounts from '../../services/accounts.js';
import { auditLog } from '../../services/audit.js';
import type { Deps } from '../../services/context.js';
import { completeSetup } from '../../services/setup.js';
import { auditActor } from '../plugins/access.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const errs = errors(401, 403, 404, 409, 422, 500);

export const adminAccountRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/api/admin/users',
    {
      config: { access: { owner: true, write: true } },
      schema: {
        tags,
        security,
        summary: 'Create an administrator account (owners only)',
        body: CreateUserBody,
        response: { 201: Type.Object({ ok: Ok, user: UserView }), ...errs },
      },
    },
    async (req, reply) => {
      const user = await accounts.createUser(deps, auditActor(req), req.body);
      reply.code(201);
      return { ok: true as const, user };
    },
  );

  app.get(
    '/api/admin/users',
    {
      config: { access: { owner: true } },
      schema: {
        tags,
        security,
        summary: 'Administrator accounts (owners only)',
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(UserView) }), ...errs },
      },
    },
    async () => accounts.users(deps),
  );

  app.patch(
    '/api/admin/users/:id',
    {
      config: { access: { owner: true, write: true } },
      schema: {
        tags,
        security,
        summary: "Change an account's name, e-mail, password, role or projects (owners only)",
        params: IdParams,
        body: PatchUserBody,
        response: { 200: Type.Object({ ok: Ok, user: UserView }), ...errs },
      },
    },
    async (req) => ({
      ok: true as const,
      user: await accounts.changeUser(deps, auditActor(req), req.params.id, req.body),
    }),
  );

  app.post(
    '/api/admin/users/:id/disable',
    {
      config: { access: { owner: true, write: true } },
      schema: {
        tags,
        security,
        summary: 'Disable an account: its sessions and tokens stop at the next request (owners only)',
        params: IdParams,
        response: { 200: Type.Object({ ok: Ok, user: UserView }), ...errs },
      },
    },
    async (req) => ({
      ok: true as const,
      user: await accounts.changeUser(deps, auditActor(req), req.params.id, { status: 'disabled' }),
    }),
  );

  app.post(
    '/api/admin/tokens',
    {
      // Any account, viewers too: a token never has more rights than its account.
      config: { access: { self: true } },
      schema: {
        tags,
        security,
        summary: 'Create a personal API token for Authorization: Bearer; the token is in this answer only',
        body: CreateTokenBody,
        response: { 201: CreatedToken, ...errs },
      },
    },
    async (req, reply) => {
      const created = await accounts.createToken(deps, req.principal!, auditActor(req), req.body);
      reply.code(201);
      return created;
    },
  );

  app.get(
    '/api/admin/tokens',
    {
      config: { access: { self: true } },
      schema: {
        tags,
        security,
        summary: 'Your personal tokens (never the token itself)',
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(TokenView) }), ...errs },
      },
    },
    async (req) => accounts.tokens(deps, req.principal!),
  );

  app.post(
    '/api/admin/tokens/:id/revoke',
    {
      // Revoking is allowed to a read-only token too: giving up access is never an escalation.
      config: { access: { self: true } },
      schema: {
        tags,
        security,
        summary: 'Revoke one of your personal tokens; it stops working at the next request',
        params: IdParams,
        response: { 200: Type.Intersect([Type.Object({ ok: Ok }), TokenView]), ...errs },
      },
    },
    async (req) => accounts.revokeOwnToken(deps, req.principal!, auditActor(req), req.params.id),
  );

  app.get(
    '/api/admin/sessions',
    {
      config: { access: { self: true } },
      schema: {
        tags,
        security,
        summary: 'Your open UI sessions',
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(SessionView) }), ...errs },
      },
    },
    async (req) => accounts.sessions(deps, req.principal!),
  );

  app.delete(
    '/api/admin/sessions/:session_id',
    {
      config: { access: { self: true } },
      schema: {
        tags,
        security,
        summary: 'End one of your UI sessions',
        params: Type.Object({ session_id: Type.String({ pattern: '^[0-9a-f]{16}$' }) }),
        response: { 200: Type.Object({ ok: Ok }), ...errs },
      },
    },
    async (req) => accounts.endOwnSession(deps, req.principal!, auditActor(req), req.params.session_id),
  );

  app.get(
    '/api/admin/audit',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        tags,
        security,
        summary: 'The audit log, newest first; an administrator of some projects sees only theirs',
        querystring: AuditQuery,
        response: {
          200: Type.Object({
            ok: Ok,
            items: Type.Array(AuditItem),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...errs,
        },
      },
    },
    async (req) => {
      const ids = req.principal!.projectIds;
      return auditLog(deps, req.query, ids === null ? null : await siteKeysOf(deps.db.db, ids));
    },
  );

  app.post(
    '/api/admin/setup',
    {
      config: { access: { public: true } },
      schema: {
        tags,
        summary: "First run: create the first owner with the setup link's code printed on the console",
        body: SetupBody,
        response: { 201: Type.Object({ ok: Ok, user: UserView }), ...errs },
      },
    },
    async (req, reply) => {
      const user = await completeSetup(deps, req.ip, req.body);
      reply.code(201);
      return { ok: true as const, user };
    },
  );
};
