// Seeded generator test (issue 11): valid bodies of every gateway and admin POST/PUT/PATCH, mutated with
// wrong types, nulls, huge and non-finite numbers, deep nesting, NUL and lone surrogates, big arrays and
// odd keys, plus hostile path parameters. For every case: no 5xx, every error body is the SPEC §1
// envelope, and a refused request stores nothing (a refused gateway request adds only its rejected
// chronology row). The endpoints are read from the OpenAPI document, so a new route is fuzzed too (from
// an empty body when it has no sample below). FUZZ_SEED and FUZZ_RUNS override the seed and the count.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { signClick, signOpen, trackingKey, trackingKeys, verifyClick } from '../src/domain/trackingTokens.js';
import { installationSecret } from '../src/services/secrets.js';
import { sql } from 'kysely';
import {
  ADMIN_TOKEN,
  adminCall,
  createTestApp,
  DIALECTS,
  keyCall,
  setupProject,
  type TestApp,
} from './support/harness.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_111);
const RUNS = Number(process.env.FUZZ_RUNS ?? 200);

/** JSON text placed as is (numbers JSON.stringify cannot write, nesting built without recursion). */
class Raw {
  constructor(readonly text: string) {}
}
/** An object as ordered pairs: keys such as __proto__ stay plain members. */
class Obj {
  constructor(readonly pairs: [string, unknown][]) {}
}
type Value = unknown;

function enc(v: Value): string {
  if (v instanceof Raw) return v.text;
  if (v instanceof Obj) return `{${v.pairs.map(([k, x]) => `${JSON.stringify(k)}:${enc(x)}`).join(',')}}`;
  if (Array.isArray(v)) return `[${v.map(enc).join(',')}]`;
  if (v && typeof v === 'object') return enc(toObj(v as Record<string, unknown>));
  return JSON.stringify(v) ?? 'null';
}

function toObj(o: Record<string, unknown>): Obj {
  return new Obj(
    Object.entries(o).map(([k, v]) => [
      k,
      v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Raw) && !(v instanceof Obj)
        ? toObj(v as Record<string, unknown>)
        : v,
    ]),
  );
}

const deep = (n: number, open = '[', close = ']', inner = '1') => new Raw(open.repeat(n) + inner + close.repeat(n));
const deepObj = (n: number) => new Raw('{"a":'.repeat(n) + '1' + '}'.repeat(n));

const nastyScalar = fc.constantFrom<Value>(
  null,
  true,
  false,
  0,
  -1,
  1.5,
  0.001,
  -0.01,
  2 ** 53,
  2 ** 63,
  1e308,
  -1e308,
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\udc00\ud800',
  '💥',
  'x'.repeat(10_001),
  '1e400',
  '__proto__',
  "'; drop table contacts; --",
  '<script>alert(1)</script>',
  '9223372036854775808',
  'ivan@пример.рф',
  new Raw('1e400'),
  new Raw('-1e400'),
  new Raw('1e-400'),
  new Raw('9223372036854775808'),
  new Raw('-9223372036854775809'),
  new Raw('123456789012345678901234567890'),
  new Raw('1.000000000000000000001'),
);

const nastyStructure = fc.constantFrom<Value>(
  deep(33),
  deep(40),
  deep(1000),
  deep(10_000),
  deepObj(33),
  deepObj(5000),
  deep(31),
  new Raw('{"__proto__":{"polluted":true}}'),
  new Raw('{"constructor":{"prototype":{"polluted":true}}}'),
  new Obj([
    ['', 1],
    ['a.b', 2],
    ['\u0000', 3],
    ['\ud800', 4],
    ['$where', 5],
  ]),
  Array.from({ length: 2000 }, (_, i) => i),
  Array.from({ length: 300 }, () => 'x'.repeat(100)),
  [],
  new Obj([]),
  new Obj(Array.from({ length: 150 }, (_, i) => [`k${i}`, i] as [string, unknown])),
);

