// Templates with a contract (SPEC §16): list, one template, versions (get, publish, diff, preview), stats (SPEC
// §17), preview and analysis of unsaved source. Saving stays POST /api/templates.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as admin from '../../../services/admin.js';
import * as templates from '../../../services/templates.js';
import { auditActor } from '../../plugins/access.js';
import { Ok, SiteKeyParams, TemplateView } from '../../../schemas/admin.js';
import { TemplateStats, TemplateStatsParams, TemplateStatsQuery } from '../../../schemas/chronology.js';
import { PreviewBody, PreviewResponse } from '../../../schemas/adminUi.js';
import { errors } from '../../../schemas/common.js';
import {
  AnalyzeBody,
  AnalyzeResponse,
  PublishBody,
  Published,
  TemplateParams,
  VersionDiff,
  VersionList,
  VersionParams,
  VersionPreviewBody,
  VersionPreviewResponse,
  VersionView,
} from '../../../schemas/templates.js';
import type { Deps } from '../../../services/context.js';
import { templateStats } from '../../../services/engagement.js';
import { previewTemplate, previewVersion } from '../../../services/preview.js';
import { analyzeDraft } from '../../../services/templateEditor.js';
import { Type } from 'typebox';
import { ADMIN, adminErrors } from '../schemaParts.js';
import { previewLimit } from '../../plugins/previewLimit.js';

export const templatesAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/projects/:site_key/templates',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        ...ADMIN,
        params: SiteKeyParams,
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(TemplateView) }), ...adminErrors },
      },
    },
    async (req) => admin.templates(deps, req.params.site_key),
  );

  app.get(
    '/api/admin/projects/:site_key/templates/:name/stats',
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        tags: ['admin'],
        security: [{ adminToken: [] }],
        summary:
          "A template's e-mails sent between since and until: delivered, bounced, complained, opened, clicked (people only) and unsubscribed",
        params: TemplateStatsParams,
        querystring: TemplateStatsQuery,
        response: { 200: TemplateStats, ...errors(401, 403, 404, 422, 500) },
      },
    },
    async (req) => templateStats(deps, req.params.site_key, req.params.name, req.query),
  );

  app.post(
    '/api/admin/templates/preview',
    {
      config: { access: { project: 'body.site_key', write: false } },
      schema: {
        ...ADMIN,
        summary:
          'Render unsaved template source with sample values; 422 names the part and line that does not parse, or template_too_heavy; 429 beyond the preview limit',
        body: PreviewBody,
        response: { 200: PreviewResponse, ...errors(401, 403, 404, 409, 422, 429, 500) },
      },
      preHandler: previewLimit(deps),
    },
    async (req) => previewTemplate(deps, req.body),
  );

  app.get(
    '/api/admin/projects/:site_key/templates/:name',
    {
      config: { access: { project: 'params.site_key' } } as const,
      schema: {
        ...ADMIN,
        summary: 'One template as published, with its variables',
        params: TemplateParams,
        response: { 200: Type.Object({ ok: Ok, template: TemplateView }), ...adminErrors },
      },
    },
    async (req) => templates.getTemplate(deps, req.params.site_key, req.params.name),
  );

  app.get(
    '/api/admin/projects/:site_key/templates/:name/versions',
    {
      config: { access: { project: 'params.site_key' } } as const,
      schema: {
        ...ADMIN,
        summary: 'Versions, newest first',
        params: TemplateParams,
        response: { 200: VersionList, ...adminErrors },
      },
    },
    async (req) => templates.versions(deps, req.params.site_key, req.params.name),
  );

  app.get(
    '/api/admin/projects/:site_key/templates/:name/versions/:n',
    {
      config: { access: { project: 'params.site_key' } } as const,
      schema: {
        ...ADMIN,
        summary: 'One whole version',
        params: VersionParams,
        response: { 200: VersionView, ...adminErrors },
      },
    },
    async (req) => templates.version(deps, req.params.site_key, req.params.name, req.params.n),
  );

  app.get(
    '/api/admin/projects/:site_key/templates/:name/versions/:n/diff',
    {
      config: { access: { project: 'params.site_key' } } as const,
      schema: {
        ...ADMIN,
        summary: 'Line changes of subject, html and text from the published version to version n',
        params: VersionParams,
        response: { 200: VersionDiff, ...adminErrors },
      },
    },
    async (req) => templates.versionDiff(deps, req.params.site_key, req.params.name, req.params.n),
  );

  app.post(
    '/api/admin/projects/:site_key/templates/:name/versions/:n/publish',
    {
      config: { access: { project: 'params.site_key', write: true } } as const,
      schema: {
        ...ADMIN,
        summary: 'Make version n the live one (an older one: a rollback); 409 template_impact unless confirm',
        params: VersionParams,
        body: Type.Optional(PublishBody),
        response: { 200: Published, ...adminErrors, ...errors(409) },
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
      config: { access: { project: 'params.site_key', write: false } } as const,
      schema: {
        ...ADMIN,
        summary:
          'Render a saved version (default: the published one) with sample values or a stored event; 422 template_too_heavy; 429 beyond the preview limit',
        params: TemplateParams,
        body: VersionPreviewBody,
        response: { 200: VersionPreviewResponse, ...adminErrors, ...errors(429) },
      },
      preHandler: previewLimit(deps),
    },
    async (req) => previewVersion(deps, req.params.site_key, req.params.name, req.body),
  );

  app.post(
    '/api/admin/templates/analyze',
    {
      config: { access: { project: 'body.site_key', write: false } },
      schema: {
        ...ADMIN,
        summary: 'Variables of unsaved source, the events routed to the template and the impact a save would have',
        body: AnalyzeBody,
        response: { 200: AnalyzeResponse, ...adminErrors },
      },
    },
    async (req) => analyzeDraft(deps, req.body),
  );
};
