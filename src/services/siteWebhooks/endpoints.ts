// Administering a project's webhook endpoints (SPEC §13): the secret is made here, shown once and kept
// sealed; the URL is checked when saved (and again before every send, by the sender).
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Project, WebhookDeliveryRow, WebhookEndpointRow } from '../../db/schema.js';
import { hostOf, isPrivateAddress, urlProblem, type UrlProblem } from '../../domain/siteWebhooks.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { decodeCursor, encodeCursor, iso, parseJson, type Executor } from '../../repos/types.js';
import {
  attemptsOf,
  deleteEndpoint,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  resendDelivery,
  updateEndpoint,
} from '../../repos/siteWebhooks.js';
import type { CreateWebhookBody, DeliveriesQuery, PatchWebhookBody } from '../../schemas/siteWebhooks.js';
import { PAGE_SIZE } from '../../schemas/common.js';
import { requireProject } from '../admin.js';
import { audited, type AuditActor } from '../audit.js';
import type { Deps } from '../context.js';
import { deliveryBox } from '../delivery.js';
import { systemResolver } from './send.js';

const badUrl = (problem: UrlProblem) =>
  validationError(
    { reason: problem.reason, params: { field: 'url' } },
    { invalid_fields: { url: problem.text }, required_fields: ['url', 'events'] },
  );

/**
 * Refuses a URL that is not http(s) or points at a loopback or private address. A host name is
 * resolved: one that resolves to a private address is refused; one that does not resolve (yet) is
 * accepted, since the sender checks again before every attempt.
 */
async function checkUrl(deps: Deps, project: Project, raw: string): Promise<string> {
  const problem = urlProblem(raw);
  if (problem) throw badUrl(problem);
  if (deps.config.webhooks.allowPrivate || project.allow_private_webhooks) return raw;
  const host = hostOf(new URL(raw));
  const refused: UrlProblem = {
    reason: 'webhook_url_private',
    text: "points at a loopback or private address (an owner may allow those for this project: the project's allow_private_webhooks)",
  };
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw badUrl(refused);
    return raw;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) throw badUrl(refused);
  let addresses: string[];
  try {
    addresses = await (deps.resolveHost ?? systemResolver)(host);
  } catch {
    return raw;
  }
  if (addresses.some(isPrivateAddress)) throw badUrl(refused);
  return raw;
}

export function webhookView(e: WebhookEndpointRow, siteKey: string) {
  return {
    id: Number(e.id),
    site_key: siteKey,
    url: e.url,
    description: e.description,
    events: parseJson<string[]>(e.events, []) as never,
    status: e.status,
    failing_since: iso(e.failing_since),
    disabled_at: iso(e.disabled_at),
    disabled_reason: e.disabled_reason,
    created_at: iso(e.created_at)!,
    updated_at: iso(e.updated_at)!,
  };
}

export async function createWebhook(deps: Deps, who: AuditActor, siteKey: string, body: CreateWebhookBody) {
  const project = await requireProject(deps.db.db, siteKey);
  // Before the transaction: the host name is resolved, and the installation secret may be read.
  const url = await checkUrl(deps, project, body.url);
  const box = await deliveryBox(deps);
  // 24 random bytes, as Standard Webhooks secrets are: whsec_ + base64.
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const id = await audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    const id = await insertEndpoint(
      trx,
      {
        project_id: project.id,
        url,
        description: body.description ?? null,
        events: JSON.stringify(body.events),
        secret_sealed: box.seal(secret),
      },
      deps.clock.now(),
    );
    // The view has no secret: the audit log never sees it.
    const after = webhookView((await findEndpoint(trx, project.id, id))!, project.site_key);
    note({ action: 'webhook.create', site_key: project.site_key, target: `webhook:${id}`, after });
    return id;
  });
  return { ok: true as const, id, secret };
}

export async function listWebhooks(deps: Deps, siteKey: string) {
  const project = await requireProject(deps.db.db, siteKey);
  const rows = await listEndpoints(deps.db.db, project.id);
  return { ok: true as const, items: rows.map((r) => webhookView(r, project.site_key)) };
}

async function requireEndpoint(db: Executor, siteKey: string, id: number) {
  const project = await requireProject(db, siteKey);
  const endpoint = await findEndpoint(db, project.id, id);
  if (!endpoint) throw notFound(`Webhook ${id}`);
  return { project, endpoint };
}