const nasty: fc.Arbitrary<Value> = fc.oneof(
  { weight: 4, arbitrary: nastyScalar },
  { weight: 2, arbitrary: nastyStructure },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer({ min: -(2 ** 31), max: 2 ** 31 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

const nastyPathSegment = fc.constantFrom(
  '0',
  '-1',
  '1.5',
  '1e400',
  'Infinity',
  'NaN',
  '9223372036854775808',
  '99999999999999999999999',
  '9007199254740993',
  'abc',
  'a%00b',
  '%00',
  '%ZZ',
  '%ED%A0%80',
  '%F0%9F%92%A5',
  'x'.repeat(150),
  '..%2F..%2Fetc',
  ' ',
);

type Mutation =
  | { kind: 'set'; path: string[]; value: Value }
  | { kind: 'delete'; path: string[] }
  | { kind: 'add'; key: string; value: Value }
  | { kind: 'body'; value: Value }
  | { kind: 'param'; segment: string };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('set' as const), path: fc.constant([] as string[]), value: nasty }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), path: fc.constant([] as string[]) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      key: fc.constantFrom('extra', '__proto__', 'constructor', 'list_id', 'amount', 'fields', '\u0000', ''),
      value: nasty,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('body' as const), value: nasty }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('param' as const), segment: nastyPathSegment }) },
);

/** Every member path of a sample (top level, and one level into objects such as fields and rights). */
function memberPaths(o: Obj): string[][] {
  const out: string[][] = [];
  for (const [k, v] of o.pairs) {
    out.push([k]);
    if (v instanceof Obj) for (const [k2] of v.pairs) out.push([k, k2]);
    if (Array.isArray(v) && v[0] instanceof Obj) for (const [k2] of v[0].pairs) out.push([k, '0', k2]);
  }
  return out;
}

function setAt(root: Value, path: string[], value: Value): void {
  let cur: Value = root;
  for (let i = 0; i < path.length - 1; i++) {
    if (cur instanceof Obj) cur = cur.pairs.find(([k]) => k === path[i])?.[1];
    else if (Array.isArray(cur)) cur = cur[Number(path[i])];
    else return;
  }
  const last = path[path.length - 1];
  if (cur instanceof Obj) {
    const i = cur.pairs.findIndex(([k]) => k === last);
    if (value === undefined) {
      if (i >= 0) cur.pairs.splice(i, 1);
    } else if (i >= 0) cur.pairs[i][1] = value;
    else cur.pairs.push([last, value]);
  } else if (Array.isArray(cur)) {
    if (value === undefined) cur.splice(Number(last), 1);
    else cur[Number(last)] = value;
  }
}

interface Endpoint {
  method: string;
  path: string;
  sample: () => Record<string, unknown> | null;
  params: Record<string, string>;
}

interface Case {
  method: string;
  url: string;
  payload: string | undefined;
  note: string;
}

/**
 * A deep copy of a generated value: constants (constantFrom) are the same instance in every case, and a
 * case that adds to a body it took from one must not change it for later cases (a cycle, once).
 */
const copy = (v: Value): Value =>
  v instanceof Obj ? new Obj(v.pairs.map(([k, x]) => [k, copy(x)])) : Array.isArray(v) ? v.map(copy) : v;

function makeCase(e: Endpoint, muts: Mutation[], pick: number[]): Case {
  const s = e.sample();
  let body: Value = s === null ? undefined : toObj(s);
  const params = { ...e.params };
  const notes: string[] = [];
  muts.forEach((m, i) => {
    if (m.kind === 'param') {
      const names = Object.keys(params);
      if (!names.length) return;
      const name = names[pick[i] % names.length];
      params[name] = m.segment;
      notes.push(`param ${name}=${m.segment.slice(0, 40)}`);
      return;
    }
    if (m.kind === 'body') {
      body = copy(m.value);
      notes.push(`body=${enc(m.value).slice(0, 60)}`);
      return;
    }
    if (!(body instanceof Obj)) body = new Obj([]);
    if (m.kind === 'add') {
      (body as Obj).pairs.push([m.key, copy(m.value)]);
      notes.push(`add ${JSON.stringify(m.key)}=${enc(m.value).slice(0, 60)}`);
      return;
    }
    const paths = memberPaths(body as Obj);
    if (!paths.length) return;
    const path = paths[pick[i] % paths.length];
    setAt(body, path, m.kind === 'delete' ? undefined : copy(m.value));
    notes.push(m.kind === 'delete' ? `delete ${path.join('.')}` : `set ${path.join('.')}=${enc(m.value).slice(0, 60)}`);
  });
  let url = e.path;
  for (const [k, v] of Object.entries(params)) url = url.replace(`:${k}`, v);
  return { method: e.method, url, payload: body === undefined ? undefined : enc(body), note: notes.join('; ') };
}

