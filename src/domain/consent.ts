// Topics, subscriptions and consent (SPEC §18) as plain rules: which topic an e-mail belongs to, whether
// it may go to a contact given the contact's choices and consent records, and what a consent item sent
// by a site must look like. Every accept path, the delivery worker and the hand-over check share these.
import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import { canonicalAddress } from './email.js';
import type { ContactStatus, EmailKind } from './statuses.js';
import type { ProjectLocale } from '../db/schema.js';

export const TRANSACTIONAL = 'transactional';

/** A topic key: short, lower-case, safe in a URL path and a token. */
export const TOPIC_KEY_PATTERN = '^[a-z][a-z0-9_]{0,39}$';
const TOPIC_KEY = new RegExp(TOPIC_KEY_PATTERN);
export const isTopicKey = (s: string) => TOPIC_KEY.test(s);

export interface Topic {
  key: string;
  title: string;
  advertising: boolean;
  require_consent: boolean;
}

/** A new project's topics (SPEC §18); the titles follow the project's locale. */
export function builtInTopics(locale: ProjectLocale): Topic[] {
  const ru = locale !== 'en';
  return [
    {
      key: TRANSACTIONAL,
      title: ru ? 'Письма о заказах и документах' : 'E-mails about orders and documents',
      advertising: false,
      require_consent: false,
    },
    {
      key: 'cart_reminders',
      title: ru ? 'Напоминания о неоплаченных заказах' : 'Reminders about unpaid orders',
      advertising: true,
      require_consent: false,
    },
    {
      key: 'newsletters',
      title: ru ? 'Новости и рассылки' : 'News and newsletters',
      advertising: true,
      // SPEC §22: advertising by e-mail needs the addressee's prior consent (38-ФЗ art. 18); projects
      // made before issue 39 keep what they had, the UI offers them the switch.
      require_consent: true,
    },
  ];
}

/**
 * The topics a new project requires consent for (SPEC §22: `newsletters`): the ones a project made
 * before is offered the switch for. Not every advertising topic: a cart reminder goes to someone who
 * just ordered, and requiring consent there would stop it for nearly everyone.
 */
export const CONSENT_BY_DEFAULT: readonly string[] = builtInTopics('ru')
  .filter((t) => t.require_consent)
  .map((t) => t.key);

/** The topics every project keeps: the defaults by use below name them. */
export const BUILT_IN_KEYS = [TRANSACTIONAL, 'cart_reminders', 'newsletters'] as const;

/** A template without a topic of its own belongs to the default of how it is used. */
export function defaultTopic(kind: EmailKind): string {
  return kind === 'cart' ? 'cart_reminders' : kind === 'campaign' ? 'newsletters' : TRANSACTIONAL;
}

export const topicOf = (templateTopic: string | null | undefined, kind: EmailKind): string =>
  templateTopic ?? defaultTopic(kind);

/** What is known of one contact for one topic when an e-mail of that topic is about to be scheduled or sent. */
export interface TopicStanding {
  contactStatus: ContactStatus;
  /** False when the contact left the topic (no stored choice: subscribed). */
  subscribed: boolean;
  /** The latest consent record for the topic: true a grant, false a withdrawal, null none. */
  latestGrant: boolean | null;
  /** The address was erased while it had to stay suppressed, and came back (only its keyed hash is kept). */
  suppressedHash?: boolean;
  /** ... and it had bounced or complained: no e-mail at all goes to it, transactional included (SPEC §22). */
  hashStopsAll?: boolean;
}

/** The reasons of a kept hash (services/erasure.ts) that stop every e-mail, transactional included. */
export const HASH_STOPS_ALL = ['invalid', 'complained'] as const;

export type TopicStop = 'contact_unsubscribed' | 'no_consent' | 'contact_invalid';

/**
 * Why an e-mail of `topic` must not go to the contact, or null when it may. An e-mail of the
 * transactional topic is never stopped by a topic or by consent (the contact status rules of
 * suppression.ts still apply to it).
 */
export function topicStop(
  topic: string,
  def: Pick<Topic, 'require_consent'> | undefined,
  s: TopicStanding,
): TopicStop | null {
  if (s.hashStopsAll) return 'contact_invalid';
  if (topic === TRANSACTIONAL) return null;
  if (s.contactStatus === 'unsubscribed' || s.suppressedHash) return 'contact_unsubscribed';
  // A topic that requires consent stops for want of it, a withdrawal included (SPEC §22): the person
  // withdrew consent, which is what the site must hear, not that they left a topic.
  if (def?.require_consent && s.latestGrant !== true) return 'no_consent';
  if (!s.subscribed) return 'contact_unsubscribed';
  return null;
}

export const topicStopSentence: Record<TopicStop, string> = {
  contact_unsubscribed: 'suppressed: the contact left the topic',
  no_consent: 'suppressed: no consent recorded for the topic',
  contact_invalid: 'suppressed: the address is invalid (erased after it bounced or complained)',
};

/** A consent item as a site sends it, checked. */
export interface ConsentItem {
  topic: string;
  granted: boolean;
  /** Milliseconds; the request's time when the site gave none. */
  at: number;
  text_version: string | null;
  ip: string | null;
  user_agent: string | null;
}

