// Per-project delivery settings as the admin API, UI and CLI use them (SPEC §11): save (secrets
// encrypted), show (secrets masked), clear, verify the relays and DKIM, send a test e-mail.
import { allEndpointSecrets, updateEndpoint } from '../repos/webhooks.js';
import {
  maskedDelivery,
  prepareDelivery,
  urlWithPassword,
  utcDay,
  type DeliveryInput,
  type DeliverySecrets,
  type StoredSettings,
  type WebhookProvider,
} from '../domain/delivery.js';
import { AppError } from '../errors.js';
import { upsertContact } from '../repos/contacts.js';
import { allDeliveryRows, deleteDeliveryRow, findDeliveryRow, quotaUsed, saveDeliveryRow } from '../repos/delivery.js';
import { insertEmail } from '../repos/emails.js';
import { findTemplateByName } from '../repos/templates.js';
import { iso, parseJson } from '../repos/types.js';
import { checkDkimDns, systemTxtLookup, verifyRelay } from '../delivery/verify.js';
import { requireProject } from './admin.js';
import type { Deps } from './context.js';
import { sampleRequest } from './preview.js';
import { installationSecret, secretBox, type SecretBox } from './secrets.js';

type SecretDeps = Pick<Deps, 'db' | 'config' | 'secret'>;

/** The installation secret every stored secret's key derives from: the same in every process. */
export async function sealingSecret(deps: SecretDeps): Promise<string> {
  return deps.secret ?? installationSecret(deps);
}

/** The box the installation's secrets (relays, DKIM, provider and site webhooks) are sealed in. */
export async function deliveryBox(deps: SecretDeps): Promise<SecretBox> {
  return secretBox(await sealingSecret(deps));
}

async function stored(deps: SecretDeps, projectId: number) {
  const row = await findDeliveryRow(deps.db.db, projectId);
  if (!row) return null;
  const box = await deliveryBox(deps);
  return {
    row,
    settings: parseJson<StoredSettings>(row.settings, null as never),
    secrets: JSON.parse(box.open(row.secrets)) as DeliverySecrets,
  };
}

/**
 * A provider's webhook credentials for a project, decrypted, or null when none are set (issue 14's
 * webhook endpoints check signatures with them).
 */
export async function getProviderWebhookCredentials(
  deps: SecretDeps,
  projectId: number,
  provider: WebhookProvider,
): Promise<Record<string, string> | null> {
  const s = await stored(deps, projectId);
  return s?.secrets.webhooks?.[provider] ?? null;
}

function view(
  deps: Deps,
  project: { id: number; site_key: string },
  s: StoredSettings | null,
  updatedAt: number | null,
) {
  const router = deps.deliveryRouter;
  return {
    ok: true as const,
    site_key: project.site_key,
    configured: s !== null,
    installation_transport: deps.config.smtpUrl ? ('installation' as const) : ('capture' as const),
    ...(s
      ? maskedDelivery(s)
      : {
          primary: null,
          fallback: null,
          from_name: null,
          from_email: null,
          reply_to: null,
          dkim: null,
          daily_quota: null,
          webhooks: {},
        }),
    breaker: router ? router.breakerStates(project.id) : {},
    updated_at: iso(updatedAt),
  };
}

export async function getDelivery(deps: Deps, siteKey: string) {
  const project = await requireProject(deps.db.db, siteKey);
  const row = await findDeliveryRow(deps.db.db, project.id);
  const settings = row ? parseJson<StoredSettings>(row.settings, null as never) : null;
  return {
    ...view(deps, project, settings, row?.updated_at ?? null),
    quota_used_today: await quotaUsed(deps.db.db, project.id, utcDay(deps.clock.now())),
  };
}

export async function putDelivery(deps: Deps, siteKey: string, input: DeliveryInput) {
  const project = await requireProject(deps.db.db, siteKey);
  const previous = await stored(deps, project.id).catch(() => null);
  const { settings, secrets } = prepareDelivery(input, previous);
  const box = await deliveryBox(deps);
  const now = deps.clock.now();
  await saveDeliveryRow(deps.db.db, {
    project_id: project.id,
    settings: JSON.stringify(settings),
    secrets: box.seal(JSON.stringify(secrets)),
    // Strictly newer than the previous save even within one millisecond: caches follow this version.
    updated_at: Math.max(now, (previous?.row.updated_at ?? 0) + 1),
  });
  return getDelivery(deps, siteKey);
}

