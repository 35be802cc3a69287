// Per-project delivery settings (SPEC §11): what a valid setting is, what of it is secret, and how the
// stored form is shown with every secret masked. Pure functions; the service encrypts and stores.
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { validationError, type ErrorReason } from '../errors.js';

export const TRANSPORT_ROLES = ['primary', 'fallback'] as const;
export type TransportRole = (typeof TRANSPORT_ROLES)[number];
/** Where an attempt went (SPEC §11 attempts_log). */
export const ATTEMPT_TRANSPORTS = ['primary', 'fallback', 'installation', 'capture'] as const;
export type AttemptTransport = (typeof ATTEMPT_TRANSPORTS)[number];
export const STARTTLS_MODES = ['required', 'opportunistic'] as const;

/**
 * What the Delivery page warns about (GET …/delivery `warnings`). `marketing_without_dkim`: the project
 * sends cart or campaign e-mail without a DKIM key, so no receiver offers one-click unsubscribe
 * (RFC 8058 §4 needs a signature over List-Unsubscribe and List-Unsubscribe-Post).
 */
export const DELIVERY_WARNINGS = ['marketing_without_dkim'] as const;
export type DeliveryWarning = (typeof DELIVERY_WARNINGS)[number];

export function deliveryWarnings(s: { dkim: unknown; sendsMarketing: boolean }): DeliveryWarning[] {
  return s.sendsMarketing && !s.dkim ? ['marketing_without_dkim'] : [];
}
export type StartTlsMode = (typeof STARTTLS_MODES)[number];
// The providers are defined once, with the report sources (SPEC §12).
import { WEBHOOK_PROVIDERS, type WebhookProvider } from './statuses.js';
export { WEBHOOK_PROVIDERS, type WebhookProvider };

/** Which member of each provider's credentials is a secret (masked); the others are shown as they are. */
const WEBHOOK_SECRET_MEMBER: Record<WebhookProvider, string | null> = {
  postmark: 'password',
  mailgun: 'signing_key',
  sendgrid: null,
  ses: null,
  unisender_go: 'api_key',
};

export interface TransportInput {
  smtp_url: string;
  pool_size?: number;
  rate_per_second?: number;
  starttls?: StartTlsMode;
}

export interface DeliveryInput {
  primary: TransportInput;
  fallback?: TransportInput;
  from_name?: string;
  from_email?: string;
  reply_to?: string;
  dkim?: { domain: string; selector: string; private_key?: string };
  daily_quota?: number;
  webhooks?: Partial<Record<WebhookProvider, Record<string, string>>>;
}

/** A transport as stored: its URL without the password. */
export interface StoredTransport {
  url: string;
  pool_size: number;
  rate_per_second: number | null;
  starttls: StartTlsMode;
  password_last4: string | null;
}

export interface StoredSettings {
  primary: StoredTransport;
  fallback: StoredTransport | null;
  from_name: string | null;
  from_email: string | null;
  reply_to: string | null;
  dkim: { domain: string; selector: string; fingerprint: string; public_key: string; key_type: string } | null;
  daily_quota: number | null;
  /** Provider webhook credentials, masked: secret members as `<member>_last4`. */
  webhooks: Partial<Record<WebhookProvider, Record<string, string>>>;
}

/** Decrypted: never leaves the process except to the relay or a webhook signature check. */
export interface DeliverySecrets {
  primary?: string;
  fallback?: string;
  dkim?: string;
  webhooks?: Partial<Record<WebhookProvider, Record<string, string>>>;
}

export const DEFAULT_POOL_SIZE = 5;

/** What a masked secret shows: its last 4 characters, never more than a quarter of a short one. */
export function last4(secret: string): string {
  return secret.length >= 12 ? secret.slice(-4) : secret.length >= 8 ? secret.slice(-2) : '';
}

function splitUrl(raw: string, member: string): { url: URL; password: string | null } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw validationError(
      { reason: 'smtp_url_invalid', params: { field: member } },
      { invalid_fields: { [member]: 'not a valid URL' } },
    );
  }
  const problem: [ErrorReason, string] | null =
    url.protocol !== 'smtp:' && url.protocol !== 'smtps:'
      ? ['smtp_url_scheme', 'must start with smtp:// or smtps://']
      : !url.hostname
        ? ['smtp_url_no_host', 'has no host']
        : url.pathname && url.pathname !== '/'
          ? ['smtp_url_path', 'must not have a path']
          : url.hash
            ? ['smtp_url_fragment', 'must not have a fragment']
            : // Options such as ?proxy= or ?localAddress= would steer the connection (SPEC §21).
              url.search
              ? ['smtp_url_query', 'must not have a query string (?…)']
              : null;
  if (problem)
    throw validationError(
      { reason: problem[0], params: { field: member } },
      { invalid_fields: { [member]: problem[1] } },
    );
  const password = url.password ? decodeURIComponent(url.password) : null;
  url.password = '';
  return { url, password };
}

