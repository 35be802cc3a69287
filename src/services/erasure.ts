// A person's data (SPEC §18): the export of everything held about a contact, streamed page by page, and
// the erasure of every stored copy of the address, name and fields. A short history is erased before
// the answer; a long one (more than SYNC_LIMIT rows) in batches by the erasure worker, each batch its own
// short transaction. Only a keyed hash of the address is kept, and only when the address must stay
// suppressed (it had unsubscribed, left a topic, bounced or complained).
import { Readable } from 'node:stream';
import type { ContactRow } from '../db/schema.js';
import { suppressionHash } from '../domain/consent.js';
import { notFound } from '../errors.js';
import { consentHistory, contactTopicState, listTopics } from '../repos/consent.js';
import { contactLists, findContact, findContactByEmail, normaliseEmail } from '../repos/contacts.js';
import {
  addCounts,
  eraseContactRows,
  eraseHistoryBatch,
  finishErasure,
  historySize,
  insertErasure,
  latestErasure,
  scrubAudit,
  tombstoneContact,
  type ErasedCounts,
  type ErasureRow,
} from '../repos/erasure.js';
import { findProjectById } from '../repos/projects.js';
import { iso, parseJson, type Executor } from '../repos/types.js';
import { applyPhpTolerances } from '../domain/tolerances.js';
import { assertBody, requireObject } from '../domain/validation.js';
import { ScopedEraseBody } from '../schemas/consent.js';
import { executePlan } from './accept/execute.js';
import { audited, record, type AuditActor } from './audit.js';
import type { Deps, GatewayCall } from './context.js';
import { secretBox } from './secrets.js';
import { secretOf } from './consent.js';

/** Up to this many stored rows (events and e-mails) are erased before the answer. */
export const SYNC_LIMIT = 10_000;

/** Why the address must stay suppressed after erasure, or null when it may be written to again. */
async function suppressionReasonOf(db: Executor, c: ContactRow): Promise<string | null> {
  // A complaint is kept apart from an unsubscribe: it stops transactional e-mail too (SPEC §22).
  if (c.status === 'unsubscribed') return c.status_reason === 'complaint' ? 'complained' : 'unsubscribed';
  if (c.status === 'invalid') return c.status;
  const state = await contactTopicState(db, c.id);
  return [...state.subscribed.values()].some((s) => !s) ? 'unsubscribed' : null;
}

export function erasureView(e: ErasureRow) {
  return {
    ok: true as const,
    contact_id: e.contact_id,
    erasure_id: e.id,
    status: e.status,
    erased: e.erased,
    started_at: iso(e.created_at)!,
    finished_at: iso(e.finished_at),
  };
}

/**
 * Erases the contact. In the caller's transaction: the choices, consent and books, the contact's own
 * row, the audit rows about it, the kept hash; then the history, all of it when small enough, else it
 * is left to the worker (the address sealed in the erasure row meanwhile). Erasing again answers the
 * erasure already made.
 */
async function eraseIn(trx: Executor, deps: Deps, contact: ContactRow, now: number): Promise<ErasureRow> {
  if (contact.erased_at != null) return (await latestErasure(trx, contact.id))!;
  const secret = await secretOf(deps);
  const reason = await suppressionReasonOf(trx, contact);
  if (reason)
    await trx
      .insertInto('suppressed_hashes')
      .values({
        project_id: contact.project_id,
        email_hash: suppressionHash(secret, contact.project_id, contact.email),
        reason,
        created_at: now,
      })
      .onConflict((oc) => oc.columns(['project_id', 'email_hash']).doUpdateSet({ reason }))
      .execute();
  let erased: ErasedCounts = await eraseContactRows(trx, contact.id, now);
  erased.audit_log = await scrubAudit(trx, contact.id, contact.email);
  const size = await historySize(trx, contact.project_id, contact.id, contact.email);
  const history = { projectId: contact.project_id, contactId: contact.id, email: contact.email };
  const id = await insertErasure(
    trx,
    {
      project_id: contact.project_id,
      contact_id: contact.id,
      sealed_email: secretBox(secret).seal(contact.email),
      erased,
    },
    now,
  );
  if (size <= SYNC_LIMIT) {
    erased = addCounts(erased, await eraseHistoryBatch(trx, { ...history, limit: SYNC_LIMIT + 1 }));
    await tombstoneContact(trx, contact.id, now);
    erased.contacts = 1;
    await finishErasure(trx, id, erased, now);
  } else {
    await tombstoneContact(trx, contact.id, now);
    erased.contacts = 1;
    await trx
      .updateTable('erasures')
      .set({ erased: JSON.stringify(erased) })
      .where('id', '=', id)
      .execute();
  }
  return (await latestErasure(trx, contact.id))!;
}

