// Topics, choices and consent records (SPEC §18): the writes every cause shares (a gateway body, the
// scoped consent endpoint, an unsubscribe link, the preference page, a complaint, an administrator),
// always in the transaction of the cause, and the topics of a project as the admin API edits them.
import type { ContactRow, EmailRow } from '../db/schema.js';
import {
  BUILT_IN_KEYS,
  builtInTopics,
  isTopicKey,
  readConsentItem,
  suppressionHash,
  topicOf,
  topicStop,
  topicStopSentence,
  TRANSACTIONAL,
  withItems,
  type ConsentItem,
  type Topic,
  type TopicStop,
} from '../domain/consent.js';
import type { ConsentSource } from '../domain/statuses.js';
import { suppressionReason } from '../domain/suppression.js';
import { notFound, validationError } from '../errors.js';
import { findContact, normaliseEmail, setContactStatus } from '../repos/contacts.js';
import type { Static } from 'typebox';
import { ScopedConsentBody, type ScopedConsentResponse } from '../schemas/consent.js';
import { assertNoProblems, bodyProblems, requireObject } from '../domain/validation.js';
import { applyPhpTolerances } from '../domain/tolerances.js';
import type { Accepted } from './accept/accept.js';
import { executePlan } from './accept/execute.js';
import { configSnapshot } from './configCache.js';
import type { GatewayCall } from './context.js';
import { batcher, fulfilled } from '../batcher.js';
import type { Db } from '../db/index.js';
import { installationSecret } from './secrets.js';
import {
  insertConsentRecords,
  leaveUnlessChosen,
  planStandings,
  type PlanStanding,
  listTopics,
  readTopicStanding,
  replaceTopics,
  setSubscription,
  suppressPendingOfTopics,
} from '../repos/consent.js';
import { findProjectBySiteKey } from '../repos/projects.js';
import { holdHandOvers } from '../repos/handOver.js';
import type { Executor } from '../repos/types.js';
import { audited, type AuditActor } from './audit.js';
import type { Deps } from './context.js';
import { contactNotice, enqueueEmailWebhooks, enqueueSiteWebhooks, topicNotice } from './siteWebhooks/enqueue.js';

type ContactLike = Pick<ContactRow, 'id' | 'project_id' | 'email' | 'status'>;

/** A choice to store: a consent item, or a click on a link or a switch (then `at` is now). */
export type Choice = Pick<ConsentItem, 'topic' | 'granted'> & Partial<Omit<ConsentItem, 'topic' | 'granted'>>;

/**
 * Records the choices as consent records and applies them: a grant subscribes to its topic (and lifts an
 * `unsubscribed` status, the other topics staying left), a withdrawal unsubscribes and suppresses the
 * contact's e-mails of the topic still waiting. Runs in the caller's transaction.
 */