/** The URL the transport connects with: the stored one with its password put back. */
export function urlWithPassword(stored: string, password: string | undefined): string {
  if (!password) return stored;
  const u = new URL(stored);
  u.password = encodeURIComponent(password);
  return u.toString();
}

function dkimKey(pem: string): { fingerprint: string; public_key: string; key_type: string } {
  let key;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw validationError(
      { reason: 'dkim_key_not_pem', params: { field: 'dkim.private_key' } },
      {
        invalid_fields: { 'dkim.private_key': 'not a PEM private key (RSA or Ed25519)' },
      },
    );
  }
  const type = key.asymmetricKeyType;
  if (type !== 'rsa' && type !== 'ed25519')
    throw validationError(
      { reason: 'dkim_key_type', params: { field: 'dkim.private_key' } },
      {
        invalid_fields: { 'dkim.private_key': `a ${type} key; DKIM takes RSA or Ed25519` },
      },
    );
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  // Ed25519 publishes the raw 32 bytes (RFC 8463); RSA the SubjectPublicKeyInfo.
  const published = type === 'ed25519' ? spki.subarray(spki.length - 32) : spki;
  return {
    fingerprint: `SHA256:${createHash('sha256').update(spki).digest('base64').replace(/=+$/, '')}`,
    public_key: published.toString('base64'),
    key_type: type,
  };
}

/** The DNS TXT record to publish for the selector. */
export function dkimDnsRecord(d: NonNullable<StoredSettings['dkim']>): { name: string; type: 'TXT'; value: string } {
  const k = d.key_type === 'ed25519' ? 'ed25519' : 'rsa';
  return { name: `${d.selector}._domainkey.${d.domain}`, type: 'TXT', value: `v=DKIM1; k=${k}; p=${d.public_key}` };
}

/**
 * Checks a body and splits it into what is stored in clear and what is encrypted. A password or DKIM key
 * left out is kept from `previous` (the form need not retype it); so are webhooks when the member is absent.
 */
export function prepareDelivery(
  input: DeliveryInput,
  previous: { settings: StoredSettings; secrets: DeliverySecrets } | null,
): { settings: StoredSettings; secrets: DeliverySecrets } {
  const secrets: DeliverySecrets = {};
  const transport = (role: TransportRole, t: TransportInput): StoredTransport => {
    const { url, password } = splitUrl(t.smtp_url, `${role}.smtp_url`);
    const stored = url.toString();
    let pw = password;
    const prev = previous?.settings[role];
    if (pw === null && prev && previous?.secrets[role] && prev.url === stored) pw = previous.secrets[role]!;
    if (pw !== null) secrets[role] = pw;
    return {
      url: stored,
      pool_size: t.pool_size ?? DEFAULT_POOL_SIZE,
      rate_per_second: t.rate_per_second ?? null,
      starttls: t.starttls ?? 'opportunistic',
      password_last4: pw === null ? null : last4(pw),
    };
  };
  const primary = transport('primary', input.primary);
  const fallback = input.fallback ? transport('fallback', input.fallback) : null;

  let dkim: StoredSettings['dkim'] = null;
  if (input.dkim) {
    const domain = input.dkim.domain.trim().toLowerCase();
    const selector = input.dkim.selector.trim();
    if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}$/i.test(domain))
      throw validationError(
        { reason: 'dkim_domain_invalid', params: { field: 'dkim.domain' } },
        { invalid_fields: { 'dkim.domain': 'not a domain' } },
      );
    if (!/^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9][A-Za-z0-9-]{0,62})*$/.test(selector))
      throw validationError(
        { reason: 'dkim_selector_invalid', params: { field: 'dkim.selector' } },
        {
          invalid_fields: { 'dkim.selector': 'letters, digits and hyphens' },
        },
      );
    const pem = input.dkim.private_key ?? previous?.secrets.dkim;
    if (!pem)
      throw validationError(
        { reason: 'dkim_key_required', params: { field: 'dkim.private_key' } },
        { invalid_fields: { 'dkim.private_key': 'required' } },
      );
    dkim = { domain, selector, ...dkimKey(pem) };
    secrets.dkim = pem;
  }

  let webhooks: StoredSettings['webhooks'] = {};
  if (input.webhooks === undefined) {
    webhooks = previous?.settings.webhooks ?? {};
    if (previous?.secrets.webhooks) secrets.webhooks = previous.secrets.webhooks;
  } else {
    secrets.webhooks = {};
    for (const p of WEBHOOK_PROVIDERS) {
      const creds = input.webhooks[p];
      if (!creds) continue;
      secrets.webhooks[p] = { ...creds };
      const hidden = WEBHOOK_SECRET_MEMBER[p];
      const shown: Record<string, string> = {};
      for (const [k, v] of Object.entries(creds)) {
        if (k === hidden) shown[`${k}_last4`] = last4(v);
        else shown[k] = v;
      }
      webhooks[p] = shown;
    }
  }
  return {
    settings: {
      primary,
      fallback,
      from_name: input.from_name?.trim() || null,
      from_email: input.from_email?.trim() || null,
      reply_to: input.reply_to?.trim() || null,
      dkim,
      daily_quota: input.daily_quota ?? null,
      webhooks,
    },
    secrets,
  };
}

