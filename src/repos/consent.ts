// Topics of a project, a contact's choice per topic, and the append-only consent records (SPEC §18).
import { sql } from 'kysely';
import { fromFlag, toFlag } from '../db/flags.js';
import type { ContactStatus, EmailRow, ProjectLocale } from '../db/schema.js';
import { builtInTopics, HASH_STOPS_ALL, TRANSACTIONAL, type Topic } from '../domain/consent.js';
import type { ConsentSource } from '../domain/statuses.js';
import { emailFromRow } from './flagRows.js';
import { iso, type Executor } from './types.js';

export async function listTopics(db: Executor, projectId: number): Promise<Topic[]> {
  const rows = await db
    .selectFrom('topics')
    .select(['key', 'title', 'advertising', 'require_consent'])
    .where('project_id', '=', projectId)
    .orderBy('position')
    .orderBy('key')
    .execute();
  return rows.map((r) => ({
    key: r.key,
    title: r.title,
    advertising: fromFlag(r.advertising),
    require_consent: fromFlag(r.require_consent),
  }));
}

/** Replaces a project's topics by `topics`, in that order. */
export async function replaceTopics(db: Executor, projectId: number, topics: Topic[], now: number): Promise<void> {
  await db.deleteFrom('topics').where('project_id', '=', projectId).execute();
  if (topics.length === 0) return;
  await db
    .insertInto('topics')
    .values(
      topics.map((t, position) => ({
        project_id: projectId,
        key: t.key,
        title: t.title,
        advertising: toFlag(t.advertising),
        require_consent: toFlag(t.require_consent),
        position,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
}

/** A new project's topics; nothing when it has some already (a repeated create). */
export async function insertBuiltInTopics(db: Executor, projectId: number, locale: ProjectLocale, now: number) {
  await db
    .insertInto('topics')
    .values(
      builtInTopics(locale).map((t, position) => ({
        project_id: projectId,
        key: t.key,
        title: t.title,
        advertising: toFlag(t.advertising),
        require_consent: toFlag(t.require_consent),
        position,
        created_at: now,
        updated_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(['project_id', 'key']).doNothing())
    .execute();
}

/** A contact's stored choices and its latest consent per topic (absent topics: subscribed, no record). */
export interface ContactTopicState {
  subscribed: Map<string, boolean>;
  latestGrant: Map<string, boolean>;
}

export async function contactTopicState(db: Executor, contactId: number): Promise<ContactTopicState> {
  const [subs, records] = await Promise.all([
    db.selectFrom('contact_topics').select(['topic', 'subscribed']).where('contact_id', '=', contactId).execute(),
    db
      .selectFrom('consent_records')
      .select(['topic', 'granted'])
      .where('contact_id', '=', contactId)
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .execute(),
  ]);
  const latestGrant = new Map<string, boolean>();
  for (const r of records) if (!latestGrant.has(r.topic)) latestGrant.set(r.topic, fromFlag(r.granted));
  return { subscribed: new Map(subs.map((s) => [s.topic, fromFlag(s.subscribed)])), latestGrant };
}

export interface PlanStanding extends ContactTopicState {
  /** null: no such contact yet (it is created by the request, subscribed to everything). */
  status: ContactStatus | null;
  /** The address was erased while it had to stay suppressed (its keyed hash is kept). */
  suppressedHash: boolean;
  /** ... after it bounced or complained (HASH_STOPS_ALL): nothing goes to it. */
  hashStopsAll: boolean;
}

const STOPS_ALL = sql.join(HASH_STOPS_ALL.map((r) => sql.lit(r)));

/**
 * What many requests' plans need, read together in one statement: each address's contact status, its
 * stored choices, its consent records (newest first: the first per topic is the latest), and whether its
 * keyed hash is kept as suppressed. One round trip per batch of requests, whatever its size.
 */
export async function planStandings(
  db: Executor,
  dialect: 'sqlite' | 'postgres',
  wanted: { projectId: number; email: string; hash: string }[],
): Promise<PlanStanding[]> {
  const rows = sql.join(
    wanted.map(
      (w, i) =>
        sql`(cast(${i} as integer), cast(${w.projectId} as bigint), cast(${w.email} as text), cast(${w.hash} as text))`,
    ),
  );
  const pg = dialect === 'postgres';
  // The same query in each dialect's JSON aggregate: arrays of [topic, 0|1].
  const subs = pg
    ? sql`(select coalesce(json_agg(json_build_array(ct.topic, ct.subscribed)), '[]') from contact_topics ct where ct.contact_id = c.id)`
    : sql`(select json_group_array(json_array(ct.topic, ct.subscribed)) from contact_topics ct where ct.contact_id = c.id)`;
  const grants = pg
    ? sql`(select coalesce(json_agg(json_build_array(cr.topic, cr.granted) order by cr.at desc, cr.id desc), '[]') from consent_records cr where cr.contact_id = c.id)`
    : sql`(select json_group_array(json_array(x.topic, x.granted)) from (select cr.topic, cr.granted from consent_records cr where cr.contact_id = c.id order by cr.at desc, cr.id desc) x)`;
  const r = await sql<{
    i: number;
    status: ContactStatus | null;
    subs: unknown;
    grants: unknown;
    hashed: number | boolean;
    hashed_all: number | boolean;
  }>`
    with w (i, p, e, h) as (values ${rows})
    select w.i as i, c.status as status, ${subs} as subs, ${grants} as grants,
      exists (select 1 from suppressed_hashes sh where sh.project_id = w.p and sh.email_hash = w.h) as hashed,
      exists (select 1 from suppressed_hashes sh where sh.project_id = w.p and sh.email_hash = w.h
        and sh.reason in (${STOPS_ALL})) as hashed_all
    from w left join contacts c on c.project_id = w.p and c.email = w.e`.execute(db);
  const out: PlanStanding[] = wanted.map(() => ({
    status: null,
    subscribed: new Map(),
    latestGrant: new Map(),
    suppressedHash: false,
    hashStopsAll: false,
  }));
  const pairs = (v: unknown): [string, number][] =>
    v == null ? [] : ((typeof v === 'string' ? JSON.parse(v) : v) as [string, number][]);
  for (const row of r.rows) {
    const o = out[Number(row.i)];
    o.suppressedHash = fromFlag(row.hashed);
    o.hashStopsAll = fromFlag(row.hashed_all);
    if (row.status === null) continue;
    o.status = row.status;
    for (const [topic, on] of pairs(row.subs)) o.subscribed.set(topic, fromFlag(on));
    for (const [topic, g] of pairs(row.grants)) if (!o.latestGrant.has(topic)) o.latestGrant.set(topic, fromFlag(g));
  }
  return out;
}

/**
 * The one read the delivery worker and the hand-over check need for an e-mail: the contact's choice
 * for the topic, its latest consent record, and whether the topic requires consent. One statement.
 */
export async function readTopicStanding(
  db: Executor,
  contactId: number,
  projectId: number,
  topic: string,
  emailHash = '',
): Promise<{
  subscribed: boolean;
  latestGrant: boolean | null;
  requireConsent: boolean;
  suppressedHash: boolean;
  hashStopsAll: boolean;
}> {
  const r = await sql<{
    subscribed: number | null;
    granted: number | null;
    require_consent: number | null;
    hashed: string | null;
  }>`
    select
      (select reason from suppressed_hashes where project_id = ${projectId} and email_hash = ${emailHash}) as hashed,
      (select subscribed from contact_topics where contact_id = ${contactId} and topic = ${topic}) as subscribed,
      (select granted from consent_records where contact_id = ${contactId} and topic = ${topic}
        order by at desc, id desc limit 1) as granted,
      (select require_consent from topics where project_id = ${projectId} and key = ${topic}) as require_consent`.execute(
    db,
  );
  const row = r.rows[0];
  return {
    subscribed: row?.subscribed == null ? true : fromFlag(row.subscribed),
    latestGrant: row?.granted == null ? null : fromFlag(row.granted),
    requireConsent: fromFlag(row?.require_consent),
    suppressedHash: row?.hashed != null,
    hashStopsAll: (HASH_STOPS_ALL as readonly (string | null | undefined)[]).includes(row?.hashed),
  };
}

export async function setSubscription(
  db: Executor,
  contactId: number,
  topic: string,
  subscribed: boolean,
  now: number,
) {
  await db
    .insertInto('contact_topics')
    .values({ contact_id: contactId, topic, subscribed: toFlag(subscribed), updated_at: now })
    .onConflict((oc) =>
      oc.columns(['contact_id', 'topic']).doUpdateSet({ subscribed: toFlag(subscribed), updated_at: now }),
    )
    .execute();
}

/** Stores "left" for a topic that has no stored choice yet (an insert that keeps an existing row). */
export async function leaveUnlessChosen(db: Executor, contactId: number, topic: string, now: number) {
  await db
    .insertInto('contact_topics')
    .values({ contact_id: contactId, topic, subscribed: toFlag(false), updated_at: now })
    .onConflict((oc) => oc.columns(['contact_id', 'topic']).doNothing())
    .execute();
}

/** Clears every stored "left" choice of the contact (an administrator made it active again). */
export async function rejoinAll(db: Executor, contactId: number, now: number): Promise<void> {
  await db
    .updateTable('contact_topics')
    .set({ subscribed: toFlag(true), updated_at: now })
    .where('contact_id', '=', contactId)
    .execute();
}

export interface NewConsentRecord {
  project_id: number;
  contact_id: number;
  topic: string;
  granted: boolean;
  at: number;
  source: ConsentSource;
  text_version?: string | null;
  ip?: string | null;
  user_agent?: string | null;
}

export async function insertConsentRecords(db: Executor, rows: NewConsentRecord[], now: number): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('consent_records')
    .values(
      rows.map((r) => ({
        project_id: r.project_id,
        contact_id: r.contact_id,
        topic: r.topic,
        granted: toFlag(r.granted),
        at: r.at,
        source: r.source,
        text_version: r.text_version ?? null,
        ip: r.ip ?? null,
        user_agent: r.user_agent ?? null,
        recorded_at: now,
      })),
    )
    .execute();
}

/** A contact's consent history, newest first. */
export async function consentHistory(db: Executor, contactId: number) {
  const rows = await db
    .selectFrom('consent_records')
    .selectAll()
    .where('contact_id', '=', contactId)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    topic: r.topic,
    granted: fromFlag(r.granted),
    at: iso(r.at)!,
    source: r.source,
    text_version: r.text_version,
    ip: r.ip,
    user_agent: r.user_agent,
    recorded_at: iso(r.recorded_at)!,
  }));
}

/** The topic of an e-mail row in SQL: its own, else the default of its kind (domain/consent.ts defaultTopic). */
const EMAIL_TOPIC = sql`coalesce(topic, case kind when 'cart' then 'cart_reminders' when 'campaign' then 'newsletters' else 'transactional' end)`;

/**
 * Suppresses the contact's e-mails of these topics still waiting to go (not those a worker holds: the
 * hand-over check sees the choice). Returns the rows changed, for their webhooks.
 */
export async function suppressPendingOfTopics(
  db: Executor,
  contactId: number,
  topics: string[],
  reason: string,
  now: number,
): Promise<EmailRow[]> {
  const wanted = topics.filter((t) => t !== TRANSACTIONAL);
  if (wanted.length === 0) return [];
  const rows = await db
    .updateTable('scheduled_emails')
    .set({ status: 'suppressed', last_error: reason, updated_at: now })
    .where('contact_id', '=', contactId)
    .where('status', 'in', ['queued', 'scheduled'])
    .where(EMAIL_TOPIC, 'in', wanted)
    .returningAll()
    .execute();
  return rows.map(emailFromRow);
}
