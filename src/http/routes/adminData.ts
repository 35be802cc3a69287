// Admin API: the event chronology and statistics (SPEC §5), e-mails and contacts (SPEC §6).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { canonicalAddress } from '../../domain/email.js';
import { notFound } from '../../errors.js';
import { errors } from '../../schemas/common.js';
import {
  ContactStatusBody,
  EmailDetail,
  EmailListItem,
  EmailsQuery,
  EventView,
  EventsQuery,
  IdParams,
  Ok,
  Page,
  StatsQuery,
  StatsResponse,
} from '../../schemas/admin.js';
import { findContact, setContactStatus } from '../../repos/contacts.js';
import { emailDetail, findEmailWithSite, listEmails } from '../../repos/emails.js';
import { eventStats, findEvent, listEvents } from '../../repos/events.js';
import { decodeCursor, encodeCursor } from '../../repos/types.js';
import { requireProject } from '../../services/admin.js';
import type { Deps } from '../../services/context.js';
import type { ContactStatus } from '../../db/schema.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const errs = errors(401, 404, 422, 500);
const time = (s?: string) => (s ? Date.parse(s) : undefined);

export async function adminDataRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const db = deps.db.db;
  const projectId = async (siteKey?: string) => (siteKey ? (await requireProject(db, siteKey)).id : undefined);

  app.get(
    '/api/admin/external-events',
    {
      schema: {
        tags,
        security,
        summary: 'Chronology of incoming API events, newest first (order=asc for the story of one order)',
        querystring: EventsQuery,
        response: { 200: Page(EventView), ...errs },
      },
    },
    async (req) => {
      const q = req.query as Record<string, any>;
      const { items, nextId } = await listEvents(db, {
        projectId: await projectId(q.site_key),
        orderId: q.order_id,
        eventType: q.event_type,
        endpoint: q.endpoint,
        email: q.email ? canonicalAddress(q.email) : undefined,
        status: q.status,
        since: time(q.since),
        until: time(q.until),
        order: q.order ?? 'desc',
        limit: q.limit,
        cursor: decodeCursor(q.cursor),
      });
      return { ok: true as const, items, next_cursor: nextId === null ? null : encodeCursor(nextId) };
    },
  );

  app.get(
    '/api/admin/external-events/stats',
    {
      schema: {
        tags,
        security,
        summary: 'Statistics of incoming API events',
        querystring: StatsQuery,
        response: { 200: StatsResponse, ...errs },
      },
    },
    async (req) => {
      const q = req.query as { site_key?: string; endpoint?: string; since?: string; until?: string };
      const stats = await eventStats(db, deps.db.dialect, {
        projectId: await projectId(q.site_key),
        endpoint: q.endpoint,
        since: time(q.since),
        until: time(q.until),
      });
      return { ok: true as const, site_key: q.site_key ?? null, ...stats };
    },
  );

  app.get(
    '/api/admin/external-events/:id',
    {
      schema: {
        tags,
        security,
        params: IdParams,
        response: { 200: Type.Object({ ok: Ok, event: EventView }), ...errs },
      },
    },
    async (req) => {
      const ev = await findEvent(db, (req.params as { id: number }).id);
      if (!ev) throw notFound('Event');
      return { ok: true as const, event: ev };
    },
  );

  app.get(
    '/api/admin/emails',
    {
      schema: {
        tags,
        security,
        summary: 'Scheduled and sent e-mails, newest first',
        querystring: EmailsQuery,
        response: { 200: Page(EmailListItem), ...errs },
      },
    },
    async (req) => {
      const q = req.query as Record<string, any>;
      const { items, nextId } = await listEmails(
        db,
        {
          projectId: await projectId(q.site_key),
          orderId: q.order_id,
          status: q.status,
          to: q.to,
          eventId: q.event_id,
          contactId: q.contact_id,
          campaignId: q.campaign_id,
          limit: q.limit,
          cursor: decodeCursor(q.cursor),
        },
        deps.clock.now(),
      );
      return { ok: true as const, items, next_cursor: nextId === null ? null : encodeCursor(nextId) };
    },
  );

  app.get(
    '/api/admin/emails/:id',
    {
      schema: {
        tags,
        security,
        summary: 'One e-mail with its rendered subject, html, text and headers',
        params: IdParams,
        response: { 200: EmailDetail, ...errs },
      },
    },
    async (req) => {
      const row = await findEmailWithSite(db, (req.params as { id: number }).id);
      if (!row) throw notFound('E-mail');
      return emailDetail(row, deps.clock.now());
    },
  );

  app.post(
    '/api/admin/contacts/:id/status',
    {
      schema: {
        tags,
        security,
        summary: "Set a contact's status",
        params: IdParams,
        body: ContactStatusBody,
        response: { 200: Type.Object({ ok: Ok, contact_id: Type.Integer(), status: Type.String() }), ...errs },
      },
    },
    async (req) => {
      const { id } = req.params as { id: number };
      const { status } = req.body as { status: ContactStatus };
      if (!(await findContact(db, id))) throw notFound(`Contact ${id}`);
      await setContactStatus(db, id, status, deps.clock.now());
      return { ok: true as const, contact_id: id, status };
    },
  );
}
