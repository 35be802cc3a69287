// Admin API: projects, keys and per-project configuration (SPEC §2, §6).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../schemas/common.js';
import {
  CategoriesBody,
  CategoriesResponse,
  CreateKeyBody,
  CreatedKey,
  IdParams,
  KeyView,
  ListView,
  Ok,
  PaidListsBody,
  PaidListsResponse,
  ProjectPatchBody,
  ProjectView,
  RoutingBody,
  RoutingResponse,
  SiteKeyParams,
  TemplateView,
  UpdateKeyBody,
  type CreateKeyBody as CreateKeyInput,
  type ProjectPatchBody as ProjectPatchInput,
  type UpdateKeyBody as UpdateKeyInput,
} from '../../schemas/admin.js';
import { listLists } from '../../repos/contacts.js';
import { listKeys } from '../../repos/keys.js';
import { getCartChains, getCourseCategories, getPaidLists, listSequences } from '../../repos/projectConfig.js';
import { listProjects } from '../../repos/projects.js';
import { getRoutes, listTemplates } from '../../repos/templates.js';
import { iso } from '../../repos/types.js';
import * as admin from '../../services/admin.js';
import type { Deps } from '../../services/context.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const errs = errors(401, 404, 422, 500);
type SiteParams = { site_key: string };