export async function recordChoices(
  trx: Executor,
  contact: ContactLike,
  choices: Choice[],
  source: ConsentSource,
  now: number,
  /**
   * Set by leaveAll: the sentence the stopped e-mails record (the contact unsubscribed), and no topic
   * notice to the site, whose one contact.unsubscribed leaveAll sends itself.
   */
  leavingAll: { stopReason: string } | null = null,
): Promise<void> {
  if (choices.length === 0) return;
  await insertConsentRecords(
    trx,
    choices.map((c) => ({
      project_id: contact.project_id,
      contact_id: contact.id,
      topic: c.topic,
      granted: c.granted,
      at: c.at ?? now,
      source,
      text_version: c.text_version ?? null,
      ip: c.ip ?? null,
      user_agent: c.user_agent ?? null,
    })),
    now,
  );
  // The last choice for a topic in one request wins, as in the record order.
  const final = new Map<string, boolean>();
  for (const c of choices) final.set(c.topic, c.granted);
  const granted = [...final].filter(([, g]) => g).map(([t]) => t);
  const left = [...final].filter(([t, g]) => !g && t !== TRANSACTIONAL).map(([t]) => t);
  if (granted.some((t) => t !== TRANSACTIONAL) && contact.status === 'unsubscribed') {
    // `unsubscribed` meant every topic; from now on the other topics are left one by one.
    for (const t of await listTopics(trx, contact.project_id))
      if (t.key !== TRANSACTIONAL && !final.has(t.key)) await leaveUnlessChosen(trx, contact.id, t.key, now);
    await setContactStatus(trx, contact.id, 'active', now, ['unsubscribed'], { reason: 'consent' });
  }
  for (const [topic, g] of final) await setSubscription(trx, contact.id, topic, g, now);
  if (leavingAll) await suppressTopics(trx, contact.id, left, now, leavingAll.stopReason, 'contact_unsubscribed');
  else if (left.length) {
    // A withdrawal from a topic that requires consent stops its e-mails for want of consent (SPEC §22).
    const needConsent = new Set(
      (await listTopics(trx, contact.project_id)).filter((t) => t.require_consent).map((t) => t.key),
    );
    const [noConsent, unsubscribed] = [left.filter((t) => needConsent.has(t)), left.filter((t) => !needConsent.has(t))];
    if (unsubscribed.length)
      await suppressTopics(
        trx,
        contact.id,
        unsubscribed,
        now,
        topicStopSentence.contact_unsubscribed,
        'contact_unsubscribed',
      );
    if (noConsent.length)
      await suppressTopics(trx, contact.id, noConsent, now, topicStopSentence.no_consent, 'no_consent');
  }
  // A person who leaves a topic from an e-mail or the preference page: the site hears of it as of a full
  // unsubscribe, with the topics. The site's own calls (`api`) are not echoed back.
  const via = PERSON_VIA[source];
  if (via && left.length > 0 && !leavingAll)
    await enqueueSiteWebhooks(trx, contact.project_id, 'contact.unsubscribed', topicNotice(contact, via, left), now);
}

/** The person's own doors, as `reason` of contact.unsubscribed names them. */
const PERSON_VIA: Partial<Record<ConsentSource, string>> = {
  unsubscribe_link: 'link',
  list_unsubscribe: 'link',
  preference_page: 'preference_page',
};

async function suppressTopics(
  trx: Executor,
  contactId: number,
  topics: string[],
  now: number,
  reason: string,
  code: TopicStop,
) {
  // The contact's e-mails claimed but not handed over wait for this withdrawal, whose commit their
  // hand-over check then sees (issue 30: a stop is checked at hand-over, not only at claim).
  if (topics.some((t) => t !== TRANSACTIONAL)) await holdHandOvers(trx, { contactId });
  const stopped = await suppressPendingOfTopics(trx, contactId, topics, reason, now);
  await enqueueEmailWebhooks(
    trx,
    stopped.map((email) => ({ email, kind: 'email.suppressed' as const, reason: code })),
    now,
  );
}

/**
 * Leaves every topic but transactional: the status becomes `unsubscribed` (SPEC §4) and the site hears
 * of it; one withdrawal record per advertising topic. `via` names the cause in the webhook.
 */
export async function leaveAll(
  trx: Executor,
  contact: ContactLike,
  source: ConsentSource,
  now: number,
  meta: { ip?: string | null; user_agent?: string | null } = {},
): Promise<void> {
  const topics = (await listTopics(trx, contact.project_id)).filter((t) => t.key !== TRANSACTIONAL);
  await recordChoices(
    trx,
    { ...contact, status: 'active' },
    topics.map((t) => ({ topic: t.key, granted: false, ...meta })),
    source,
    now,
    // The same words as the suppression rule of an unsubscribed contact (domain/suppression.ts).
    { stopReason: suppressionReason('unsubscribed', 'cart')! },
  );
  if (contact.status !== 'active') return;
  const reason = source === 'preference_page' ? 'preference_page' : 'unsubscribe_link';
  if (await setContactStatus(trx, contact.id, 'unsubscribed', now, ['active'], { reason }))
    await enqueueSiteWebhooks(
      trx,
      contact.project_id,
      'contact.unsubscribed',
      contactNotice(contact, source === 'preference_page' ? 'preference_page' : 'link'),
      now,
    );
}