export async function deleteDelivery(deps: Deps, siteKey: string) {
  const project = await requireProject(deps.db.db, siteKey);
  await deleteDeliveryRow(deps.db.db, project.id);
  return getDelivery(deps, siteKey);
}

export async function verifyDelivery(deps: Deps, siteKey: string) {
  const project = await requireProject(deps.db.db, siteKey);
  const s = await stored(deps, project.id);
  const timeoutMs = deps.config.smtpTimeoutMs;
  if (!s) {
    const url = deps.config.smtpUrl;
    const primary = url ? await verifyRelay(url, { timeoutMs, requireTLS: false }) : { ok: true, reply: 'capture' };
    return { ok: primary.ok, transport: url ? 'installation' : 'capture', primary };
  }
  const relay = (role: 'primary' | 'fallback') => {
    const t = s.settings[role]!;
    return verifyRelay(urlWithPassword(t.url, s.secrets[role]), { timeoutMs, requireTLS: t.starttls === 'required' });
  };
  const [primary, fallback] = await Promise.all([relay('primary'), s.settings.fallback ? relay('fallback') : null]);
  const dkim = s.settings.dkim ? await checkDkimDns(s.settings.dkim, deps.dnsTxt ?? systemTxtLookup()) : null;
  return {
    ok: primary.ok && (fallback?.ok ?? true),
    primary,
    ...(fallback ? { fallback } : {}),
    ...(dkim ? { dkim } : {}),
  };
}

export async function testSend(deps: Deps, siteKey: string, body: { template: string; to: string }) {
  const db = deps.db.db;
  const project = await requireProject(db, siteKey);
  const template = await findTemplateByName(db, project.id, body.template);
  if (!template)
    throw new AppError(422, 'validation_error', `No template "${body.template}" in this project`, {
      event_type: null,
      missing_fields: [],
      required_fields: [],
      invalid_fields: { template: 'no such template in this project' },
    });
  const now = deps.clock.now();
  const contact = await upsertContact(db, project.id, { email: body.to }, now);
  const sample = sampleRequest(template.name);
  const id = await insertEmail(db, {
    project_id: project.id,
    kind: 'transactional',
    template_id: template.id,
    template_key: template.name,
    contact_id: contact.id,
    to_email: contact.email,
    to_name: null,
    order_id: null,
    event_id: null,
    campaign_id: null,
    chain_step: null,
    context: JSON.stringify({ ...sample, email: contact.email }),
    status: 'queued',
    due_at: now,
    attempts: 0,
    is_test: 1,
    created_at: now,
    updated_at: now,
  });
  deps.delivery?.wake();
  return { ok: true as const, scheduled_email_id: id, test: true as const };
}

/**
 * Re-encrypts every project's secrets under the current installation secret (`edu-gateway secrets
 * rotate`): rows sealed under `previousSecret` (SECRET_KEY_PREVIOUS) are opened with it and sealed anew;
 * rows already under the current key are left alone, so the command can be run twice.
 */
export async function rotateSecrets(deps: SecretDeps, previousSecret: string) {
  const current = await deliveryBox(deps);
  const previous = secretBox(previousSecret);
  const out = {
    rotated: 0,
    current: 0,
    failed: [] as number[],
    webhooks: { rotated: 0, current: 0, failed: [] as number[] },
  };
  // Site webhook signing secrets (issue 15) are sealed in the same box and rotate with it.
  for (const e of await allEndpointSecrets(deps.db.db)) {
    if (e.secret_sealed.split('.')[1] === current.keyId) {
      out.webhooks.current++;
      continue;
    }
    try {
      const plain = previous.open(e.secret_sealed);
      await updateEndpoint(deps.db.db, e.id, { secret_sealed: current.seal(plain) });
      out.webhooks.rotated++;
    } catch {
      out.webhooks.failed.push(e.id);
    }
  }
  for (const row of await allDeliveryRows(deps.db.db)) {
    if (row.secrets.split('.')[1] === current.keyId) {
      out.current++;
      continue;
    }
    try {
      const plain = previous.open(row.secrets);
      await saveDeliveryRow(deps.db.db, { ...row, secrets: current.seal(plain) });
      out.rotated++;
    } catch {
      out.failed.push(row.project_id);
    }
  }
  return out;
}
