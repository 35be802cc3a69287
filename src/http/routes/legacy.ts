// Service and legacy endpoints of the API document (SPEC §6), admin token required.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { checkTemplate } from '../../delivery/render.js';
import { notFound, validationError } from '../../errors.js';
import { errors } from '../../schemas/common.js';
import {
  ContactUpsertBody,
  ListBody,
  ListIdParams,
  ListMemberBody,
  MemberView,
  Ok,
  SiteBody,
  TemplateBody,
  type ContactUpsertBody as ContactInput,
  type SiteBody as SiteInput,
  type TemplateBody as TemplateInput,
} from '../../schemas/admin.js';
import { Cursor, Limit } from '../../schemas/common.js';
import { addToList, createList, findContact, findList, listMembers, upsertContact } from '../../repos/contacts.js';
import { upsertTemplate } from '../../repos/templates.js';
import { decodeCursor, encodeCursor, iso } from '../../repos/types.js';
import { requireProject, saveProject } from '../../services/admin.js';
import type { Deps } from '../../services/context.js';

const tags = ['legacy'];
const security = [{ adminToken: [] }];
const errs = errors(400, 401, 404, 413, 415, 422, 500);

export async function legacyRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const db = deps.db.db;

  app.post(
    '/api/sites',
    {
      schema: {
        tags,
        security,
        summary: 'Create or update a project',
        body: SiteBody,
        response: {
          200: Type.Object({
            ok: Ok,
            site_key: Type.String(),
            project_id: Type.Integer(),
            created: Type.Boolean(),
            timezone: Type.String(),
            locale: Type.String(),
          }),
          ...errs,
        },
      },
    },
    async (req) => {
      const { project, created } = await saveProject(deps, req.body as SiteInput);
      return {
        ok: true as const,
        site_key: project.site_key,
        project_id: project.id,
        created,
        timezone: project.timezone,
        locale: project.locale,
      };
    },
  );

  app.post(
    '/api/contacts/upsert',
    {
      schema: {
        tags,
        security,
        summary: 'Create or update a contact',
        body: ContactUpsertBody,
        response: {
          200: Type.Object({ ok: Ok, site_key: Type.String(), contact_id: Type.Integer(), status: Type.String() }),
          ...errs,
        },
      },
    },
    async (req) => {
      const b = req.body as ContactInput;
      const project = await requireProject(db, b.site_key);
      const c = await upsertContact(
        db,
        project.id,
        { email: b.email, name: b.name, fields: b.fields },
        deps.clock.now(),
      );
      return { ok: true as const, site_key: project.site_key, contact_id: c.id, status: c.status };
    },
  );

  app.post(
    '/api/templates',
    {
      schema: {
        tags,
        security,
        summary: 'Create a template, or update the one with this name (its template key)',
        body: TemplateBody,
        response: {
          200: Type.Object({
            ok: Ok,
            site_key: Type.String(),
            template_id: Type.Integer(),
            name: Type.String(),
            created: Type.Boolean(),
          }),
          ...errs,
        },
      },
    },
    async (req) => {
      const b = req.body as TemplateInput;
      const project = await requireProject(db, b.site_key);
      const problem = checkTemplate(b);
      if (problem) {
        throw validationError(
          `The template does not parse: ${problem.part}, line ${problem.line}: ${problem.message}`,
          {
            invalid_fields: { [problem.part]: `line ${problem.line}: ${problem.message}` },
          },
        );
      }
      const { id, created } = await upsertTemplate(db, project.id, b, deps.clock.now());
      return { ok: true as const, site_key: project.site_key, template_id: id, name: b.name, created };
    },
  );

  app.post(
    '/api/lists',
    {
      schema: {
        tags,
        security,
        summary: 'Create an address book (an existing name returns the existing book)',
        body: ListBody,
        response: {
          200: Type.Object({ ok: Ok, site_key: Type.String(), list_id: Type.Integer(), created: Type.Boolean() }),
          ...errs,
        },
      },
    },
    async (req) => {
      const b = req.body as { site_key: string; name: string };
      const project = await requireProject(db, b.site_key);
      const { list, created } = await createList(db, project.id, b.name, deps.clock.now());
      return { ok: true as const, site_key: project.site_key, list_id: list.id, created };
    },
  );

  app.post(
    '/api/lists/:list_id/contacts',
    {
      schema: {
        tags,
        security,
        summary: 'Add a contact to an address book',
        params: ListIdParams,
        body: ListMemberBody,
        response: {
          200: Type.Object({ ok: Ok, list_id: Type.Integer(), contact_id: Type.Integer(), added: Type.Boolean() }),
          ...errs,
        },
      },
    },
    async (req) => {
      const { list_id } = req.params as { list_id: number };
      const { contact_id } = req.body as { contact_id: number };
      const list = await findList(db, list_id);
      if (!list) throw notFound(`Address book ${list_id}`);
      const contact = await findContact(db, contact_id);
      if (!contact || contact.project_id !== list.project_id) {
        throw validationError(`Contact ${contact_id} does not exist in the project of address book ${list_id}`, {
          invalid_fields: { contact_id: 'unknown contact of this project' },
        });
      }
      const added = await addToList(db, list_id, contact_id, deps.clock.now());
      return { ok: true as const, list_id, contact_id, added };
    },
  );

  app.get(
    '/api/lists/:list_id/contacts',
    {
      schema: {
        tags,
        security,
        summary: 'Contacts of an address book',
        params: ListIdParams,
        querystring: Type.Object({ limit: Limit, cursor: Cursor }),
        response: {
          200: Type.Object({
            ok: Ok,
            list_id: Type.Integer(),
            items: Type.Array(MemberView),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...errs,
        },
      },
    },
    async (req) => {
      const { list_id } = req.params as { list_id: number };
      const q = req.query as { limit: number; cursor?: string };
      if (!(await findList(db, list_id))) throw notFound(`Address book ${list_id}`);
      const rows = await listMembers(db, list_id, q.limit, decodeCursor(q.cursor));
      const items = rows.slice(0, q.limit).map((r) => ({ ...r, added_at: iso(r.added_at)! }));
      return {
        ok: true as const,
        list_id,
        items,
        next_cursor: rows.length > q.limit ? encodeCursor(items[items.length - 1].contact_id) : null,
      };
    },
  );
}