const secrets = new WeakMap<Deps, Promise<string>>();
/** The installation secret, read once per process (it signs links and keys the suppression hashes). */
export function secretOf(deps: Deps): Promise<string> {
  if (deps.secret) return Promise.resolve(deps.secret);
  let p = secrets.get(deps);
  if (!p) {
    secrets.set(deps, (p = installationSecret(deps)));
    p.catch(() => secrets.delete(deps));
  }
  return p;
}

type StandingRequest = { projectId: number; email: string; hash: string };
const standingReads = new WeakMap<Db, (r: StandingRequest) => Promise<PlanStanding>>();

/** Requests that arrive together share one read (and so reach the accept batch together). */
function readStanding(db: Db, r: StandingRequest): Promise<PlanStanding> {
  let read = standingReads.get(db);
  if (!read) {
    read = batcher<StandingRequest, PlanStanding>({
      overlap: true,
      maxBatch: 256,
      run: async (items) => (await planStandings(db.db, db.dialect, items)).map(fulfilled),
    });
    standingReads.set(db, read);
  }
  return read(r);
}

/**
 * Whether each of a request's e-mails may be scheduled, by its topic: read once before the plan (the
 * contact's choices and latest consent), with the request's own consent items counted as written. A
 * choice changed after this read is caught by the worker and the hand-over check at send time.
 */
export async function topicStops(
  deps: Deps,
  projectTopics: Topic[],
  projectId: number,
  email: string,
  topics: string[],
  items: readonly ConsentItem[],
): Promise<(TopicStop | null)[]> {
  // Read even when every topic is transactional: requests that arrive together then leave this step
  // together too, and reach the accept batch as one (the read itself is shared by all of them).
  const address = normaliseEmail(email);
  const hash = suppressionHash(await secretOf(deps), projectId, address);
  const state = await readStanding(deps.db, { projectId, email: address, hash });
  return topics.map((topic) => {
    const standing = withItems(
      {
        contactStatus: state.status ?? 'active',
        subscribed: state.subscribed.get(topic) ?? true,
        latestGrant: state.latestGrant.get(topic) ?? null,
        suppressedHash: state.suppressedHash,
        hashStopsAll: state.hashStopsAll,
      },
      topic,
      items,
    );
    return topicStop(
      topic,
      projectTopics.find((t) => t.key === topic),
      standing,
    );
  });
}

/**
 * The send-time check of an e-mail's topic (the delivery worker after its claim, and the hand-over
 * check right before the relay): the sentence to record as `suppressed`, or null when it may go.
 * One read (readTopicStanding), a transactional e-mail included (the kept hash of an erased address).
 */
export async function topicStopAtSend(
  db: Executor,
  secret: string,
  email: Pick<EmailRow, 'topic' | 'kind' | 'project_id' | 'contact_id'>,
  contact: Pick<ContactRow, 'status' | 'email'>,
): Promise<string | null> {
  const topic = topicOf(email.topic, email.kind);
  // A transactional e-mail is read too: an erased address that had bounced or complained gets none.
  const hash = suppressionHash(secret, email.project_id, contact.email);
  const s = await readTopicStanding(db, email.contact_id, email.project_id, topic, hash);
  const stop = topicStop(
    topic,
    { require_consent: s.requireConsent },
    {
      contactStatus: contact.status,
      subscribed: s.subscribed,
      latestGrant: s.latestGrant,
      suppressedHash: s.suppressedHash,
      hashStopsAll: s.hashStopsAll,
    },
  );
  return stop ? topicStopSentence[stop] : null;
}