export async function adminConfigRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const db = deps.db.db;

  app.get(
    '/api/admin/projects',
    {
      schema: {
        tags,
        security,
        summary: 'All projects',
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(ProjectView) }), ...errs },
      },
    },
    async () => ({ ok: true as const, items: (await listProjects(db)).map(admin.projectView) }),
  );

  app.patch(
    '/api/admin/projects/:site_key',
    {
      schema: {
        tags,
        security,
        summary: "Change a project's name, sender, time zone or locale; absent members stay as they are",
        params: SiteKeyParams,
        body: ProjectPatchBody,
        response: { 200: Type.Object({ ok: Ok, project: ProjectView }), ...errs },
      },
    },
    async (req) => {
      const { site_key } = req.params as SiteParams;
      const project = await admin.patchProject(deps, site_key, req.body as ProjectPatchInput);
      return { ok: true as const, project: admin.projectView(project) };
    },
  );

  app.post(
    '/api/admin/keys',
    {
      schema: {
        tags,
        security,
        summary: 'Create an API key; the full key is in this answer only',
        body: CreateKeyBody,
        response: { 201: CreatedKey, ...errs },
      },
    },
    async (req, reply) => {
      reply.code(201);
      return admin.createApiKey(deps, req.body as CreateKeyInput);
    },
  );

  app.get(
    '/api/admin/keys',
    {
      schema: {
        tags,
        security,
        summary: 'List API keys (never the key itself)',
        querystring: Type.Object({ site_key: Type.Optional(Type.String()) }),
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(KeyView) }), ...errs },
      },
    },
    async (req) => {
      const { site_key } = req.query as { site_key?: string };
      const projectId = site_key ? (await admin.requireProject(db, site_key)).id : undefined;
      return { ok: true as const, items: (await listKeys(db, projectId)).map(admin.keyView) };
    },
  );

  app.patch(
    '/api/admin/keys/:id',
    {
      schema: {
        tags,
        security,
        summary: "Change a key's name, rights or rate limit",
        params: IdParams,
        body: UpdateKeyBody,
        response: { 200: KeyView, ...errs },
      },
    },
    async (req) => admin.changeApiKey(deps, (req.params as { id: number }).id, req.body as UpdateKeyInput),
  );

  app.post(
    '/api/admin/keys/:id/disable',
    {
      schema: {
        tags,
        security,
        summary: 'Disable a key; it stops working on the next request',
        params: IdParams,
        response: { 200: Type.Object({ id: Type.Integer(), status: Type.Literal('disabled') }), ...errs },
      },
    },
    async (req) => {
      const k = await admin.changeApiKey(deps, (req.params as { id: number }).id, { status: 'disabled' });
      return { id: k.id, status: 'disabled' as const };
    },
  );

  app.get(
    '/api/admin/projects/:site_key/routing',
    {
      schema: { tags, security, params: SiteKeyParams, response: { 200: RoutingResponse, ...errs } },
    },
    async (req) => {
      const p = await admin.requireProject(db, (req.params as SiteParams).site_key);
      return { ok: true as const, site_key: p.site_key, routes: await getRoutes(db, p.id) };
    },
  );

  app.put(
    '/api/admin/projects/:site_key/routing',
    {
      schema: {
        tags,
        security,
        summary: 'Replace the routing (event type or cart step -> template name)',
        params: SiteKeyParams,
        body: RoutingBody,
        response: { 200: RoutingResponse, ...errs },
      },
    },
    async (req) => {
      const { site_key } = req.params as SiteParams;
      await admin.setRouting(deps, site_key, (req.body as { routes: Record<string, string> }).routes);
      const p = await admin.requireProject(db, site_key);
      return { ok: true as const, site_key, routes: await getRoutes(db, p.id) };
    },
  );

  app.get(
    '/api/admin/projects/:site_key/course-categories',
    {
      schema: { tags, security, params: SiteKeyParams, response: { 200: CategoriesResponse, ...errs } },
    },
    async (req) => {
      const p = await admin.requireProject(db, (req.params as SiteParams).site_key);
      return { ok: true as const, site_key: p.site_key, categories: await getCourseCategories(db, p.id) };
    },
  );

  app.put(
    '/api/admin/projects/:site_key/course-categories',
    {
      schema: {
        tags,
        security,
        summary: 'Replace the course-category table',
        params: SiteKeyParams,
        body: CategoriesBody,
        response: { 200: CategoriesResponse, ...errs },
      },
    },
    async (req) => {
      const { site_key } = req.params as SiteParams;
      await admin.setCourseCategories(
        deps,
        site_key,
        (req.body as { categories: { id: string; list_id: number; slug: string; title: string }[] }).categories,
      );
      const p = await admin.requireProject(db, site_key);
      return { ok: true as const, site_key, categories: await getCourseCategories(db, p.id) };
    },
  );

  app.get(
    '/api/admin/projects/:site_key/paid-lists',
    {
      schema: { tags, security, params: SiteKeyParams, response: { 200: PaidListsResponse, ...errs } },
    },
    async (req) => {
      const p = await admin.requireProject(db, (req.params as SiteParams).site_key);
      return { ok: true as const, site_key: p.site_key, lists: await getPaidLists(db, p.id) };
    },
  );

  app.put(
    '/api/admin/projects/:site_key/paid-lists',
    {
      schema: {
        tags,
        security,
        summary: 'Set the address book of paid orders per cart type',
        params: SiteKeyParams,
        body: PaidListsBody,
        response: { 200: PaidListsResponse, ...errs },
      },
    },
    async (req) => {
      const { site_key } = req.params as SiteParams;
      await admin.setPaidLists(deps, site_key, (req.body as { lists: Record<string, number> }).lists);
      const p = await admin.requireProject(db, site_key);
      return { ok: true as const, site_key, lists: await getPaidLists(db, p.id) };
    },
  );

  app.get(
    '/api/admin/projects/:site_key/templates',
    {
      schema: {
        tags,
        security,
        params: SiteKeyParams,
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(TemplateView) }), ...errs },
      },
    },
    async (req) => {
      const p = await admin.requireProject(db, (req.params as SiteParams).site_key);
      const items = (await listTemplates(db, p.id)).map((t) => ({
        ...t,
        site_key: p.site_key,
        created_at: iso(t.created_at)!,
        updated_at: iso(t.updated_at)!,
      }));
      return { ok: true as const, items };
    },
  );

  app.get(
    '/api/admin/projects/:site_key/lists',
    {
      schema: {
        tags,
        security,
        params: SiteKeyParams,
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(ListView) }), ...errs },
      },
    },
    async (req) => {
      const p = await admin.requireProject(db, (req.params as SiteParams).site_key);
      return {
        ok: true as const,
        items: (await listLists(db, p.id)).map((l) => ({
          list_id: l.id,
          name: l.name,
          members: l.members,
          created_at: iso(l.created_at)!,
        })),
      };
    },
  );

  app.get(
    '/api/admin/projects/:site_key/sequences',
    {
      schema: {
        tags,
        security,
        params: SiteKeyParams,
        response: {
          200: Type.Object({
            ok: Ok,
            items: Type.Array(
              Type.Object({
                sequence_id: Type.Integer(),
                name: Type.String(),
                steps: Type.Array(Type.Object({ template_id: Type.Integer(), delay_minutes: Type.Integer() })),
              }),
            ),
            cart_chains: Type.Record(Type.String(), Type.Integer()),
          }),
          ...errs,
        },
      },
    },
    async (req) => {
      const p = await admin.requireProject(db, (req.params as SiteParams).site_key);
      const items = (await listSequences(db, p.id)).map((s) => ({ sequence_id: s.id, name: s.name, steps: s.steps }));
      return { ok: true as const, items, cart_chains: await getCartChains(db, p.id) };
    },
  );
}
