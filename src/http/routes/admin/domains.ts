// A project's sender domains (SPEC §21): add (TXT record to publish), list, verify, approve (owners).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errors, Ok, SiteKey } from '../../../schemas/common.js';
import type { Deps } from '../../../services/context.js';
import { addDomain, approveDomain, listProjectDomains, verifyDomain } from '../../../services/senderDomains.js';
import { auditActor } from '../../plugins/access.js';
import { ADMIN, adminErrors } from '../schemaParts.js';

const DomainView = Type.Object({
  domain: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('verified'), Type.Literal('approved')]),
  txt_name: Type.String({ description: 'publish a TXT record at this name…' }),
  txt_value: Type.String({ description: '…holding this value, then verify' }),
  checked_at: Type.Union([Type.String(), Type.Null()]),
  approved_by: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});
const DomainParams = Type.Object({ site_key: SiteKey, domain: Type.String({ minLength: 1, maxLength: 253 }) });

export const domainsAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const base = '/api/admin/projects/:site_key/domains';
  app.get(
    base,
    {
      config: { access: { project: 'params.site_key' } },
      schema: {
        ...ADMIN,
        summary: "The project's sender domains",
        params: Type.Object({ site_key: SiteKey }),
        response: { 200: Type.Object({ ok: Ok, items: Type.Array(DomainView) }), ...adminErrors },
      },
    },
    async (req) => listProjectDomains(deps, req.params.site_key),
  );

  app.post(
    base,
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Add a sender domain: pending until the TXT record shown is found (verify) or an owner approves it',
        params: Type.Object({ site_key: SiteKey }),
        body: Type.Object({ domain: Type.String({ minLength: 1, maxLength: 253 }) }, { additionalProperties: false }),
        response: { 200: DomainView, ...adminErrors },
      },
    },
    async (req) => addDomain(deps, auditActor(req), req.params.site_key, req.body.domain),
  );

  app.post(
    `${base}/:domain/verify`,
    {
      config: { access: { project: 'params.site_key', write: true } },
      schema: {
        ...ADMIN,
        summary: 'Look the TXT record up (DNS_SERVERS): verified when it holds txt_value',
        params: DomainParams,
        response: {
          200: Type.Intersect([DomainView, Type.Object({ found: Type.Boolean() })]),
          ...adminErrors,
          ...errors(409),
        },
      },
    },
    async (req) => verifyDomain(deps, auditActor(req), req.params.site_key, req.params.domain),
  );

  app.post(
    `${base}/:domain/approve`,
    {
      config: { access: { owner: true, write: true } },
      schema: {
        ...ADMIN,
        summary: 'Owners: approve a sender domain for the project without DNS (also one another project holds)',
        params: DomainParams,
        response: { 200: DomainView, ...adminErrors },
      },
    },
    async (req) => approveDomain(deps, auditActor(req), req.params.site_key, req.params.domain),
  );
};