function maskTransport(t: StoredTransport) {
  const u = new URL(t.url);
  return {
    smtp_url: t.url,
    host: u.hostname,
    port: u.port ? Number(u.port) : u.protocol === 'smtps:' ? 465 : 587,
    secure: u.protocol === 'smtps:',
    username: u.username ? decodeURIComponent(u.username) : null,
    password_set: t.password_last4 !== null,
    password_last4: t.password_last4,
    pool_size: t.pool_size,
    rate_per_second: t.rate_per_second,
    starttls: t.starttls,
  };
}

/** The settings as the API shows them: no secret, only that it is set and its last 4 characters. */
export function maskedDelivery(s: StoredSettings) {
  const webhooks: Record<string, Record<string, string | boolean>> = {};
  for (const p of WEBHOOK_PROVIDERS) {
    const w = s.webhooks[p];
    if (!w) continue;
    const hidden = WEBHOOK_SECRET_MEMBER[p];
    webhooks[p] = hidden ? { ...w, [`${hidden}_set`]: true } : { ...w };
  }
  return {
    primary: maskTransport(s.primary),
    fallback: s.fallback ? maskTransport(s.fallback) : null,
    from_name: s.from_name,
    from_email: s.from_email,
    reply_to: s.reply_to,
    dkim: s.dkim
      ? {
          domain: s.dkim.domain,
          selector: s.dkim.selector,
          private_key_set: true,
          private_key_fingerprint: s.dkim.fingerprint,
          dns_record: dkimDnsRecord(s.dkim),
        }
      : null,
    daily_quota: s.daily_quota,
    webhooks,
  };
}

/** The relay's queue id or the provider's message id in a 250 reply, when it names one. */
export function parseRelayReply(reply: string): { queueId: string | null; providerId: string | null } {
  const queued = /queued as\s+<?([^\s<>]+?)>?(?:\s|$)/i.exec(reply);
  if (queued) return { queueId: queued[1], providerId: null };
  // Providers answer "250 Ok <id>" / "250 2.0.0 OK <id>" (SES, Postmark, Mailgun).
  const ok = /^250[ -](?:\d\.\d\.\d+\s+)?ok[:\s]+<?([A-Za-z0-9][\w.@=+-]{5,})>?/i.exec(reply.trim());
  if (ok) return { queueId: ok[1], providerId: ok[1] };
  return { queueId: null, providerId: null };
}

/** Start of the next UTC day (a project over its daily quota waits until then). */
export function nextUtcDay(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

export const utcDay = (now: number): string => new Date(now).toISOString().slice(0, 10);

/**
 * A delivery body with every secret replaced by "[redacted]": relay passwords in the URLs, the DKIM key,
 * webhook secrets. For anything that records what an administrator sent (an audit log).
 */
export function redactDeliveryBody(body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return body;
  type Obj = Record<string, unknown>;
  const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null;
  const b = structuredClone(body) as Obj;
  for (const role of TRANSPORT_ROLES) {
    const t = b[role];
    if (!isObj(t) || typeof t.smtp_url !== 'string') continue;
    try {
      const u = new URL(t.smtp_url);
      if (u.password) u.password = 'redacted';
      t.smtp_url = u.toString();
    } catch {
      t.smtp_url = '[redacted]';
    }
  }
  if (isObj(b.dkim) && 'private_key' in b.dkim) b.dkim.private_key = '[redacted]';
  const hooks = b.webhooks;
  if (isObj(hooks))
    for (const p of WEBHOOK_PROVIDERS) {
      const member = WEBHOOK_SECRET_MEMBER[p];
      const w = hooks[p];
      if (member && isObj(w) && member in w) w[member] = '[redacted]';
    }
  return b;
}
