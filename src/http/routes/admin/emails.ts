// E-mails (SPEC §6): list, one e-mail with its reports, preview, cancel, retry.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as outbox from '../../../services/emails.js';
import { auditActor, scopeOf } from '../../plugins/access.js';
import { IdParams, Page } from '../../../schemas/admin.js';
import { EmailDetail, EmailListItem, EmailsQuery } from '../../../schemas/chronology.js';
import { EmailActionResponse, EmailPreviewResponse } from '../../../schemas/adminUi.js';
import { errors } from '../../../schemas/common.js';
import type { Deps } from '../../../services/context.js';
import { ADMIN, adminErrors } from '../schemaParts.js';
import { previewLimit } from '../../plugins/previewLimit.js';

export const emailsAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/api/admin/emails',
    {
      config: { access: { filter: 'query.site_key' } },
      schema: {
        ...ADMIN,
        summary: 'Scheduled and sent e-mails, newest first',
        querystring: EmailsQuery,
        response: { 200: Page(EmailListItem), ...adminErrors },
      },
    },
    async (req) => outbox.emails(deps, req.query, scopeOf(req)),
  );

  app.get(
    '/api/admin/emails/:id',
    {
      config: { access: { object: { kind: 'email', id: 'params.id' } } },
      schema: {
        ...ADMIN,
        summary: 'One e-mail with its rendered subject, html, text and headers',
        params: IdParams,
        response: { 200: EmailDetail, ...adminErrors },
      },
    },
    async (req) => outbox.email(deps, req.params.id),
  );

  app.get(
    '/api/admin/emails/:id/preview',
    {
      config: { access: { object: { kind: 'email', id: 'params.id' } } },
      schema: {
        ...ADMIN,
        summary:
          'The e-mail as sent, or, before it is rendered, as its template renders it now; 429 beyond the preview limit',
        params: IdParams,
        response: { 200: EmailPreviewResponse, ...errors(401, 403, 404, 409, 422, 429, 500) },
      },
      // A render of the template (unsent e-mails): counted with the account's previews (SPEC §20).
      preHandler: previewLimit(deps),
    },
    async (req) => outbox.emailPreview(deps, req.params.id),
  );

  app.post(
    '/api/admin/emails/:id/cancel',
    {
      config: { access: { object: { kind: 'email', id: 'params.id' }, write: true } },
      schema: {
        ...ADMIN,
        summary: 'Cancel a scheduled or queued e-mail (409 once it is being sent or done)',
        params: IdParams,
        response: { 200: EmailActionResponse, ...errors(401, 403, 404, 409, 422, 500) },
      },
    },
    async (req) => outbox.cancel(deps, auditActor(req), req.params.id),
  );

  app.post(
    '/api/admin/emails/:id/retry',
    {
      config: { access: { object: { kind: 'email', id: 'params.id' }, write: true } },
      schema: {
        ...ADMIN,
        summary: 'Send a failed e-mail again now (attempts start over)',
        params: IdParams,
        response: { 200: EmailActionResponse, ...errors(401, 403, 404, 409, 422, 500) },
      },
    },
    async (req) => outbox.retry(deps, auditActor(req), req.params.id),
  );
};
