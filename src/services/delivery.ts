// Per-project delivery settings as the admin API, UI and CLI use them (SPEC §11): save (secrets
// encrypted), show (secrets masked), clear, verify the relays and DKIM, send a test e-mail.
import { allEndpointSecrets, updateEndpoint } from '../repos/siteWebhooks.js';
import {
  deliveryWarnings,
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
import type { CheckReason } from '../domain/errorCatalog.js';
import { upsertContact } from '../repos/contacts.js';
import {
  allDeliveryRows,
  deleteDeliveryRow,
  findDeliveryRow,
  quotaUsed,
  saveDeliveryRow,
  sendsMarketing,
} from '../repos/delivery.js';
import { insertEmail } from '../repos/emails.js';
import { findTemplateByName } from '../repos/templates.js';
import { iso, parseJson, type Executor } from '../repos/types.js';
import type { Project } from '../db/schema.js';
import { checkDkimDns, systemTxtLookup, verifyRelay } from '../delivery/verify.js';
import { requireProject } from './admin.js';
import { audited, type AuditActor, type Note } from './audit.js';
import { requireSenderDomains } from './senderDomains.js';
import type { Deps } from './context.js';
import { sampleRequest } from './preview.js';
import { versionFor } from './templates.js';
import { parseVariables } from '../domain/templateContract.js';
import { installationSecret, secretBox, type SecretBox } from './secrets.js';
import { checkRelayAddresses, isPrivateRelayHost, relaysMayBePrivate } from './relayAddress.js';

type SecretDeps = Pick<Deps, 'db' | 'config' | 'secret'>;

/** The installation secret every stored secret's key derives from: the same in every process. */
export async function sealingSecret(deps: SecretDeps): Promise<string> {
  return deps.secret ?? installationSecret(deps);
}

/** The box the installation's secrets (relays, DKIM, provider and site webhooks) are sealed in. */
export async function deliveryBox(deps: SecretDeps): Promise<SecretBox> {
  return secretBox(await sealingSecret(deps));
}

/** A project's stored settings with its secrets opened; the box is only asked for when there is a row. */
async function stored(db: Executor, projectId: number, openBox: () => Promise<SecretBox>) {
  const row = await findDeliveryRow(db, projectId);
  if (!row) return null;
  const box = await openBox();
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
  const s = await stored(deps.db.db, projectId, () => deliveryBox(deps));
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

/** The settings as GET shows them, read through `db` (the transaction of a change). */
async function settingsView(deps: Deps, db: Executor, project: { id: number; site_key: string }) {
  const row = await findDeliveryRow(db, project.id);
  const settings = row ? parseJson<StoredSettings>(row.settings, null as never) : null;
  return {
    ...view(deps, project, settings, row?.updated_at ?? null),
    quota_used_today: await quotaUsed(db, project.id, utcDay(deps.clock.now())),
    warnings: deliveryWarnings({ dkim: settings?.dkim ?? null, sendsMarketing: await sendsMarketing(db, project.id) }),
  };
}

/**
 * What the audit log keeps of a settings view: the settings, masked as the API shows them (the
 * breaker states and the quota used are not settings). `record` redacts the masked members again.
 */
function auditedSettings(v: Awaited<ReturnType<typeof settingsView>>) {
  const { ok: _ok, breaker: _breaker, quota_used_today: _quota, warnings: _warnings, ...settings } = v;
  return settings;
}

/** Changes a project's settings with its audit row (the settings view before and after) in one transaction. */
function changeSettings(
  deps: Deps,
  who: AuditActor,
  siteKey: string,
  action: 'delivery.set' | 'delivery.clear',
  change: (trx: Executor, project: Project, note: Note) => Promise<void>,
) {
  return audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    const before = await settingsView(deps, trx, project);
    await change(trx, project, note);
    const after = await settingsView(deps, trx, project);
    note({
      action,
      site_key: project.site_key,
      target: `delivery:${project.id}`,
      before: auditedSettings(before),
      after: auditedSettings(after),
    });
    return after;
  });
}