export async function changeWebhook(deps: Deps, who: AuditActor, siteKey: string, id: number, body: PatchWebhookBody) {
  // An unknown endpoint is 404 whatever the body; the URL's host is resolved outside the transaction.
  const { project: current } = await requireEndpoint(deps.db.db, siteKey, id);
  const url = body.url === undefined ? undefined : await checkUrl(deps, current, body.url);
  return audited(deps, who, async (trx, note) => {
    const { project, endpoint } = await requireEndpoint(trx, siteKey, id);
    const now = deps.clock.now();
    const set: Parameters<typeof updateEndpoint>[2] = { updated_at: now };
    if (url !== undefined) set.url = url;
    if (body.events !== undefined) set.events = JSON.stringify(body.events);
    if (body.description !== undefined) set.description = body.description;
    if (body.enabled === true)
      Object.assign(set, { status: 'active', failing_since: null, disabled_at: null, disabled_reason: null });
    if (body.enabled === false)
      Object.assign(set, { status: 'disabled', disabled_at: now, disabled_reason: 'disabled by an administrator' });
    await updateEndpoint(trx, endpoint.id, set);
    const after = webhookView((await findEndpoint(trx, project.id, id))!, project.site_key);
    note({
      action: 'webhook.update',
      site_key: project.site_key,
      target: `webhook:${id}`,
      before: webhookView(endpoint, project.site_key),
      after,
    });
    return { ok: true as const, webhook: after };
  });
}

export async function removeWebhook(deps: Deps, who: AuditActor, siteKey: string, id: number) {
  return audited(deps, who, async (trx, note) => {
    const { project, endpoint } = await requireEndpoint(trx, siteKey, id);
    if (!(await deleteEndpoint(trx, project.id, id))) throw notFound(`Webhook ${id}`);
    note({
      action: 'webhook.delete',
      site_key: project.site_key,
      target: `webhook:${id}`,
      before: webhookView(endpoint, project.site_key),
    });
    return { ok: true as const };
  });
}

function deliveryView(d: WebhookDeliveryRow, attempts: Awaited<ReturnType<typeof attemptsOf>>) {
  return {
    id: Number(d.id),
    webhook_id: d.msg_id,
    type: d.kind,
    status: d.status,
    attempts: Number(d.attempts),
    next_attempt_at: d.status === 'pending' ? iso(d.due_at) : null,
    delivered_at: iso(d.delivered_at),
    last_error: d.last_error,
    created_at: iso(d.created_at)!,
    data: { ...parseJson<Record<string, unknown>>(d.data, {}), sequence: Number(d.id) },
    attempts_log: attempts.map((a) => ({
      at: iso(a.at)!,
      status_code: a.status_code === null ? null : Number(a.status_code),
      latency_ms: Number(a.latency_ms),
      error: a.error,
      response_excerpt: a.response_excerpt,
    })),
  };
}

export async function webhookDeliveries(deps: Deps, siteKey: string, id: number, q: DeliveriesQuery) {
  const { endpoint } = await requireEndpoint(deps.db.db, siteKey, id);
  const limit = q.limit ?? PAGE_SIZE;
  const rows = await listDeliveries(deps.db.db, endpoint.id, { limit: limit + 1, beforeId: decodeCursor(q.cursor) });
  const page = rows.slice(0, limit);
  const attempts = await attemptsOf(
    deps.db.db,
    page.map((r) => Number(r.id)),
  );
  return {
    ok: true as const,
    items: page.map((d) =>
      deliveryView(
        d,
        attempts.filter((a) => Number(a.delivery_id) === Number(d.id)),
      ),
    ),
    next_cursor: rows.length > limit ? encodeCursor(Number(page[page.length - 1].id)) : null,
  };
}

/** Due again now with the same webhook-id (the site de-duplicates on it); refused while being sent. */
export async function resend(deps: Deps, who: AuditActor, siteKey: string, id: number, deliveryId: number) {
  return audited(deps, who, async (trx, note) => {
    const { project, endpoint } = await requireEndpoint(trx, siteKey, id);
    const d = await findDelivery(trx, endpoint.id, deliveryId);
    if (!d) throw notFound(`Delivery ${deliveryId}`);
    if (!(await resendDelivery(trx, d.id, deps.clock.now())))
      throw new AppError(409, 'conflict', { reason: 'webhook_delivery_busy', params: { delivery: deliveryId } });
    note({
      action: 'webhook.resend',
      site_key: project.site_key,
      target: `webhook_delivery:${Number(d.id)}`,
      before: { webhook_id: id, type: d.kind, status: d.status, attempts: Number(d.attempts) },
      after: { webhook_id: id, type: d.kind, status: 'pending', attempts: Number(d.attempts) },
    });
    return { ok: true as const, id: Number(d.id), status: 'pending' as const };
  });
}