/** `POST /api/admin/contacts/{id}/erase`. Audited without the address (SPEC §14, §18). */
export async function eraseContact(deps: Deps, who: AuditActor, contactId: number) {
  const now = deps.clock.now();
  return audited(deps, who, async (trx, note) => {
    const contact = await findContact(trx, contactId);
    if (!contact) throw notFound(`Contact ${contactId}`);
    const project = await findProjectById(trx, contact.project_id);
    const e = await eraseIn(trx, deps, contact, now);
    note({
      action: 'contact.erase',
      site_key: project?.site_key ?? null,
      target: `contact:${contactId}`,
      after: { erasure_id: e.id, status: e.status, erased: e.erased },
    });
    return erasureView(e);
  });
}

/** `POST /api/scoped/contacts/erase` `{email}`: the site passes a person's deletion request on. */
export async function scopedErase(call: GatewayCall, raw: unknown) {
  const body = requireObject(raw);
  applyPhpTolerances(body);
  assertBody(ScopedEraseBody, body, {
    required: ['email'],
    eventType: 'contact_erase',
    what: 'the erasure',
    limits: call.deps.config.fieldLimits,
  });
  const email = normaliseEmail(body.email);
  // An address never held (or already erased) is a 404: for the site, nothing is left to erase.
  if (!(await findContactByEmail(call.deps.db.db, call.project.id, email)))
    throw notFound('A contact with this address');
  return executePlan(call, body, {
    contact: { email, existing: true },
    emails: [],
    // The request's own chronology row would name the address: it is erased with the rest.
    forget: true,
    work: async (trx, { eventId, contact: { id }, now }) => {
      const contact = await findContact(trx, id);
      if (!contact) throw notFound('A contact with this address');
      const e = await eraseIn(trx, call.deps, contact, now);
      // Audited like the administrator's erase, in the same transaction, without the address (SPEC §22):
      // the actor is the site's key, named by its project and last four characters.
      await record(
        trx,
        {
          actor: `key:${call.project.site_key}…${call.key?.last4 ?? '????'}`,
          via: 'key',
          address: null,
        },
        {
          action: 'contact.erase',
          site_key: call.project.site_key,
          target: `contact:${contact.id}`,
          after: { erasure_id: e.id, status: e.status, erased: e.erased },
        },
        now,
      );
      return {
        response: { ...erasureView(e), site_key: call.project.site_key, event_id: eventId },
        effects: { contact_id: contact.id, erasure_id: e.id, status: e.status },
      };
    },
  });
}

export async function erasureOf(deps: Deps, contactId: number) {
  const e = await latestErasure(deps.db.db, contactId);
  return e ? erasureView(e) : null;
}

// --- export ---

const PAGE = 500;

/** Rows of a table for the contact, page by page by id: the export never holds a whole history. */
async function* pages<T extends { id: number }>(load: (afterId: number) => Promise<T[]>): AsyncGenerator<T> {
  let after = 0;
  for (;;) {
    const rows = await load(after);
    for (const r of rows) yield r;
    if (rows.length < PAGE) return;
    after = Number(rows[rows.length - 1].id);
  }
}