/**
 * Counts every row written to any table of the database (new tables included), except refused requests'
 * own chronology rows (events with accepted = 0), the configuration version bump and failed logins: database triggers
 * add one to `fuzz_writes.n` per row, so a rolled-back write counts nothing and one read tells all.
 */
async function installWriteCounter(t: TestApp): Promise<void> {
  const db = t.deps.db.db;
  const pg = t.deps.db.dialect === 'postgres';
  const tables = (
    pg
      ? await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)
      : await sql<{
          name: string;
        }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)
  ).rows
    .map((r) => r.name)
    // login_throttle: a refused login is counted on purpose (SPEC §21, per account and address).
    .filter((n) => !n.startsWith('kysely_') && n !== 'config_version' && n !== 'login_throttle');
  await sql`create table fuzz_writes (n bigint not null)`.execute(db);
  await sql`insert into fuzz_writes (n) values (0)`.execute(db);
  if (pg) {
    await sql`create function fuzz_count() returns trigger language plpgsql as $$
      begin update fuzz_writes set n = n + 1; return null; end $$`.execute(db);
  }
  for (const table of tables) {
    for (const op of ['insert', 'update', 'delete']) {
      const name = sql.id(`fuzz_${table}_${op}`);
      const when = table === 'events' && op === 'insert' ? sql`when (new.accepted = 1)` : sql``;
      if (pg)
        await sql`create trigger ${name} after ${sql.raw(op)} on ${sql.id(table)} for each row ${when}
          execute function fuzz_count()`.execute(db);
      else
        await sql`create trigger ${name} after ${sql.raw(op)} on ${sql.id(table)} for each row ${when}
          begin update fuzz_writes set n = n + 1; end`.execute(db);
    }
  }
}

async function fingerprint(t: TestApp): Promise<string> {
  const r = await sql<{ n: unknown }>`select n from fuzz_writes`.execute(t.deps.db.db);
  return String(r.rows[0].n);
}

interface Failure {
  kind: string;
  c: Case;
  status: number;
  body: string;
}