export async function getDelivery(deps: Deps, siteKey: string) {
  const project = await requireProject(deps.db.db, siteKey);
  return settingsView(deps, deps.db.db, project);
}

/** `owner`: an owner's (or the CLI's) sender approves its domains, as PATCH of the project does (SPEC §21). */
export async function putDelivery(
  deps: Deps,
  who: AuditActor,
  siteKey: string,
  input: DeliveryInput,
  opts = { owner: true },
) {
  // Before the transaction (names are resolved): relays on the gateway's own network only when allowed.
  await checkRelayAddresses(deps, await requireProject(deps.db.db, siteKey), [
    { member: 'primary.smtp_url', url: input.primary.smtp_url },
    ...(input.fallback ? [{ member: 'fallback.smtp_url', url: input.fallback.smtp_url }] : []),
  ]);
  // Before the transaction: the installation secret may be read from (or made in) the database.
  const box = await deliveryBox(deps);
  return changeSettings(deps, who, siteKey, 'delivery.set', async (trx, project, note) => {
    await requireSenderDomains(trx, { now: deps.clock.now(), who, owner: opts.owner, note }, project, {
      from_email: input.from_email,
      reply_to: input.reply_to,
    });
    const previous = await stored(trx, project.id, async () => box).catch(() => null);
    const { settings, secrets } = prepareDelivery(input, previous);
    await saveDeliveryRow(trx, {
      project_id: project.id,
      settings: JSON.stringify(settings),
      secrets: box.seal(JSON.stringify(secrets)),
      // Strictly newer than the previous save even within one millisecond: caches follow this version.
      updated_at: Math.max(deps.clock.now(), (previous?.row.updated_at ?? 0) + 1),
    });
  });
}

export function deleteDelivery(deps: Deps, who: AuditActor, siteKey: string) {
  return changeSettings(deps, who, siteKey, 'delivery.clear', async (trx, project) => {
    await deleteDeliveryRow(trx, project.id);
  });
}

/** Only what the audit log keeps of a check: passed or not and the server's reply. */
const outcome = (c: { ok: boolean; reply: string }) => ({ ok: c.ok, reply: c.reply });

/**
 * Checks the relays (and the DKIM record) over the network with no transaction open, then writes the
 * outcome to the audit log: nothing else is stored.
 */
export async function verifyDelivery(deps: Deps, who: AuditActor, siteKey: string) {
  const project = await requireProject(deps.db.db, siteKey);
  const result = await checkRelays(deps, project);
  await audited(deps, who, async (_trx, note) =>
    note({
      action: 'delivery.verify',
      site_key: project.site_key,
      target: `delivery:${project.id}`,
      after: {
        ok: result.ok,
        ...(result.transport ? { transport: result.transport } : {}),
        primary: outcome(result.primary),
        ...(result.fallback ? { fallback: outcome(result.fallback) } : {}),
        ...(result.dkim ? { dkim: outcome(result.dkim) } : {}),
      },
    }),
  );
  return result;
}

interface VerifyResult {
  ok: boolean;
  transport?: string;
  primary: { ok: boolean; reason: CheckReason; reply: string };
  fallback?: { ok: boolean; reason: CheckReason; reply: string };
  dkim?: Awaited<ReturnType<typeof checkDkimDns>>;
}

