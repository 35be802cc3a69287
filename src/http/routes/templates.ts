// Admin API of templates with a contract (SPEC §16): one template, its versions (list, get, publish,
// diff, preview), layouts, and the editor's analysis of unsaved source. Saving stays POST /api/templates.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Ok, TemplateView } from '../../schemas/admin.js';
import { errors } from '../../schemas/common.js';
import {
  AnalyzeBody,
  AnalyzeResponse,
  LayoutBody,
  LayoutList,
  LayoutParams,
  LayoutSaved,
  PublishBody,
  Published,
  TemplateParams,
  VersionDiff,
  VersionList,
  VersionParams,
  VersionPreviewBody,
  VersionPreviewResponse,
  VersionView,
} from '../../schemas/templates.js';
import { SiteKeyParams } from '../../schemas/admin.js';
import type { Deps } from '../../services/context.js';
import * as layouts from '../../services/layouts.js';
import { previewVersion } from '../../services/preview.js';
import { analyzeDraft } from '../../services/templateEditor.js';
import * as templates from '../../services/templates.js';
import { auditActor } from '../plugins/access.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const errs = errors(401, 403, 404, 422, 500);
const read = { access: { project: 'params.site_key' } } as const;
const write = { access: { project: 'params.site_key', write: true } } as const;

export const templateRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/projects/:site_key/templates/:name',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'One template as published, with its variables',
        params: TemplateParams,
        response: { 200: Type.Object({ ok: Ok, template: TemplateView }), ...errs },
      },
    },
    async (req) => templates.getTemplate(deps, req.params.site_key, req.params.name),
  );

  app.get(
    '/api/admin/projects/:site_key/templates/:name/versions',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Versions, newest first',
        params: TemplateParams,
        response: { 200: VersionList, ...errs },
      },
    },
    async (req) => templates.versions(deps, req.params.site_key, req.params.name),
  );

  app.get(
    '/api/admin/projects/:site_key/templates/:name/versions/:n',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'One whole version',
        params: VersionParams,
        response: { 200: VersionView, ...errs },
      },
    },
    async (req) => templates.version(deps, req.params.site_key, req.params.name, req.params.n),
  );

  app.get(
    '/api/admin/projects/:site_key/templates/:name/versions/:n/diff',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Line changes of subject, html and text from the published version to version n',
        params: VersionParams,
        response: { 200: VersionDiff, ...errs },
      },
    },
    async (req) => templates.versionDiff(deps, req.params.site_key, req.params.name, req.params.n),
  );

  app.post(
    '/api/admin/projects/:site_key/templates/:name/versions/:n/publish',
    {
      config: write,
      schema: {
        tags,
        security,
        summary: 'Make version n the live one (an older one: a rollback); 409 template_impact unless confirm',
        params: VersionParams,
        body: Type.Optional(PublishBody),
        response: { 200: Published, ...errs, ...errors(409) },
      },
    },
    async (req) =>
      templates.publishVersion(
        deps,
        auditActor(req),
        req.params.site_key,
        req.params.name,
        req.params.n,
        req.body?.confirm,
      ),
  );

  app.post(
    '/api/admin/projects/:site_key/templates/:name/preview',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Render a saved version (default: the published one) with sample values or a stored event',
        params: TemplateParams,
        body: VersionPreviewBody,
        response: { 200: VersionPreviewResponse, ...errs },
      },
    },
    async (req) => previewVersion(deps, req.params.site_key, req.params.name, req.body),
  );

  app.post(
    '/api/admin/templates/analyze',
    {
      config: { access: { project: 'body.site_key' } },
      schema: {
        tags,
        security,
        summary: 'Variables of unsaved source, the events routed to the template and the impact a save would have',
        body: AnalyzeBody,
        response: { 200: AnalyzeResponse, ...errs },
      },
    },
    async (req) => analyzeDraft(deps, req.body),
  );

  app.get(
    '/api/admin/projects/:site_key/layouts',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: "The project's layouts",
        params: SiteKeyParams,
        response: { 200: LayoutList, ...errs },
      },
    },
    async (req) => layouts.layouts(deps, req.params.site_key),
  );

  app.get(
    '/api/admin/projects/:site_key/layouts/:name',
    {
      config: read,
      schema: { tags, security, summary: 'One layout', params: LayoutParams, response: { 200: LayoutSaved, ...errs } },
    },
    async (req) => layouts.layout(deps, req.params.site_key, req.params.name),
  );

  app.put(
    '/api/admin/projects/:site_key/layouts/:name',
    {
      config: write,
      schema: {
        tags,
        security,
        summary:
          'Create or replace a layout; html and text each print {{ content }} exactly once; 409 template_impact ' +
          'when templates in it would newly require members recent requests lacked, unless confirm',
        params: LayoutParams,
        body: LayoutBody,
        response: { 200: LayoutSaved, ...errs, ...errors(409) },
      },
    },
    async (req) => layouts.saveLayout(deps, auditActor(req), req.params.site_key, req.params.name, req.body),
  );

  app.delete(
    '/api/admin/projects/:site_key/layouts/:name',
    {
      config: write,
      schema: {
        tags,
        security,
        summary: 'Delete a layout; 409 while a published template or the project default uses it',
        params: LayoutParams,
        response: {
          200: Type.Object({ ok: Ok, name: Type.String(), deleted: Type.Literal(true) }),
          ...errs,
          ...errors(409),
        },
      },
    },
    async (req) => layouts.removeLayout(deps, auditActor(req), req.params.site_key, req.params.name),
  );
};
