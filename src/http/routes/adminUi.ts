// Admin endpoints the web UI needs beyond SPEC §6's admin API (admin token or UI session): catalog
// metadata for the forms, dashboard figures, template preview, e-mail cancel/retry/preview, contacts.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  EVENT_ENDPOINTS,
  CART_STEPS,
  CART_TYPES,
  CATALOG,
  EXTRA_EVENT_TYPES,
  KNOWN_TEMPLATE_KEYS,
  PERMISSIONS,
  allRoutingKeys,
} from '../../domain/catalog.js';
import { notFound } from '../../errors.js';
import { IdParams } from '../../schemas/admin.js';
import {
  ContactDetail,
  ContactItem,
  ContactsQuery,
  DashboardQuery,
  DashboardResponse,
  EmailActionResponse,
  EmailPreviewResponse,
  PreviewBody,
  PreviewResponse,
  UiMeta,
  type PreviewBody as PreviewInput,
} from '../../schemas/adminUi.js';
import { errors } from '../../schemas/common.js';
import { contactLists, findContact, searchContacts } from '../../repos/contacts.js';
import { paidAmountByCurrency } from '../../repos/campaigns.js';
import { cartFigures, emailFigures, eventFigures, outboxDepth } from '../../repos/dashboard.js';
import { cancelEmail, retryEmail } from '../../repos/emailActions.js';
import { emailDetail, findEmail, findEmailWithSite, listEmails, type RenderedMessage } from '../../repos/emails.js';
import { listEvents } from '../../repos/events.js';
import { findProjectById } from '../../repos/projects.js';
import { decodeCursor, encodeCursor, iso, parseJson } from '../../repos/types.js';
import { conflict, requireProject } from '../../services/admin.js';
import type { Deps } from '../../services/context.js';
import { previewStoredEmail, previewTemplate } from '../../services/preview.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];
const errs = errors(401, 403, 404, 409, 422, 500);
const DAY_MS = 86_400_000;
/** How many of a contact's events and e-mails its page shows; the full lists are a filter away. */
const CONTACT_HISTORY = 50;

