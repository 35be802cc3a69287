// Operations: Prometheus metrics, /docs, retention, structured logs without secrets.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { purgeExpired } from '../src/delivery/retention.js';
import { buildApp, LOG_REDACT, LOG_SERIALIZERS } from '../src/http/app.js';
import { adminCall, createTestApp, DIALECTS, keyCall, rawCall, setupProject, type TestApp } from './support/harness.js';

const DAY = 86_400_000;

/** Minimal Prometheus text-format check: HELP/TYPE comments and `name{labels} value` samples. */
function parseProm(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const m =
      /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})?) (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/.exec(
        line,
      );
    assert.ok(m, `not a Prometheus sample line: ${line}`);
    samples.set(m[1], Number(m[2]));
  }
  return samples;
}

for (const d of DIALECTS) {
  describe(`operations [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    before(async () => {
      t = await createTestApp(d.name);
      ({ key } = await setupProject(t.app));
    });
    after(() => t.close());

    it('/metrics is Prometheus text with requests, events by outcome and the outbox', async () => {
      await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
        email: 'm@example.com',
        fields: { event_title: 'a', work_title: 'b' },
      });
      await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', { event_type: 'contest_results' });
      await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'made_up_type_123',
        email: 'm@example.com',
      });
      const r = await rawCall(t.app, 'GET', '/metrics', {});
      assert.equal(r.status, 200);
      assert.match(String(r.headers['content-type']), /text\/plain/);
      const m = parseProm(r.body);
      assert.equal(m.get('egw_gateway_events_total{event_type="contest_results",outcome="accepted"}'), 1);
      assert.equal(m.get('egw_gateway_events_total{event_type="contest_results",outcome="rejected"}'), 1);
      assert.equal(
        m.get('egw_gateway_events_total{event_type="unknown",outcome="rejected"}'),
        1,
        'unknown types share one label value',
      );
      assert.equal(
        m.get('egw_http_requests_total{method="POST",route="/api/scoped/send/transactional",status="422"}'),
        2,
      );
      assert.equal(m.get('egw_outbox_due'), 1);
      assert.ok(m.has('egw_process_resident_memory_bytes'));
    });

    it('retention purges payloads, bodies and idempotency records older than their windows, and only those', async () => {
      const db = t.deps.db.db;
      const now = t.clock.now();
      await keyCall(
        t.app,
        key,
        'POST',
        '/api/scoped/send/transactional',
        {
          event_type: 'contest_results',
          email: 'old@example.com',
          idempotency_key: 'old-1',
          fields: { event_title: 'a', work_title: 'b' },
        },
        { prefer: 'respond-async' },
      );
      await keyCall(
        t.app,
        key,
        'POST',
        '/api/scoped/send/transactional',
        {
          event_type: 'contest_results',
          email: 'new@example.com',
          idempotency_key: 'new-1',
          fields: { event_title: 'a', work_title: 'b' },
        },
        { prefer: 'respond-async' },
      );
      // Age the first request's rows: 100 days old, its e-mail sent 40 days ago.
      const oldEvent = (
        await db.selectFrom('events').select('id').where('email', '=', 'old@example.com').executeTakeFirstOrThrow()
      ).id;
      await db
        .updateTable('events')
        .set({ created_at: now - 100 * DAY })
        .where('id', '=', oldEvent)
        .execute();
      await db
        .updateTable('idempotency')
        .set({ created_at: now - 8 * DAY })
        .where('idempotency_key', '=', 'old-1')
        .execute();
      await db
        .updateTable('scheduled_emails')
        .set({ status: 'sent', rendered: '{"subject":"x"}', updated_at: now - 40 * DAY })
        .where('to_email', '=', 'old@example.com')
        .execute();
      await db
        .updateTable('scheduled_emails')
        .set({ status: 'sent', rendered: '{"subject":"y"}', updated_at: now - DAY })
        .where('to_email', '=', 'new@example.com')
        .execute();

      const purged = await purgeExpired(db, { eventPayloadDays: 90, messageBodyDays: 30, idempotencyDays: 7 }, now);
      assert.deepEqual(purged, { eventPayloads: 1, messageBodies: 1, idempotencyKeys: 1 });
      const ev = (await adminCall(t.app, 'GET', `/api/admin/external-events/${oldEvent}`)).body.event;
      assert.equal(ev.payload, null);
      assert.equal(ev.event_type, 'contest_results', 'the chronology keeps the row');
      const rows = await db
        .selectFrom('scheduled_emails')
        .select(['to_email', 'rendered', 'status'])
        .where('to_email', 'in', ['old@example.com', 'new@example.com'])
        .orderBy('to_email')
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.to_email, r.rendered === null]),
        [
          ['new@example.com', false],
          ['old@example.com', true],
        ],
      );
      const keys = await db.selectFrom('idempotency').select('idempotency_key').execute();
      assert.ok(keys.some((k) => k.idempotency_key === 'new-1'));
      assert.ok(!keys.some((k) => k.idempotency_key === 'old-1'));
      assert.deepEqual(await purgeExpired(db, { eventPayloadDays: 90, messageBodyDays: 30, idempotencyDays: 7 }, now), {
        eventPayloads: 0,
        messageBodies: 0,
        idempotencyKeys: 0,
      });
    });
  });
}

describe('docs and logs', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp('sqlite');
  });
  after(() => t.close());

  it('/docs serves the rendered reference from local files', async () => {
    const page = await rawCall(t.app, 'GET', '/docs/', {});
    assert.equal(page.status, 200);
    assert.match(String(page.body), /swagger-ui/i);
    assert.ok(!/https?:\/\/(cdn|unpkg|jsdelivr)/.test(String(page.body)), 'no CDN');
    const spec = await rawCall(t.app, 'GET', '/docs/json', {});
    assert.ok(spec.body.paths['/api/scoped/send/transactional']);
  });

  it('logs are JSON with a request id and never carry a key or token', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = pino({ level: 'info', redact: LOG_REDACT, serializers: LOG_SERIALIZERS }, sink);
    const app = await buildApp(t.deps, { logger });
    const { key } = await setupProject(app, { site: 'logsite' });
    await keyCall(
      app,
      key,
      'POST',
      '/api/scoped/send/transactional',
      { event_type: 'contest_results', email: 'l@example.com', fields: { event_title: 'a', work_title: 'b' } },
      { 'x-request-id': 'req-abc-1' },
    );
    // Link tokens (a preference link is a credential) and setup codes are masked in the request's URL.
    for (const url of [
      '/p/p1.SECRETPREFTOKEN.abc',
      '/u/u2.SECRETUNSUBTOKEN.abc',
      '/c/c1.SECRETCLICKTOKEN',
      '/o/o1.SECRETOPENTOKEN.gif',
      '/ui/setup?code=SECRETSETUPCODE',
    ])
      await app.inject({ method: 'GET', url });
    await app.close();
    const all = lines.join('');
    assert.ok(!all.includes(key), 'the API key never reaches the log');
    assert.ok(!/SECRET(PREF|UNSUB|CLICK|OPEN)TOKEN|SECRETSETUPCODE/.test(all), 'no link token or setup code is logged');
    assert.ok(all.includes('"/p/[token]"'), 'the masked URL is logged');
    assert.ok(!all.includes('test-admin-token'), 'nor the admin token');
    const parsed = lines.map((l) => JSON.parse(l));
    assert.ok(parsed.some((l) => l.reqId === 'req-abc-1'));
  });
});