// The two engines run side by side: SQLite works in this process while PostgreSQL's answers travel.
describe('generated hostile requests', { concurrency: true }, () => {
  for (const d of DIALECTS) {
    describe(`generated hostile requests [${d.name}]`, { skip: d.skip }, () => {
      let t: TestApp;
      let endpoints: Endpoint[];
      let gatewayKey: string;
      before(async () => {
        t = await createTestApp(d.name);
        // Durability is not what this test is about: no fsync per commit on SQLite keeps it fast.
        if (d.name === 'sqlite') await sql`pragma synchronous = off`.execute(t.deps.db.db);
        const p = await setupProject(t.app);
        const site = p.site;
        gatewayKey = p.key;
        const ok = (r: { status: number; body: any }) => {
          assert.ok(r.status < 300, JSON.stringify(r.body));
          return r.body;
        };
        const templates = ok(await adminCall(t.app, 'GET', `/api/admin/projects/${site}/templates`)).items as any[];
        const tplId = templates[0].id as number;
        const contact = ok(
          await adminCall(t.app, 'POST', '/api/contacts/upsert', {
            site_key: site,
            email: 'fuzz@example.com',
            name: 'F',
          }),
        ).contact_id as number;
        const seq = ok(
          await adminCall(t.app, 'POST', '/api/sequences', {
            site_key: site,
            name: 'fuzz chain',
            steps: [{ template_id: tplId, delay_minutes: 60 }],
          }),
        ).sequence_id as number;
        const spare = ok(
          await adminCall(t.app, 'POST', '/api/admin/keys', {
            site_key: site,
            name: 'spare',
            rights: { permissions: ['transactional_send'], allowed_api_events: ['contest_results'] },
          }),
        ).id as number;
        const sent = ok(
          await keyCall(t.app, p.key, 'POST', '/api/scoped/send/transactional', {
            event_type: 'contest_results',
            email: 'fuzz@example.com',
            fields: { event_title: 'E', work_title: 'W' },
          }),
        ).scheduled_email_id as number;
        let n = 0;
        const uniq = () => `${++n}`;
        const samples: Record<string, () => Record<string, unknown> | null> = {
          'POST /api/scoped/send/transactional': () => ({
            event_type: 'contest_results',
            email: 'anna@example.com',
            name: 'Anna',
            idempotency_key: `k-${uniq()}`,
            fields: { event_title: 'Spring', work_title: 'Poem', place: 1 },
          }),
          'POST /api/scoped/events/order-created': () => ({
            cart_type: 'course',
            email: 'buyer@example.com',
            name: 'Buyer',
            order_id: `o-${uniq()}`,
            course_name: 'Course',
            fields: { pay_url: 'https://site.example/pay' },
          }),
          'POST /api/scoped/events/purchase': () => ({
            cart_type: 'course',
            email: 'buyer@example.com',
            order_id: `o-${uniq()}`,
            course_id: '77',
            amount: 2500.5,
            currency: 'RUB',
            fields: { paid_at: '2026-11-20T10:15:00+03:00', account_url: 'https://a.example', course_category_id: '3' },
          }),
          'POST /api/scoped/lists/:list_id/contacts': () => ({
            email: 'lead@example.com',
            name: 'Lead',
            fields: { source: 'form' },
          }),
          'POST /api/admin/keys': () => ({
            site_key: site,
            name: 'fuzz key',
            rights: { permissions: ['transactional_send'], allowed_api_events: ['contest_results'], note: 'n' },
            rate_limit: { per_second: 10, burst: 20 },
          }),
          'PATCH /api/admin/keys/:id': () => ({
            name: 'spare',
            rights: { permissions: ['transactional_send'], allowed_api_events: ['contest_results'] },
            rate_limit: { per_second: 5, burst: 10 },
          }),
          'POST /api/admin/keys/:id/disable': () => null,
          'PUT /api/admin/projects/:site_key/routing': () => ({
            routes: {
              contest_results: 'contest_tpl',
              course_abandoned_cart_1h: 'cart_1h',
              course_abandoned_cart_1d: 'cart_1d',
              course_abandoned_cart_3d: 'cart_3d',
              course_paid: 'paid_tpl',
            },
          }),
          'PUT /api/admin/projects/:site_key/course-categories': () => ({
            categories: [{ id: '3', list_id: p.lists.cat, slug: 'pedagog', title: 'teacher' }],
          }),
          'PUT /api/admin/projects/:site_key/paid-lists': () => ({ lists: { course: p.lists.paid } }),
          'PUT /api/admin/projects/:site_key/cart-chains': () => ({ chains: { course: null, diploma: seq } }),
          'POST /api/admin/contacts/:id/status': () => ({ status: 'active' }),
          'POST /api/admin/emails/:id/cancel': () => null,
          'POST /api/admin/emails/:id/retry': () => null,
          'POST /api/admin/templates/preview': () => ({
            site_key: site,
            subject: '{{ name }}',
            html: '<p>{{ event_title }}</p>',
            text: '{{ name }}',
            event_type: 'contest_results',
            sample: { name: 'A', fields: { event_title: 'E' } },
          }),
          'POST /api/admin/session': () => ({ token: 'not-the-token' }),
          'POST /api/sites': () => ({ site_key: 'fuzz-site', name: 'Fuzz', from_email: 'noreply@fuzz.example' }),
          'POST /api/contacts/upsert': () => ({
            site_key: site,
            email: 'fuzz@example.com',
            name: 'Fuzz',
            fields: { city: 'Omsk', n: 1 },
          }),
          'POST /api/templates': () => ({
            site_key: site,
            name: 'fuzz_tpl',
            subject: 'Hi {{ name }}',
            html: '<p>{{ name }}</p>',
            text: '{{ name }}',
          }),
          'POST /api/lists': () => ({ site_key: site, name: 'fuzz list' }),
          'POST /api/lists/:list_id/contacts': () => ({ contact_id: contact }),
          'POST /api/events/unpaid-order': () => ({
            site_key: site,
            email: 'legacy@example.com',
            order_id: `L-${uniq()}`,
            name: 'L',
            course_name: 'C',
            fields: { pay_url: 'https://p.example' },
          }),
          'POST /api/sequences': () => ({
            site_key: site,
            name: 'fuzz seq',
            steps: [{ template_id: tplId, delay_minutes: 30 }],
          }),
          // Delivery per project (issue 13): a relay nothing listens on, so verify answers at once.
          'PUT /api/admin/projects/:site_key/delivery': () => ({
            primary: { smtp_url: 'smtp://fuzz:secret-pw@127.0.0.1:1', pool_size: 2, rate_per_second: 5 },
            from_email: 'news@fuzz.example',
            daily_quota: 100,
            webhooks: { mailgun: { signing_key: 'key-fuzz-0123456789' } },
          }),
          'POST /api/admin/projects/:site_key/delivery/test': () => ({ template: 'paid_tpl', to: 'fuzz@example.org' }),
          'POST /api/campaigns': () => ({
            site_key: site,
            template_id: tplId,
            list_id: p.lists.leads,
            send_at: '2030-01-01T00:00:00Z',
          }),
        };
        const paramValues: Record<string, string> = {
          site_key: site,
          list_id: String(p.lists.leads),
        };
        const idFor: Record<string, string> = {
          '/api/admin/keys/:id': String(spare),
          '/api/admin/keys/:id/disable': String(spare),
          '/api/admin/contacts/:id/status': String(contact),
          '/api/admin/emails/:id/cancel': String(sent),
          '/api/admin/emails/:id/retry': String(sent),
        };
        const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
          paths: Record<string, Record<string, unknown>>;
        }>();
        endpoints = [];
        for (const [oaPath, ops] of Object.entries(doc.paths)) {
          const path = oaPath.replace(/\{(\w+)\}/g, ':$1');
          for (const method of ['post', 'put', 'patch']) {
            if (!ops[method]) continue;
            const M = method.toUpperCase();
            const names = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]);
            const params = Object.fromEntries(
              names.map((k) => [k, k === 'id' ? (idFor[path] ?? '1') : (paramValues[k] ?? '1')]),
            );
            endpoints.push({ method: M, path, sample: samples[`${M} ${path}`] ?? (() => ({})), params });
          }
        }
        await installWriteCounter(t);
        const missing = Object.keys(samples).filter((k) => !endpoints.some((e) => `${e.method} ${e.path}` === k));
        assert.deepEqual(missing, [], 'every sample names a route of the OpenAPI document');
      });
      after(() => t.close());

      it(`no 5xx, only envelopes, nothing stored when refused (seed ${SEED}, ${RUNS} cases per endpoint)`, async (ctx) => {
        const failures: Failure[] = [];
        let cases = 0;
        let refused = 0;
        const started = Date.now();
        let state = await fingerprint(t);
        const arb = fc.tuple(
          fc.array(mutation, { minLength: 1, maxLength: 3 }),
          fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
        );
        for (const [ei, e] of endpoints.entries()) {
          const generated = fc.sample(arb, { seed: SEED + ei, numRuns: RUNS });
          for (const [muts, pick] of generated) {
            const c = makeCase(e, muts, pick);
            const gateway = c.url.startsWith('/api/scoped/');
            const res = await t.app.inject({
              method: c.method as 'POST',
              url: c.url,
              headers: {
                ...(gateway ? { 'x-api-key': gatewayKey } : { authorization: `Bearer ${ADMIN_TOKEN}` }),
                ...(c.payload === undefined ? {} : { 'content-type': 'application/json' }),
              },
              payload: c.payload,
            });
            cases++;
            const fail = (kind: string) =>
              failures.push({ kind, c, status: res.statusCode, body: res.body.slice(0, 300) });
            if (res.statusCode >= 500) fail('5xx');
            if (res.statusCode >= 400) {
              refused++;
              let b: any;
              try {
                b = JSON.parse(res.body);
              } catch {
                b = null;
              }
              const e2 = b?.detail?.error;
              if (!(b?.detail?.ok === false && typeof e2?.code === 'string' && typeof e2?.message === 'string'))
                fail('not the envelope');
              if (/\n\s+at |node_modules|SQLITE_|syntax error at/.test(res.body)) fail('internals leaked');
            }
            // The state after each case is the state before the next: one fingerprint per case.
            const now = await fingerprint(t);
            if (res.statusCode >= 400 && res.statusCode < 500 && now !== state) fail('stored although refused');
            state = now;
          }
        }
        const fivexx = failures.filter((f) => f.kind === '5xx').length;
        ctx.diagnostic(
          `${d.name}: ${endpoints.length} endpoints, ${cases} generated cases (${refused} refused), ${fivexx} 5xx, ${failures.length} failures in ${Date.now() - started} ms`,
        );
        const byKind = new Map<string, number>();
        for (const f of failures)
          byKind.set(
            `${f.kind} ${f.c.method} ${f.c.url.split('?')[0].replace(/\/\d+(\/|$)/, '/:n$1')}`,
            (byKind.get(`${f.kind} ${f.c.method} ${f.c.url.split('?')[0].replace(/\/\d+(\/|$)/, '/:n$1')}`) ?? 0) + 1,
          );
        for (const [k, v] of byKind) ctx.diagnostic(`  ${v} × ${k}`);
        assert.equal(
          failures.length,
          0,
          failures
            .slice(0, 15)
            .map(
              (f) =>
                `${f.kind}: ${f.c.method} ${f.c.url.slice(0, 80)} [${f.c.note}] -> ${f.status} ${f.body.slice(0, 160)}`,
            )
            .join('\n'),
        );
      });

      // SPEC §17: /c/ and /o/ take anything: mutated, truncated, foreign and random tokens, path tricks.
      it(`hostile /c/ and /o/ tokens: 404 or 400, never a redirect, nothing written (seed ${SEED})`, async () => {
        const key = trackingKey(await installationSecret(t.deps));
        const foreign = trackingKey('another-installation-0123456789');
        const claims = {
          emailId: 12,
          projectId: 1,
          position: 0,
          sentAt: 1_800_000_000,
          url: 'https://site.example/p?q=1#f',
        };
        const validClick = signClick(key, claims);
        const validOpen = `${signOpen(key, claims)}.gif`;
        const token = fc.oneof(
          // One character changed, dropped or added somewhere in a genuine token.
          fc
            .tuple(
              fc.constantFrom(validClick, validOpen),
              fc.nat(),
              fc.string({ minLength: 1, maxLength: 3 }),
              fc.nat(3),
            )
            .map(([v, at, s, op]) => {
              const i = at % v.length;
              return op === 0
                ? v.slice(0, i)
                : op === 1
                  ? v.slice(0, i) + s + v.slice(i + 1)
                  : op === 2
                    ? v.slice(0, i) + s + v.slice(i)
                    : v + s;
            }),
          fc.constantFrom(
            signClick(foreign, claims),
            `${signOpen(foreign, claims)}.gif`,
            signClick(key, { ...claims, url: 'javascript:alert(1)' }),
          ),
          fc.string({ maxLength: 300 }),
          fc.string({ unit: 'binary', maxLength: 200 }),
          fc
            .string({
              unit: fc.constantFrom('A', '.', '_', '-', 'c1', 'o1', '%2e', '%2f', '..', '/', '%00', 'Я', '%'),
              maxLength: 60,
            })
            .map((x) => x.repeat(1 + (x.length % 50))),
          fc.nat(20_000).map((n) => 'c1.' + 'A'.repeat(n)),
        );
        const cases = fc.sample(fc.tuple(fc.constantFrom('/c/', '/o/'), token, fc.constantFrom('GET', 'HEAD')), {
          seed: SEED,
          numRuns: RUNS * 2,
        });
        // The other test of this suite runs at the same time: count the hits alone, not every write.
        const hits = async () =>
          Number(
            (
              await t.deps.db.db
                .selectFrom('tracking_hits')
                .select((eb) => eb.fn.countAll().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          );
        const before = await hits();
        const bad: string[] = [];
        for (const [prefix, tok, method] of cases) {
          const genuine = (prefix === '/c/' && tok === validClick) || (prefix === '/o/' && tok === validOpen);
          if (genuine) continue;
          let url: string;
          try {
            url = prefix + encodeURI(tok).replace(/\?/g, '%3F').replace(/#/g, '%23');
          } catch {
            url = prefix + encodeURIComponent(tok.replace(/[\ud800-\udfff]/g, 'x'));
          }
          const res = await t.app.inject({ method: method as 'GET', url });
          if (![400, 404].includes(res.statusCode) || res.headers.location !== undefined)
            bad.push(`${method} ${url.slice(0, 100)} -> ${res.statusCode} ${String(res.headers.location ?? '')}`);
          if (method === 'GET' && res.statusCode >= 400 && !JSON.parse(res.body || '{}')?.detail?.error?.code)
            bad.push(`${url.slice(0, 100)}: not the envelope`);
        }
        await new Promise((r) => setTimeout(r, 300)); // longer than TRACKING_FLUSH_MS: any hit would be written
        assert.equal(await hits(), before, 'a refused token records nothing');
        assert.deepEqual(bad.slice(0, 10), []);
        // The genuine tokens the mutations started from are accepted (not requested: that would record a hit).
        assert.equal(verifyClick(trackingKeys(await installationSecret(t.deps), null), validClick)?.url, claims.url);
      });
    });
  }
});