/** `POST /api/scoped/contacts/consent` (any key of the project): one consent item for one address. */
export async function scopedConsent(
  call: GatewayCall,
  raw: unknown,
): Promise<Accepted<Static<typeof ScopedConsentResponse>>> {
  const { deps, project } = call;
  const body = requireObject(raw);
  applyPhpTolerances(body);
  const check = {
    required: ['email', 'topic', 'granted'],
    eventType: 'contact_consent',
    what: 'the consent',
    limits: deps.config.fieldLimits,
  };
  const problems = bodyProblems(ScopedConsentBody, body, check);
  const topics = await (call.config ?? (await configSnapshot(deps.db))).topics(project.id);
  const own: Record<string, string> = {};
  const item = readConsentItem(body, '', new Set(topics.map((t) => t.key)), deps.clock.now(), own);
  for (const [k, v] of Object.entries(own)) if (!problems.missing.includes(k)) problems.invalid[k] = v;
  assertNoProblems<ScopedConsentBody>(body, problems, check);
  return executePlan(call, body, {
    contact: { email: body.email },
    consent: [item!],
    emails: [],
    work: async (trx, { eventId, contact }) => {
      const after = (await findContact(trx, contact.id))!;
      const s = await readTopicStanding(trx, contact.id, project.id, item!.topic);
      const subscribed = item!.topic === TRANSACTIONAL || (after.status !== 'unsubscribed' && s.subscribed);
      return {
        response: {
          ok: true as const,
          site_key: project.site_key,
          event_id: eventId,
          contact_id: contact.id,
          topic: item!.topic,
          granted: item!.granted,
          subscribed,
        },
        effects: { contact_id: contact.id, consent: [{ topic: item!.topic, granted: item!.granted }] },
      };
    },
  });
}

// --- the admin API of topics ---

async function projectOf(deps: Deps, siteKey: string) {
  const project = await findProjectBySiteKey(deps.db.db, siteKey);
  if (!project) throw notFound(`Project ${siteKey}`);
  return project;
}

export async function topics(deps: Deps, siteKey: string) {
  const project = await projectOf(deps, siteKey);
  return { ok: true as const, site_key: siteKey, topics: await listTopics(deps.db.db, project.id) };
}

/**
 * Replaces the topics. The three built-in ones are kept when left out (the defaults by use name them);
 * `transactional` stays neither advertising nor requiring consent, whatever is sent for it.
 */
export async function replaceProjectTopics(deps: Deps, who: AuditActor, siteKey: string, wanted: Topic[]) {
  const project = await projectOf(deps, siteKey);
  const invalid: Record<string, string> = {};
  const seen = new Set<string>();
  wanted.forEach((t, i) => {
    if (!isTopicKey(t.key)) invalid[`topics[${i}].key`] = 'must be a-z, digits and _, starting with a letter';
    else if (seen.has(t.key)) invalid[`topics[${i}].key`] = `repeats ${t.key}`;
    seen.add(t.key);
    if (t.title.trim() === '') invalid[`topics[${i}].title`] = 'must not be blank';
    if (t.key === TRANSACTIONAL && (t.advertising || t.require_consent))
      invalid[`topics[${i}]`] = 'transactional is never advertising and needs no consent';
  });
  const now = deps.clock.now();
  return audited(deps, who, async (trx, note) => {
    const before = await listTopics(trx, project.id);
    const kept = BUILT_IN_KEYS.filter((k) => !seen.has(k)).map(
      (k) => before.find((t) => t.key === k) ?? builtInTopics(project.locale).find((t) => t.key === k)!,
    );
    const next = [
      ...kept.filter((t) => t.key === TRANSACTIONAL),
      ...wanted,
      ...kept.filter((t) => t.key !== TRANSACTIONAL),
    ];
    // A template must not be left pointing at a topic that is gone.
    const used = await trx
      .selectFrom('templates')
      .select(['name', 'topic'])
      .where('project_id', '=', project.id)
      .where('topic', 'is not', null)
      .execute();
    for (const u of used)
      if (!next.some((t) => t.key === u.topic)) invalid.topics = `topic ${u.topic} is used by template ${u.name}`;
    if (Object.keys(invalid).length)
      throw validationError({ reason: 'topics_invalid' }, { required_fields: ['topics'], invalid_fields: invalid });
    await replaceTopics(trx, project.id, next, now);
    note({ action: 'topics.replace', site_key: siteKey, target: `project:${project.id}`, before, after: next });
    return { ok: true as const, site_key: siteKey, topics: next };
  });
}