async function* exportDocument(db: Executor, c: ContactRow, siteKey: string): AsyncGenerator<string> {
  const topics = await listTopics(db, c.project_id);
  const state = await contactTopicState(db, c.id);
  yield `{"ok":true,"exported_at":${JSON.stringify(new Date().toISOString())},"site_key":${JSON.stringify(siteKey)},`;
  yield `"contact":${JSON.stringify({
    id: c.id,
    email: c.email,
    name: c.name,
    status: c.status,
    fields: parseJson(c.fields, {}),
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  })},`;
  yield `"subscriptions":${JSON.stringify(
    topics.map((t) => ({ topic: t.key, title: t.title, subscribed: state.subscribed.get(t.key) ?? true })),
  )},`;
  yield `"consent":${JSON.stringify(await consentHistory(db, c.id))},`;
  yield `"books":${JSON.stringify((await contactLists(db, c.id)).map((l) => ({ ...l, added_at: iso(l.added_at) })))},`;
  const sections: [string, AsyncGenerator<unknown>][] = [
    [
      'events',
      pages((after) =>
        db
          .selectFrom('events')
          .select(['id', 'endpoint', 'event_type', 'order_id', 'http_status', 'payload', 'created_at'])
          .where('project_id', '=', c.project_id)
          .where('email', '=', c.email)
          .where('id', '>', after)
          .orderBy('id')
          .limit(PAGE)
          .execute(),
      ),
    ],
    [
      'emails',
      pages((after) =>
        db
          .selectFrom('scheduled_emails')
          .select([
            'id',
            'kind',
            'template_key',
            'topic',
            'to_email',
            'to_name',
            'status',
            'rendered',
            'sent_at',
            'created_at',
          ])
          .where('contact_id', '=', c.id)
          .where('id', '>', after)
          .orderBy('id')
          .limit(PAGE)
          .execute(),
      ),
    ],
    [
      'reports',
      pages((after) =>
        db
          .selectFrom('email_reports')
          .select(['id', 'email_id', 'kind', 'source', 'status_code', 'diagnostic', 'recipient', 'received_at'])
          .where('contact_id', '=', c.id)
          .where('id', '>', after)
          .orderBy('id')
          .limit(PAGE)
          .execute(),
      ),
    ],
    [
      'orders',
      pages((after) =>
        db
          .selectFrom('orders')
          .select([
            'id',
            'order_id',
            'cart_type',
            'status',
            'course_name',
            'amount_minor',
            'currency',
            'paid_at',
            'created_at',
          ])
          .where('contact_id', '=', c.id)
          .where('id', '>', after)
          .orderBy('id')
          .limit(PAGE)
          .execute(),
      ),
    ],
  ];
  for (let s = 0; s < sections.length; s++) {
    const [name, rows] = sections[s];
    yield `${JSON.stringify(name)}:[`;
    let first = true;
    for await (const r of rows) {
      yield (first ? '' : ',') + JSON.stringify(exportRow(r as Record<string, unknown>));
      first = false;
    }
    yield s === sections.length - 1 ? ']}' : '],';
  }
}

/** Times as ISO strings, stored JSON parsed: the document reads as data, not as our storage. */
function exportRow(r: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) {
    if (k.endsWith('_at') && k !== 'paid_at' && v !== null) out[k] = iso(Number(v));
    else if ((k === 'payload' || k === 'rendered') && typeof v === 'string') out[k] = parseJson(v, v);
    else out[k] = v;
  }
  return out;
}

/** `GET /api/admin/contacts/{id}/export`: the stream of the document; audited without the address. */
export async function exportContact(deps: Deps, who: AuditActor, contactId: number): Promise<Readable> {
  const db = deps.db.db;
  const c = await findContact(db, contactId);
  if (!c) throw notFound(`Contact ${contactId}`);
  const project = await findProjectById(db, c.project_id);
  await record(
    db,
    who,
    { action: 'contact.export', site_key: project?.site_key ?? null, target: `contact:${contactId}` },
    deps.clock.now(),
  );
  return Readable.from(exportDocument(db, c, project?.site_key ?? ''));
}
