// The audit log of the data routes (SPEC §14, issue 16): contacts, address books, e-mail actions, event
// replay and legacy intake, sequences, cart chains, campaigns, ending a session and the demo loader.
// Each successful change writes exactly one row, in its own transaction, with who, where, what and
// before/after, read back through GET /api/admin/audit; a refused change (404/409/422) writes none.
// Both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cliActor } from '../src/cliAdmin.js';
import { loadDemo } from '../src/services/demo.js';
import { createUser, login, sessionCall } from './support/accounts.js';
import {
  adminCall,
  createTestApp,
  DIALECTS,
  keyCall,
  newKey,
  REPLAY_RIGHTS as RIGHTS,
  replayableContest as contest,
  setupProject,
  type Call,
  type TestApp,
} from './support/harness.js';

type Row = Record<string, any>;

const T = '/api/scoped/send/transactional';

for (const d of DIALECTS) {
  describe(`audit rows of the data routes [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let site: string;
    let lists: { paid: number; cat: number; leads: number };

    const auditRows = async (): Promise<Row[]> => {
      const r = await adminCall(t.app, 'GET', '/api/admin/audit?limit=500');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.items;
    };
    /** The call's answer and the audit rows written while it ran. */
    const audited = async (call: () => Promise<Call>): Promise<{ res: Call; rows: Row[] }> => {
      const last = Math.max(0, ...(await auditRows()).map((r) => r.id as number));
      const res = await call();
      return { res, rows: (await auditRows()).filter((r) => r.id > last) };
    };
    /** A successful change: its status, and exactly one row with this action, as the root token. */
    const one = async (call: () => Promise<Call>, action: string, status = 200) => {
      const { res, rows } = await audited(call);
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.equal(rows.length, 1, `one audit row, got ${JSON.stringify(rows)}`);
      const row = rows[0];
      assert.equal(row.action, action);
      assert.equal(row.actor, 'root');
      assert.equal(row.via, 'root');
      return { res, row };
    };
    /** A refused change: its status, and no audit row at all. */
    const none = async (call: () => Promise<Call>, status: number) => {
      const { res, rows } = await audited(call);
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.deepEqual(rows, [], 'a refused change writes no audit row');
    };
    const upsert = (email: string, extra: Row = {}) =>
      adminCall(t.app, 'POST', '/api/contacts/upsert', { site_key: site, email, ...extra });
    const emailsOf = async (order: string) =>
      (await adminCall(t.app, 'GET', `/api/admin/emails?site_key=${site}&order_id=${order}`)).body.items as Row[];
    const lastEvent = async (order: string) =>
      (await adminCall(t.app, 'GET', `/api/admin/external-events?site_key=${site}&order_id=${order}`)).body.items[0];

    before(async () => {
      t = await createTestApp(d.name);
      ({ site, lists } = await setupProject(t.app));
      // A second project, for a contact that is not the address book's.
      const other = await adminCall(t.app, 'POST', '/api/sites', {
        site_key: 'other',
        name: 'Other',
        from_email: 'noreply@other.example',
      });
      assert.ok(other.status < 300, JSON.stringify(other.body));
    });
    after(() => t.close());

    it('POST /api/contacts/upsert: contact.upsert, before null when new, then the previous state', async () => {
      const created = await one(
        () => upsert('Anna@Example.com', { name: 'Anna', fields: { city: 'Kazan', password: 'hunter2' } }),
        'contact.upsert',
      );
      const id = created.res.body.contact_id;
      assert.equal(created.row.site_key, site);
      assert.equal(created.row.target, `contact:${id}`);
      assert.equal(created.row.before, null);
      assert.equal(created.row.after.email, 'anna@example.com');
      assert.equal(created.row.after.name, 'Anna');
      assert.equal(created.row.after.status, 'active');
      assert.equal(created.row.after.fields.city, 'Kazan');
      assert.equal(created.row.after.fields.password, '[redacted]', 'a secret-named member is redacted');
      assert.ok(!JSON.stringify(created.row).includes('hunter2'));

      const updated = await one(() => upsert('anna@example.com', { name: 'Anna K.' }), 'contact.upsert');
      assert.equal(updated.row.target, `contact:${id}`);
      assert.equal(updated.row.before.name, 'Anna');
      assert.equal(updated.row.after.name, 'Anna K.');

      await none(() => adminCall(t.app, 'POST', '/api/contacts/upsert', { site_key: 'nope', email: 'x@y.z' }), 404);
      await none(
        () => adminCall(t.app, 'POST', '/api/contacts/upsert', { site_key: site, email: 'not-an-address' }),
        422,
      );
    });

    it('POST /api/admin/contacts/:id/status: contact.status with before/after {email, status}; its webhook in the same change', async () => {
      const id = (await upsert('bob@example.com')).body.contact_id;
      const { row } = await one(
        () => adminCall(t.app, 'POST', `/api/admin/contacts/${id}/status`, { status: 'unsubscribed' }),
        'contact.status',
      );
      assert.equal(row.site_key, site);
      assert.equal(row.target, `contact:${id}`);
      assert.deepEqual(row.before, { email: 'bob@example.com', status: 'active' });
      assert.deepEqual(row.after, { email: 'bob@example.com', status: 'unsubscribed' });
      const contact = await adminCall(t.app, 'GET', `/api/admin/contacts/${id}`);
      assert.equal(contact.body.contact.status, 'unsubscribed');

      await none(() => adminCall(t.app, 'POST', '/api/admin/contacts/999999/status', { status: 'active' }), 404);
      await none(() => adminCall(t.app, 'POST', `/api/admin/contacts/${id}/status`, { status: 'nonsense' }), 422);
    });

    it('POST /api/lists: list.create; POST /api/lists/:list_id/contacts: list.add_contact', async () => {
      const made = await one(
        () => adminCall(t.app, 'POST', '/api/lists', { site_key: site, name: 'newsletter' }),
        'list.create',
      );
      const listId = made.res.body.list_id;
      assert.equal(made.row.site_key, site);
      assert.equal(made.row.target, `list:${listId}`);
      assert.equal(made.row.before, null);
      assert.deepEqual(made.row.after, { list_id: listId, name: 'newsletter' });
      await none(() => adminCall(t.app, 'POST', '/api/lists', { site_key: 'nope', name: 'x' }), 404);

      const contactId = (await upsert('carol@example.com')).body.contact_id;
      const added = await one(
        () => adminCall(t.app, 'POST', `/api/lists/${listId}/contacts`, { contact_id: contactId }),
        'list.add_contact',
      );
      assert.equal(added.row.site_key, site);
      assert.equal(added.row.target, `list:${listId}`);
      assert.equal(added.row.before.member, false);
      assert.equal(added.row.after.member, true);
      assert.equal(added.row.after.contact_id, contactId);
      assert.equal(added.row.after.email, 'carol@example.com');

      const stranger = (
        await adminCall(t.app, 'POST', '/api/contacts/upsert', { site_key: 'other', email: 'dan@example.com' })
      ).body.contact_id;
      await none(() => adminCall(t.app, 'POST', `/api/lists/${listId}/contacts`, { contact_id: stranger }), 422);
      await none(() => adminCall(t.app, 'POST', '/api/lists/999999/contacts', { contact_id: contactId }), 404);
    });

    it('POST /api/events/unpaid-order: event.unpaid_order, written with the order it records', async () => {
      const body = { site_key: site, email: 'Eve@Example.com', order_id: 'U-1', course_name: 'Algebra' };
      const { res, row } = await one(
        () => adminCall(t.app, 'POST', '/api/events/unpaid-order', body),
        'event.unpaid_order',
      );
      assert.equal(row.site_key, site);
      assert.equal(row.target, `event:${res.body.event_id}`);
      assert.equal(row.before, null);
      assert.equal(row.after.event_id, res.body.event_id);
      assert.equal(row.after.order_id, 'U-1');
      assert.equal(row.after.cart_type, 'course');
      assert.equal(row.after.email, 'eve@example.com');
      assert.deepEqual(row.after.scheduled_email_ids, res.body.scheduled_email_ids);
      assert.equal(row.after.duplicate, false);
      assert.equal(res.body.scheduled_email_ids.length, 3, 'the course chain is scheduled');
      assert.equal((await emailsOf('U-1')).length, 3);

      const again = await one(() => adminCall(t.app, 'POST', '/api/events/unpaid-order', body), 'event.unpaid_order');
      assert.equal(again.row.after.duplicate, true);
      await none(() => adminCall(t.app, 'POST', '/api/events/unpaid-order', { ...body, site_key: 'nope' }), 404);
      await none(() => adminCall(t.app, 'POST', '/api/events/unpaid-order', { site_key: site, order_id: 'U-2' }), 422);
    });

    it('POST /api/admin/emails/:id/cancel and /retry: email.cancel and email.retry with before/after status', async () => {
      const ids = (await emailsOf('U-1')).map((e) => e.id as number);
      const id = ids[0];
      const cancelled = await one(() => adminCall(t.app, 'POST', `/api/admin/emails/${id}/cancel`), 'email.cancel');
      assert.equal(cancelled.row.site_key, site);
      assert.equal(cancelled.row.target, `email:${id}`);
      assert.deepEqual(cancelled.row.before, { status: 'scheduled' });
      assert.deepEqual(cancelled.row.after, { status: 'cancelled' });
      await none(() => adminCall(t.app, 'POST', `/api/admin/emails/${id}/cancel`), 409);
      await none(() => adminCall(t.app, 'POST', '/api/admin/emails/999999/cancel'), 404);

      await none(() => adminCall(t.app, 'POST', `/api/admin/emails/${ids[1]}/retry`), 409);
      await t.deps.db.db
        .updateTable('scheduled_emails')
        .set({ status: 'failed', attempts: 5, last_error: 'boom' })
        .where('id', '=', ids[1])
        .execute();
      const retried = await one(() => adminCall(t.app, 'POST', `/api/admin/emails/${ids[1]}/retry`), 'email.retry');
      assert.equal(retried.row.site_key, site);
      assert.equal(retried.row.target, `email:${ids[1]}`);
      assert.deepEqual(retried.row.before, { status: 'failed', attempts: 5 });
      assert.deepEqual(retried.row.after, { status: 'queued', attempts: 0 });
      await none(() => adminCall(t.app, 'POST', '/api/admin/emails/999999/retry'), 404);
    });

    it('POST /api/admin/external-events/:id/replay: event.replay in the replay’s own transaction, refused again or accepted', async () => {
      const narrow = await newKey(t.app, site, { ...RIGHTS, allowed_api_events: ['olympiad_results'] }, 'narrow');
      assert.equal((await keyCall(t.app, narrow.key, 'POST', T, contest('R-1'))).status, 403);
      const original = await lastEvent('R-1');
      const replay = () => adminCall(t.app, 'POST', `/api/admin/external-events/${original.id}/replay`);

      // Refused again: the new chronology row (logRequest) and the audit row commit together.
      const early = await one(replay, 'event.replay');
      assert.equal(early.res.body.accepted, false);
      assert.equal(early.row.site_key, site);
      assert.equal(early.row.target, `event:${original.id}`);
      assert.deepEqual(early.row.before, {
        event_id: original.id,
        accepted: false,
        http_status: 403,
        error: original.error_code,
      });
      assert.equal(early.row.after.accepted, false);
      assert.equal(early.row.after.http_status, 403);
      assert.equal(typeof early.row.after.event_id, 'number');

      await adminCall(t.app, 'PATCH', `/api/admin/keys/${narrow.id}`, { rights: RIGHTS });
      const ok = await one(replay, 'event.replay');
      assert.equal(ok.res.body.accepted, true);
      assert.deepEqual(ok.row.after, {
        event_id: ok.res.body.event_id,
        accepted: true,
        http_status: 200,
        replayed_stored_answer: false,
      });
      assert.equal((await emailsOf('R-1')).length, 1);
      await none(replay, 409);
      await none(() => adminCall(t.app, 'POST', '/api/admin/external-events/999999/replay'), 404);
    });

    it('a replay answered with the stored answer (the site sent it again meanwhile) is recorded too', async () => {
      const other = await newKey(t.app, site, { ...RIGHTS, allowed_api_events: [] }, 'other');
      assert.equal((await keyCall(t.app, other.key, 'POST', T, contest('R-2'))).status, 403);
      const original = await lastEvent('R-2');
      await adminCall(t.app, 'PATCH', `/api/admin/keys/${other.id}`, { rights: RIGHTS });
      assert.equal((await keyCall(t.app, other.key, 'POST', T, contest('R-2'))).status, 200);
      const { res, row } = await one(
        () => adminCall(t.app, 'POST', `/api/admin/external-events/${original.id}/replay`),
        'event.replay',
      );
      assert.equal(res.body.replayed_stored_answer, true);
      assert.equal(row.after.replayed_stored_answer, true);
      assert.equal(row.after.event_id, res.body.event_id);
      assert.equal((await emailsOf('R-2')).length, 1);
    });

    it('POST /api/sequences, PUT cart-chains, POST /api/campaigns: sequence.create, cart_chains.replace, campaign.create', async () => {
      const templates = (await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`)).body.items as Row[];
      const tpl = templates.find((x) => x.name === 'cart_1h')!.id as number;
      const steps = [{ template_id: tpl, delay_minutes: 30 }];
      const seq = await one(
        () => adminCall(t.app, 'POST', '/api/sequences', { site_key: site, name: 'fast', steps }),
        'sequence.create',
      );
      const seqId = seq.res.body.sequence_id;
      assert.equal(seq.row.site_key, site);
      assert.equal(seq.row.target, `sequence:${seqId}`);
      assert.equal(seq.row.before, null);
      assert.deepEqual(seq.row.after, { sequence_id: seqId, name: 'fast', steps });
      await none(
        () =>
          adminCall(t.app, 'POST', '/api/sequences', {
            site_key: site,
            name: 'bad',
            steps: [{ template_id: 999999, delay_minutes: 1 }],
          }),
        422,
      );

      const chains = `/api/admin/projects/${site}/cart-chains`;
      const set = await one(
        () => adminCall(t.app, 'PUT', chains, { chains: { course: seqId } }),
        'cart_chains.replace',
      );
      assert.equal(set.row.site_key, site);
      assert.deepEqual(set.row.before, {});
      assert.deepEqual(set.row.after, { course: seqId });
      const back = await one(
        () => adminCall(t.app, 'PUT', chains, { chains: { course: null } }),
        'cart_chains.replace',
      );
      assert.deepEqual(back.row.before, { course: seqId });
      assert.deepEqual(back.row.after, {});
      await none(() => adminCall(t.app, 'PUT', chains, { chains: { course: 999999 } }), 422);
      await none(() => adminCall(t.app, 'PUT', '/api/admin/projects/nope/cart-chains', { chains: {} }), 404);

      const member = (await upsert('frank@example.com')).body.contact_id;
      await adminCall(t.app, 'POST', `/api/lists/${lists.leads}/contacts`, { contact_id: member });
      const camp = await one(
        () => adminCall(t.app, 'POST', '/api/campaigns', { site_key: site, template_id: tpl, list_id: lists.leads }),
        'campaign.create',
      );
      const campaignId = camp.res.body.campaign_id;
      assert.equal(camp.row.site_key, site);
      assert.equal(camp.row.target, `campaign:${campaignId}`);
      assert.equal(camp.row.before, null);
      assert.equal(camp.row.after.campaign_id, campaignId);
      assert.equal(camp.row.after.template_id, tpl);
      assert.equal(camp.row.after.template_name, 'cart_1h');
      assert.equal(camp.row.after.list_id, lists.leads);
      assert.equal(camp.row.after.recipients, camp.res.body.recipients);
      assert.equal(camp.row.after.send_at, camp.res.body.send_at);
      await none(
        () => adminCall(t.app, 'POST', '/api/campaigns', { site_key: site, template_id: tpl, list_id: 999999 }),
        422,
      );
    });

    it('DELETE /api/admin/sessions/:session_id: session.end, named by a short prefix, never the session', async () => {
      await createUser(t.app, { email: 'owner@x.example', role: 'owner' });
      const a = await login(t.app, 'owner@x.example');
      const b = await login(t.app, 'owner@x.example');
      const listed = (await sessionCall(t.app, a, 'GET', '/api/admin/sessions')).body.items as Row[];
      const victim = listed.find((s) => !s.current)!;
      assert.ok(victim, JSON.stringify(listed));
      const { res, rows } = await audited(() =>
        sessionCall(t.app, a, 'DELETE', `/api/admin/sessions/${victim.id as string}`),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(rows.length, 1, JSON.stringify(rows));
      const row = rows[0];
      assert.equal(row.action, 'session.end');
      assert.equal(row.actor, 'owner@x.example');
      assert.equal(row.via, 'session');
      assert.equal(row.site_key, null);
      assert.equal(row.target, `session:${(victim.id as string).slice(0, 8)}`);
      assert.equal(row.before.session, (victim.id as string).slice(0, 8));
      assert.equal(row.before.created_at, victim.created_at);
      assert.equal(row.after, null);
      const text = JSON.stringify(row);
      assert.ok(!text.includes(victim.id as string), 'the full id prefix is not logged');
      for (const cookie of [a.cookie, b.cookie]) assert.ok(!text.includes(cookie.split('=')[1]));

      const ended = await sessionCall(t.app, b, 'GET', '/api/admin/sessions');
      assert.equal(ended.status, 401, 'the ended session no longer works');
      const { res: gone, rows: noRows } = await audited(() =>
        sessionCall(t.app, a, 'DELETE', `/api/admin/sessions/${victim.id as string}`),
      );
      assert.equal(gone.status, 404);
      assert.deepEqual(noRows, []);
    });

    it('loadDemo: demo.load by the CLI actor with what was created; a rerun writes none', async () => {
      const { rows } = await audited(async () => {
        await loadDemo(t.deps, cliActor());
        return { status: 200, body: null, headers: {} };
      });
      // The demo's sender domain is approved with it (SPEC §21), so its test sends go out.
      assert.equal(rows.length, 2, JSON.stringify(rows));
      const approval = rows.find((r: any) => r.action === 'domain.approve');
      assert.equal(approval?.target, 'domain:courses.example');
      assert.equal(approval?.via, 'cli');
      const row = rows.find((r: any) => r.action === 'demo.load')!;
      assert.equal(row.action, 'demo.load');
      assert.equal(row.via, 'cli');
      assert.equal(row.actor, cliActor().actor);
      assert.equal(row.site_key, 'demo-courses');
      assert.match(row.target, /^project:\d+$/);
      assert.equal(row.before, null);
      assert.equal(row.after.keys_created, 4);
      assert.ok(row.after.templates > 0);
      assert.ok(row.after.address_books > 0);
      assert.ok(!JSON.stringify(row).includes('egw_'), 'no key in the log');

      const { rows: again } = await audited(async () => {
        await loadDemo(t.deps, cliActor());
        return { status: 200, body: null, headers: {} };
      });
      assert.deepEqual(again, [], 'a rerun changes nothing and records nothing');
    });
  });
}
