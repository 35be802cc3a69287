// Administering a project's webhook endpoints (SPEC §13): the secret is made here, shown once and kept
// sealed; the URL is checked when saved (and again before every send, by the sender).
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../../db/schema.js';
import { hostOf, isPrivateAddress, urlProblem } from '../../domain/webhooks.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { decodeCursor, encodeCursor, iso, parseJson } from '../../repos/types.js';
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
} from '../../repos/webhooks.js';
import type { CreateWebhookBody, DeliveriesQuery, PatchWebhookBody } from '../../schemas/webhooks.js';
import { PAGE_SIZE } from '../../schemas/common.js';
import { requireProject } from '../admin.js';
import type { Deps } from '../context.js';
import { deliveryBox } from '../delivery.js';
import { systemResolver } from './send.js';

const badUrl = (problem: string) =>
  validationError(`url ${problem}`, { invalid_fields: { url: problem }, required_fields: ['url', 'events'] });

/**
 * Refuses a URL that is not http(s) or points at a loopback or private address. A host name is
 * resolved: one that resolves to a private address is refused; one that does not resolve (yet) is
 * accepted, since the sender checks again before every attempt.
 */
async function checkUrl(deps: Deps, raw: string): Promise<string> {
  const problem = urlProblem(raw);
  if (problem) throw badUrl(problem);
  if (deps.config.webhooks.allowPrivate) return raw;
  const host = hostOf(new URL(raw));
  const refused = 'points at a loopback or private address (WEBHOOKS_ALLOW_PRIVATE is not set)';
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

export async function createWebhook(deps: Deps, siteKey: string, body: CreateWebhookBody) {
  const db = deps.db.db;
  const project = await requireProject(db, siteKey);
  const url = await checkUrl(deps, body.url);
  // 24 random bytes, as Standard Webhooks secrets are: whsec_ + base64.
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const id = await insertEndpoint(
    db,
    {
      project_id: project.id,
      url,
      description: body.description ?? null,
      events: JSON.stringify(body.events),
      secret_sealed: (await deliveryBox(deps)).seal(secret),
    },
    deps.clock.now(),
  );
  return { ok: true as const, id, secret };
}

export async function listWebhooks(deps: Deps, siteKey: string) {
  const project = await requireProject(deps.db.db, siteKey);
  const rows = await listEndpoints(deps.db.db, project.id);
  return { ok: true as const, items: rows.map((r) => webhookView(r, project.site_key)) };
}

async function requireEndpoint(deps: Deps, siteKey: string, id: number) {
  const project = await requireProject(deps.db.db, siteKey);
  const endpoint = await findEndpoint(deps.db.db, project.id, id);
  if (!endpoint) throw notFound(`Webhook ${id}`);
  return { project, endpoint };
}

export async function changeWebhook(deps: Deps, siteKey: string, id: number, body: PatchWebhookBody) {
  const { project, endpoint } = await requireEndpoint(deps, siteKey, id);
  const now = deps.clock.now();
  const set: Parameters<typeof updateEndpoint>[2] = { updated_at: now };
  if (body.url !== undefined) set.url = await checkUrl(deps, body.url);
  if (body.events !== undefined) set.events = JSON.stringify(body.events);
  if (body.description !== undefined) set.description = body.description;
  if (body.enabled === true)
    Object.assign(set, { status: 'active', failing_since: null, disabled_at: null, disabled_reason: null });
  if (body.enabled === false)
    Object.assign(set, { status: 'disabled', disabled_at: now, disabled_reason: 'disabled by an administrator' });
  await updateEndpoint(deps.db.db, endpoint.id, set);
  const after = await findEndpoint(deps.db.db, project.id, id);
  return { ok: true as const, webhook: webhookView(after!, project.site_key) };
}

export async function removeWebhook(deps: Deps, siteKey: string, id: number) {
  const project = await requireProject(deps.db.db, siteKey);
  const gone = await deps.db.db.transaction().execute((trx) => deleteEndpoint(trx, project.id, id));
  if (!gone) throw notFound(`Webhook ${id}`);
  return { ok: true as const };
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
  const { endpoint } = await requireEndpoint(deps, siteKey, id);
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
export async function resend(deps: Deps, siteKey: string, id: number, deliveryId: number) {
  const { endpoint } = await requireEndpoint(deps, siteKey, id);
  const d = await findDelivery(deps.db.db, endpoint.id, deliveryId);
  if (!d) throw notFound(`Delivery ${deliveryId}`);
  if (!(await resendDelivery(deps.db.db, d.id, deps.clock.now())))
    throw new AppError(409, 'conflict', `Delivery ${deliveryId} is being sent right now; try again in a moment`);
  return { ok: true as const, id: Number(d.id), status: 'pending' as const };
}