/** How far ahead of our clock a site's `at` may be: clocks of web servers drift. */
export const CLOCK_SKEW_MS = 5 * 60_000;
export const MAX_CONSENT_ITEMS = 20;
const MEMBERS = new Set(['topic', 'granted', 'at', 'text_version', 'ip', 'user_agent']);

// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function optionalText(v: unknown, max: number): string | null | { problem: string } {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') return { problem: 'must be a string' };
  if (v.length > max) return { problem: `must be at most ${max} characters` };
  // PostgreSQL cannot store U+0000; an unpaired surrogate would be stored as U+FFFD (SPEC §10).
  if (UNSTORABLE.test(v)) return { problem: 'must not contain U+0000 or an unpaired surrogate' };
  return v;
}

/**
 * Checks one consent item (`prefix` names it in the answer: `consent[0]` or nothing for the scoped
 * endpoint's body). Problems go into `invalid` under the member's full name.
 */
export function readConsentItem(
  raw: unknown,
  prefix: string,
  topics: ReadonlySet<string>,
  now: number,
  invalid: Record<string, string>,
): ConsentItem | null {
  const name = (m: string) => (prefix ? `${prefix}.${m}` : m);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    invalid[prefix || 'consent'] = 'must be an object';
    return null;
  }
  const o = raw as Record<string, unknown>;
  const before = Object.keys(invalid).length;
  if (prefix)
    for (const k of Object.keys(o)) if (!MEMBERS.has(k)) invalid[name(k)] = 'is not a member of a consent item';
  if (typeof o.topic !== 'string' || o.topic === '') invalid[name('topic')] = 'must be a topic key';
  else if (!topics.has(o.topic)) invalid[name('topic')] = `unknown topic ${o.topic.slice(0, 40)}`;
  if (typeof o.granted !== 'boolean') invalid[name('granted')] = 'must be true or false';
  else if (!o.granted && o.topic === TRANSACTIONAL)
    invalid[name('topic')] = 'transactional e-mails cannot be left: they are about the person’s own orders';
  let at = now;
  if (o.at !== undefined && o.at !== null) {
    const t = typeof o.at === 'string' && /^\d{4}-\d\d-\d\dT/.test(o.at) ? Date.parse(o.at) : NaN;
    if (!Number.isFinite(t)) invalid[name('at')] = 'must be an ISO 8601 date-time with a time zone';
    else if (t > now + CLOCK_SKEW_MS) invalid[name('at')] = 'is in the future';
    else if (t < Date.UTC(1990, 0, 1)) invalid[name('at')] = 'is too far in the past';
    else at = t;
  }
  const ip = optionalText(o.ip, 64);
  if (typeof ip === 'object' && ip) invalid[name('ip')] = ip.problem;
  else if (ip !== null && isIP(ip) === 0) invalid[name('ip')] = 'must be an IPv4 or IPv6 address';
  const version = optionalText(o.text_version, 200);
  if (typeof version === 'object' && version) invalid[name('text_version')] = version.problem;
  const ua = optionalText(o.user_agent, 500);
  if (typeof ua === 'object' && ua) invalid[name('user_agent')] = ua.problem;
  if (Object.keys(invalid).length > before) return null;
  return {
    topic: o.topic as string,
    granted: o.granted as boolean,
    at,
    text_version: version as string | null,
    ip: ip as string | null,
    user_agent: ua as string | null,
  };
}

/** The `consent` member of a gateway body: absent, or an array of items. */
export function readConsentList(
  raw: unknown,
  topics: ReadonlySet<string>,
  now: number,
  invalid: Record<string, string>,
): ConsentItem[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    invalid.consent = 'must be an array of consent items';
    return [];
  }
  if (raw.length > MAX_CONSENT_ITEMS) {
    invalid.consent = `must hold at most ${MAX_CONSENT_ITEMS} items`;
    return [];
  }
  const items = raw.map((item, i) => readConsentItem(item, `consent[${i}]`, topics, now, invalid));
  return items.every((i) => i !== null) ? items : [];
}

/** The standing after this request's own consent items, which are written before its e-mails. */
export function withItems(s: TopicStanding, topic: string, items: readonly ConsentItem[]): TopicStanding {
  let out = s;
  for (const i of items)
    if (i.topic === topic) out = { ...out, subscribed: i.granted ? true : false, latestGrant: i.granted };
  // A grant for a topic lifts an `unsubscribed` status (writeConsent does the same when it stores it).
  if (out !== s && out.subscribed && s.contactStatus === 'unsubscribed') out = { ...out, contactStatus: 'active' };
  return out;
}

/**
 * The keyed hash kept of an erased address that must stay suppressed (SPEC §18): HMAC-SHA256 under the
 * installation secret, per project, so it identifies the address to this installation only.
 */
export function suppressionHash(secret: string, projectId: number, email: string): string {
  return createHmac('sha256', secret)
    .update(`suppression:${projectId}:${canonicalAddress(email)}`)
    .digest('base64url');
}
