// Provider webhooks (SPEC §12): `POST /api/webhooks/{provider}/{site_key}`. The project's credentials
// for the provider authenticate the request the provider's way; only then is anything read or stored.
import { ses } from '../reports/providers/ses.js';
import { mailgun, postmark, sendgrid, unisenderGo } from '../reports/providers/others.js';
import type { Credentials, HttpGet, ProviderResult, WebhookRequest } from '../reports/providers/types.js';
import type { WebhookProvider } from '../domain/statuses.js';
import { AppError, notFound } from '../errors.js';
import { findProjectBySiteKey } from '../repos/projects.js';
import { bounceContext, recordReport } from './reports.js';
import { getProviderWebhookCredentials } from './delivery.js';
import type { Deps } from './context.js';

/**
 * The provider's credentials of a project (`webhooks.<provider>` of its delivery settings, SPEC §11).
 * Null: none configured, and every request is refused. Tests inject their own.
 */
export type WebhookCredentialsLookup = (
  deps: Deps,
  projectId: number,
  provider: WebhookProvider,
) => Promise<Credentials | null>;

/** The project's delivery settings (`webhooks`, issue 13), decrypted; none set: every webhook is refused. */
const storedWebhookCredentials: WebhookCredentialsLookup = (deps, projectId, provider) =>
  getProviderWebhookCredentials(deps, projectId, provider);

/** GET over https, bounded in time and size (the SNS certificate and subscription confirmation). */
export const httpsGet: HttpGet = async (url) => {
  if (!url.startsWith('https://')) throw new Error('only https URLs are fetched');
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: 'error' });
  if (!res.ok) throw new Error(`GET ${new URL(url).host} answered ${res.status}`);
  const text = await res.text();
  if (text.length > 64 * 1024) throw new Error('the answer is too large');
  return text;
};

async function verifyAndRead(
  provider: WebhookProvider,
  req: WebhookRequest,
  creds: Credentials,
  deps: Deps,
): Promise<ProviderResult> {
  switch (provider) {
    case 'ses':
      return ses(req, creds, { httpGet: deps.httpGet ?? httpsGet });
    case 'postmark':
      return postmark(req, creds);
    case 'sendgrid':
      return sendgrid(req, creds);
    case 'mailgun':
      return mailgun(req, creds);
    case 'unisender_go':
      return unisenderGo(req, creds);
  }
}

export async function receiveProviderWebhook(
  deps: Deps,
  provider: WebhookProvider,
  siteKey: string,
  req: WebhookRequest,
) {
  const db = deps.db.db;
  const project = await findProjectBySiteKey(db, siteKey);
  if (!project) throw notFound(`Project ${siteKey}`);
  const creds = await (deps.webhookCredentials ?? storedWebhookCredentials)(deps, project.id, provider);
  if (!creds)
    throw new AppError(401, 'unauthorized', `No ${provider} webhook credentials are configured for ${siteKey}`);
  const result = await verifyAndRead(provider, req, creds, deps);
  if (!result.ok) {
    throw result.status === 401
      ? new AppError(401, 'unauthorized', `Webhook refused: ${result.message}`)
      : new AppError(400, 'bad_request', result.message);
  }
  const ctx = bounceContext(deps);
  const raw = req.body.toString('utf8');
  let stored = 0;
  let duplicates = 0;
  let matched = 0;
  for (const r of result.reports) {
    const o = await recordReport(ctx, { ...r, source: provider, projectId: project.id, raw });
    if (o.duplicate) duplicates++;
    else stored++;
    if (o.emailId !== null) matched++;
  }
  return {
    ok: true as const,
    received: result.reports.length,
    stored,
    duplicates,
    matched,
    ...(result.note ? { note: result.note } : {}),
  };
}