export async function adminUiRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const db = deps.db.db;

  app.get(
    '/api/admin/ui/meta',
    {
      schema: {
        tags,
        security,
        summary: 'The catalog, rights vocabularies and statuses the admin UI offers in its forms',
        response: { 200: UiMeta, ...errs },
      },
    },
    async () => ({
      ok: true as const,
      catalog: CATALOG.map((e) => ({ event_type: e.event_type, description: e.description, fields: [...e.fields] })),
      extra_event_types: [...EXTRA_EVENT_TYPES],
      cart_types: [...CART_TYPES],
      cart_steps: CART_STEPS.map((s) => ({ step: s.step, delay_minutes: s.delayMinutes })),
      permissions: [...PERMISSIONS],
      known_template_keys: [...KNOWN_TEMPLATE_KEYS],
      routing_keys: allRoutingKeys(),
      endpoints: [...EVENT_ENDPOINTS],
      contact_statuses: ['active', 'unsubscribed', 'invalid', 'admin_blocked'],
      email_statuses: ['scheduled', 'queued', 'sending', 'sent', 'failed', 'cancelled', 'suppressed'],
    }),
  );

  app.get(
    '/api/admin/dashboard',
    {
      schema: {
        tags,
        security,
        summary: 'Dashboard figures: events, e-mails, outbox and cart recovery over the last days (UTC)',
        querystring: DashboardQuery,
        response: { 200: DashboardResponse, ...errs },
      },
    },
    async (req) => {
      const q = req.query as { site_key?: string; days: number };
      const projectId = q.site_key ? (await requireProject(db, q.site_key)).id : undefined;
      const now = deps.clock.now();
      const until = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS; // the end of today, UTC
      const f = { projectId, since: until - q.days * DAY_MS, until, now };
      const [events, emails, outbox, carts, paid] = await Promise.all([
        eventFigures(db, deps.db.dialect, f),
        emailFigures(db, deps.db.dialect, f),
        outboxDepth(db, f),
        cartFigures(db, deps.db.dialect, f),
        paidAmountByCurrency(db, f),
      ]);
      return {
        ok: true as const,
        site_key: q.site_key ?? null,
        since: iso(f.since)!,
        until: iso(f.until)!,
        ...events,
        ...emails,
        outbox,
        carts,
        paid_amount_by_currency: paid,
      };
    },
  );

  app.post(
    '/api/admin/templates/preview',
    {
      schema: {
        tags,
        security,
        summary: 'Render unsaved template source with sample values; 422 names the part and line that does not parse',
        body: PreviewBody,
        response: { 200: PreviewResponse, ...errs },
      },
    },
    async (req) => {
      const b = req.body as PreviewInput;
      const project = await requireProject(db, b.site_key);
      const r = previewTemplate(
        project,
        deps.config.publicUrl,
        { subject: b.subject, html: b.html, text: b.text },
        { eventType: b.event_type, sample: b.sample },
      );
      return { ok: true as const, ...r };
    },
  );

  app.get(
    '/api/admin/emails/:id/preview',
    {
      schema: {
        tags,
        security,
        summary: 'The e-mail as sent, or, before it is rendered, as its template renders it now',
        params: IdParams,
        response: { 200: EmailPreviewResponse, ...errs },
      },
    },
    async (req) => {
      const { id } = req.params as { id: number };
      const row = await findEmail(db, id);
      if (!row) throw notFound(`E-mail ${id}`);
      const stored = parseJson<RenderedMessage | null>(row.rendered, null);
      if (stored) return { ok: true as const, id, stored: true, ...stored };
      const project = await findProjectById(db, row.project_id);
      if (!project) throw notFound(`Project of e-mail ${id}`);
      return {
        ok: true as const,
        id,
        stored: false,
        ...(await previewStoredEmail(db, row, project, deps.config.publicUrl)),
      };
    },
  );

  app.post(
    '/api/admin/emails/:id/cancel',
    {
      schema: {
        tags,
        security,
        summary: 'Cancel a scheduled or queued e-mail (409 once it is being sent or done)',
        params: IdParams,
        response: { 200: EmailActionResponse, ...errs },
      },
    },
    async (req) => {
      const { id } = req.params as { id: number };
      if (!(await cancelEmail(db, id, deps.clock.now())))
        throw await actionRefused(id, 'cancelled', 'only a scheduled or queued e-mail can be cancelled');
      return { ok: true as const, id, status: 'cancelled' };
    },
  );

  app.post(
    '/api/admin/emails/:id/retry',
    {
      schema: {
        tags,
        security,
        summary: 'Send a failed e-mail again now (attempts start over)',
        params: IdParams,
        response: { 200: EmailActionResponse, ...errs },
      },
    },
    async (req) => {
      const { id } = req.params as { id: number };
      if (!(await retryEmail(db, id, deps.clock.now())))
        throw await actionRefused(id, 'retried', 'only a failed e-mail can be retried');
      deps.delivery?.wake();
      return { ok: true as const, id, status: 'queued' };
    },
  );

  async function actionRefused(id: number, verb: string, rule: string) {
    const row = await findEmailWithSite(db, id);
    if (!row) return notFound(`E-mail ${id}`);
    return conflict(`E-mail ${id} is ${emailDetail(row, deps.clock.now()).status} and cannot be ${verb}: ${rule}`);
  }

  app.get(
    '/api/admin/contacts',
    {
      schema: {
        tags,
        security,
        summary: 'Find contacts by (part of) their e-mail address, newest first',
        querystring: ContactsQuery,
        response: {
          200: Type.Object({
            ok: Type.Literal(true),
            items: Type.Array(ContactItem),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...errs,
        },
      },
    },
    async (req) => {
      const q = req.query as { email?: string; site_key?: string; limit: number; cursor?: string };
      const projectId = q.site_key ? (await requireProject(db, q.site_key)).id : undefined;
      const rows = await searchContacts(db, {
        projectId,
        email: q.email?.trim() || undefined,
        limit: q.limit,
        afterId: decodeCursor(q.cursor),
      });
      const items = rows.slice(0, q.limit).map((r) => ({
        id: r.id,
        site_key: r.site_key,
        email: r.email,
        name: r.name,
        status: r.status,
        created_at: iso(r.created_at)!,
        updated_at: iso(r.updated_at)!,
      }));
      return {
        ok: true as const,
        items,
        next_cursor: rows.length > q.limit ? encodeCursor(items[items.length - 1].id) : null,
      };
    },
  );

  app.get(
    '/api/admin/contacts/:id',
    {
      schema: {
        tags,
        security,
        summary: 'One contact with its address books, and its latest events and e-mails',
        params: IdParams,
        response: { 200: ContactDetail, ...errs },
      },
    },
    async (req) => {
      const { id } = req.params as { id: number };
      const c = await findContact(db, id);
      if (!c) throw notFound(`Contact ${id}`);
      const project = (await findProjectById(db, c.project_id))!;
      const [lists, events, emails] = await Promise.all([
        contactLists(db, id),
        listEvents(db, {
          projectId: c.project_id,
          email: c.email,
          order: 'desc',
          limit: CONTACT_HISTORY,
          cursor: null,
        }),
        listEmails(db, { contactId: id, limit: CONTACT_HISTORY, cursor: null }, deps.clock.now()),
      ]);
      return {
        ok: true as const,
        contact: {
          id: c.id,
          site_key: project.site_key,
          email: c.email,
          name: c.name,
          status: c.status,
          fields: parseJson<Record<string, unknown>>(c.fields, {}),
          created_at: iso(c.created_at)!,
          updated_at: iso(c.updated_at)!,
        },
        lists: lists.map((l) => ({ list_id: l.list_id, name: l.name, added_at: iso(l.added_at)! })),
        events: events.items,
        events_more: events.nextId !== null,
        emails: emails.items,
        emails_more: emails.nextId !== null,
      };
    },
  );
}