async function checkRelays(deps: Deps, project: Project): Promise<VerifyResult> {
  const s = await stored(deps.db.db, project.id, () => deliveryBox(deps));
  const timeoutMs = deps.config.smtpTimeoutMs;
  if (!s) {
    const url = deps.config.smtpUrl;
    const primary = url
      ? await verifyRelay(url, { timeoutMs, requireTLS: false })
      : { ok: true, reason: 'capture' as const, reply: 'capture' };
    return { ok: primary.ok, transport: url ? 'installation' : 'capture', primary };
  }
  const relay = async (role: 'primary' | 'fallback') => {
    const t = s.settings[role]!;
    // Resolved again: a name saved while it pointed outside may point inside now (SPEC §21).
    if (!relaysMayBePrivate(deps, project) && (await isPrivateRelayHost(deps, t.url)))
      return {
        ok: false,
        reason: 'address_private' as const,
        reply: 'not checked: loopback, private or link-local address',
      };
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

/** Queues one test e-mail: the contact, the e-mail and the audit row commit together. */
export async function testSend(
  deps: Deps,
  who: AuditActor,
  siteKey: string,
  body: { template: string; to: string; version?: number },
) {
  const id = await audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    // The sender it would leave as must be the project's; a test send approves nothing, even an owner's.
    const row = await findDeliveryRow(trx, project.id);
    const settings = row ? parseJson<StoredSettings | null>(row.settings, null) : null;
    await requireSenderDomains(trx, { now: deps.clock.now(), who, owner: false, note }, project, {
      from_email: settings?.from_email ?? project.from_email,
    });
    const template = await findTemplateByName(trx, project.id, body.template);
    if (!template)
      throw new AppError(
        422,
        'validation_error',
        { reason: 'test_template_unknown', params: { template: body.template, field: 'template' } },
        {
          event_type: null,
          missing_fields: [],
          required_fields: [],
          invalid_fields: { template: 'no such template in this project' },
        },
      );
    const now = deps.clock.now();
    const contact = await upsertContact(trx, project.id, { email: body.to }, now);
    // A draft can be tried before it is published (SPEC §16); sample values fill every variable.
    const version = await versionFor(trx, template, body.version);
    const sample = sampleRequest(template.name, project.locale, parseVariables(version.variables) ?? []);
    const id = await insertEmail(trx, {
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
      is_test: true,
      template_version: version.version,
      created_at: now,
      updated_at: now,
    });
    note({
      action: 'delivery.test_send',
      site_key: project.site_key,
      target: `email:${id}`,
      after: { scheduled_email_id: id, to: contact.email, template: template.name },
    });
    return id;
  });
  deps.delivery?.wake();
  return { ok: true as const, scheduled_email_id: id, test: true as const };
}

/**
 * Re-encrypts every project's secrets under the current installation secret (`edu-gateway secrets
 * rotate`): rows sealed under `previousSecret` (SECRET_KEY_PREVIOUS) are opened with it and sealed anew;
 * rows already under the current key are left alone, so the command can be run twice. One transaction
 * with its audit row (the counts): a rotation commits whole or not at all.
 */
export async function rotateSecrets(deps: Deps, who: AuditActor, previousSecret: string) {
  // Before the transaction: the installation secret may be read from the database.
  const current = await deliveryBox(deps);
  const previous = secretBox(previousSecret);
  return audited(deps, who, async (trx, note) => {
    const out = {
      rotated: 0,
      current: 0,
      failed: [] as number[],
      webhooks: { rotated: 0, current: 0, failed: [] as number[] },
    };
    // Site webhook signing secrets (issue 15) are sealed in the same box and rotate with it.
    for (const e of await allEndpointSecrets(trx)) {
      if (e.secret_sealed.split('.')[1] === current.keyId) {
        out.webhooks.current++;
        continue;
      }
      let plain: string;
      try {
        plain = previous.open(e.secret_sealed);
      } catch {
        out.webhooks.failed.push(e.id);
        continue;
      }
      await updateEndpoint(trx, e.id, { secret_sealed: current.seal(plain) });
      out.webhooks.rotated++;
    }
    for (const row of await allDeliveryRows(trx)) {
      if (row.secrets.split('.')[1] === current.keyId) {
        out.current++;
        continue;
      }
      let plain: string;
      try {
        plain = previous.open(row.secrets);
      } catch {
        out.failed.push(row.project_id);
        continue;
      }
      await saveDeliveryRow(trx, { ...row, secrets: current.seal(plain) });
      out.rotated++;
    }
    const counts = (c: { rotated: number; current: number; failed: number[] }) => ({
      rotated: c.rotated,
      current: c.current,
      failed: c.failed.length,
      failed_ids: c.failed,
    });
    note({
      action: 'secrets.rotate',
      after: { projects: counts(out), webhook_endpoints: counts(out.webhooks), key_id: current.keyId },
    });
    return out;
  });
}
