// Templates run in a budget (SPEC §20, issue 34 items 5 and 6): a viewer's ten concurrent previews of a
// triple nested loop beside another project's ordinary traffic, over real HTTP. The heavy previews get
// 422 template_too_heavy, /healthz and the other project's requests keep answering, the process stays
// up; a save of the heavy template is refused; an e-mail whose data blows the budget ends failed with
// reason render_budget; previews and test sends are limited per account (429 with Retry-After).
//
// Timing is measured, not benchmarked: the machine running the tests may be loaded, so the bounds are
// generous, yet each fails on the old code, where every heavy preview held the event loop for its full
// Liquid renderLimit (2 s), so the slowest /healthz and intake answers took 2 s or more.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createCaptureTransport, type Transport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { warmRenderPool } from '../src/delivery/renderPool.js';
import { Metrics } from '../src/metrics.js';
import { MemoryRateLimiter } from '../src/services/rateLimiter.js';
import { createUser, viewerToken } from './support/accounts.js';
import { ADMIN_TOKEN, createTestApp, DIALECTS, ManualClock, setupProject, type TestApp } from './support/harness.js';

/** 8,000,000 iterations: seconds of CPU, far beyond the budget; it parses fine and saves would render it. */
const HEAVY =
  '{% for a in (1..200) %}{% for b in (1..200) %}{% for c in (1..200) %}<i>{{ name }}</i>{% endfor %}{% endfor %}{% endfor %}';
/** Heavy only with the data of a real request: `fields.n` of 200 makes it HEAVY; sample values do not. */
const DATA_HEAVY =
  '{% for a in (1..fields.n) %}{% for b in (1..fields.n) %}{% for c in (1..fields.n) %}x{% endfor %}{% endfor %}{% endfor %}';
const BUDGET_MS = 300;
const PREVIEW_BURST = 14;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const max = (xs: number[]) => Math.max(0, ...xs);

for (const d of DIALECTS) {
  describe(`templates run in a budget [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let base: string;
    let viewer: string;
    let calmViewer: string;
    let calmKey: string;
    let worker: Worker;
    let transport: Transport;

    const http = async (token: string | null, method: string, path: string, body?: unknown, key?: string) => {
      const started = performance.now();
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(key ? { 'x-api-key': key } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let json: any = text;
      try {
        json = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: json, headers: res.headers, ms: performance.now() - started };
    };
    const preview = (token: string, site: string, html: string) =>
      http(token, 'POST', '/api/admin/templates/preview', {
        site_key: site,
        subject: 'Hi {{ name }}',
        html,
        text: '{{ name }}',
        event_type: 'contest_results',
      });
    const contest = (email: string, fields: Record<string, unknown> = {}) => ({
      event_type: 'contest_results',
      email,
      name: 'Anna',
      fields: { event_title: 'Spring', work_title: 'Poem', place: '1', ...fields },
    });

    before(async () => {
      const clock = new ManualClock();
      t = await createTestApp(
        d.name,
        {
          RENDER_BUDGET_MS: String(BUDGET_MS),
          // Four threads: the heavy project may hold three, so its ten stopped renders restart three at a time.
          RENDER_THREADS: '4',
          PREVIEW_RATE_BURST: String(PREVIEW_BURST),
          PREVIEW_RATE_PER_MINUTE: '1',
          // The calm site's key is polled for the whole storm on a clock that does not move.
          RATE_LIMIT_BURST: '100000',
        },
        // The limiter on the test's manual clock: no token comes back while the test runs.
        { rateLimiter: new MemoryRateLimiter(clock), metrics: new Metrics() },
      );
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      await setupProject(t.app, { site: 'heavy' });
      calmKey = (await setupProject(t.app, { site: 'calm' })).key;
      await createUser(t.app, { email: 'viewer@school.example', role: 'viewer', projects: ['heavy'] });
      viewer = await viewerToken(t.app, 'viewer@school.example');
      await createUser(t.app, { email: 'editor@calm.example', role: 'viewer', projects: ['calm'] });
      calmViewer = await viewerToken(t.app, 'editor@calm.example');
      transport = createCaptureTransport();
      worker = createWorker({
        db: t.deps.db,
        transport,
        clock: t.clock,
        publicUrl: 'https://gw.example.test',
        secret: 'render-budget-secret-0123',
      });
    });
    after(async () => {
      await worker.stop();
      await transport.close();
      await t.close();
    });

    it('ten heavy previews: 422 template_too_heavy, while /healthz and the other project keep answering', async () => {
      // Every thread is up before the storm (serve starts them with the process).
      await warmRenderPool();
      const warm = await preview(ADMIN_TOKEN, 'calm', '<p>{{ name }}</p>');
      assert.equal(warm.status, 200, JSON.stringify(warm.body));

      let storm = true;
      const health: number[] = [];
      const intake: number[] = [];
      const calmPreviews: number[] = [];
      const problems: string[] = [];
      const poll = async (
        every: number,
        one: () => Promise<{ status: number; ms: number; body: any }>,
        into: number[],
        most = Infinity,
      ) => {
        while (storm && into.length < most) {
          const r = await one();
          if (r.status >= 300) problems.push(`${r.status} ${JSON.stringify(r.body)}`);
          into.push(r.ms);
          await new Promise((res) => setTimeout(res, every));
        }
      };
      let n = 0;
      const pollers = [
        poll(20, () => http(null, 'GET', '/healthz'), health),
        poll(
          100,
          () => http(null, 'POST', '/api/scoped/send/transactional', contest(`c${n++}@calm.example`), calmKey),
          intake,
        ),
        // Within the calm editor's preview allowance (PREVIEW_BURST).
        poll(500, () => preview(calmViewer, 'calm', '<p>{{ name }} {{ fields.event_title }}</p>'), calmPreviews, 8),
      ];
      const heavy = await Promise.all(Array.from({ length: 10 }, () => preview(viewer, 'heavy', HEAVY)));
      storm = false;
      await Promise.all(pollers);

      const figures = {
        heavy_ms: heavy.map((h) => Math.round(h.ms)),
        healthz: { polls: health.length, median: Math.round(median(health)), max: Math.round(max(health)) },
        intake: { requests: intake.length, median: Math.round(median(intake)), max: Math.round(max(intake)) },
        calm_previews: {
          n: calmPreviews.length,
          median: Math.round(median(calmPreviews)),
          max: Math.round(max(calmPreviews)),
        },
      };
      console.log(`render budget figures [${d.name}]: ${JSON.stringify(figures)}`);

      for (const h of heavy) {
        assert.equal(h.status, 422, JSON.stringify(h.body));
        assert.equal(h.body.detail.error.code, 'template_too_heavy');
        assert.equal(h.body.detail.error.params.budget_ms, BUDGET_MS);
      }
      assert.deepEqual(problems, [], 'every /healthz, intake and preview of the other project answered 2xx');
      assert.ok(health.length >= 20 && intake.length >= 10 && calmPreviews.length >= 3, JSON.stringify(figures));
      // SPEC §20: /healthz within 100 ms. The median is held to it. The slowest of all polls is held below
      // 2 s: the old code cannot meet that (each heavy preview held the loop for Liquid's 2 s renderLimit),
      // while a test machine loaded by other work may add hundreds of milliseconds to any answer.
      assert.ok(figures.healthz.median <= 100, `healthz median ${figures.healthz.median} ms`);
      assert.ok(figures.healthz.max < 2000, `healthz max ${figures.healthz.max} ms`);
      assert.ok(figures.intake.max < 2000, `the other project's intake max ${figures.intake.max} ms`);
      // The other project's previews wait at most for a thread (one is always kept from the heavy one).
      assert.ok(figures.calm_previews.max < 10_000, `the other project's previews max ${figures.calm_previews.max} ms`);

      // The process is up and its metric counted each stop.
      assert.equal((await http(null, 'GET', '/healthz')).status, 200);
      const metrics = String((await http(null, 'GET', '/metrics')).body);
      const stopped = /egw_render_budget_exceeded_total\{task="preview"\} (\d+)/.exec(metrics);
      assert.ok(
        stopped && Number(stopped[1]) >= 10,
        `egw_render_budget_exceeded_total counts each stopped preview: ${metrics
          .split('\n')
          .filter((l) => l.includes('render_budget'))
          .join(' | ')}`,
      );
    });

    it('previews and test sends are limited per account: 429 rate_limited with Retry-After', async () => {
      // The viewer spent 10 of the burst on the storm; the rest go, then the bucket is empty.
      let allowed = 0;
      let r = await preview(viewer, 'heavy', '<p>{{ name }}</p>');
      for (; r.status === 200 && allowed <= PREVIEW_BURST; r = await preview(viewer, 'heavy', '<p>{{ name }}</p>'))
        allowed++;
      assert.equal(r.status, 429, JSON.stringify(r.body));
      assert.equal(allowed, PREVIEW_BURST - 10);
      assert.equal(r.body.detail.error.code, 'rate_limited');
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
      // Another account (the root token) is not held back by the viewer's clicks.
      assert.equal((await preview(ADMIN_TOKEN, 'heavy', '<p>{{ name }}</p>')).status, 200);
      // Test sends draw on their account's allowance too (root: the warm-up and the preview above).
      const testSend = () =>
        http(ADMIN_TOKEN, 'POST', '/api/admin/projects/calm/delivery/test', {
          template: 'contest_tpl',
          to: 'me@calm.example',
        });
      let sent = 0;
      let s = await testSend();
      for (; s.status === 200 && sent <= PREVIEW_BURST; s = await testSend()) sent++;
      assert.equal(s.status, 429, JSON.stringify(s.body));
      assert.equal(sent, PREVIEW_BURST - 2);
      assert.ok(Number(s.headers.get('retry-after')) >= 1);
    });

    it('a save of the heavy template is 422 template_too_heavy; the stored template is unchanged', async () => {
      const r = await http(ADMIN_TOKEN, 'POST', '/api/templates', {
        site_key: 'heavy',
        name: 'contest_tpl',
        subject: 'Hi {{ name }}',
        html: HEAVY,
        text: '{{ name }}',
      });
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.equal(r.body.detail.error.code, 'template_too_heavy');
      const stored = await http(ADMIN_TOKEN, 'GET', '/api/admin/projects/heavy/templates/contest_tpl');
      assert.doesNotMatch(stored.body.template.html, /for a in/);
    });

    it('an e-mail whose template blows the budget ends failed with reason render_budget', async () => {
      const saved = await http(ADMIN_TOKEN, 'POST', '/api/templates', {
        site_key: 'heavy',
        name: 'contest_tpl',
        subject: 'Results {{ name }}',
        html: `<p>{{ name }}</p>${DATA_HEAVY}`,
        text: '{{ name }}',
        confirm: true,
      });
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      const key = (
        await http(ADMIN_TOKEN, 'POST', '/api/admin/keys', {
          site_key: 'heavy',
          name: 'budget',
          rights: { permissions: ['transactional_send'], allowed_api_events: ['contest_results'] },
        })
      ).body.key as string;
      const light = await http(
        null,
        'POST',
        '/api/scoped/send/transactional',
        contest('light@heavy.example', { n: 2 }),
        key,
      );
      const heavy = await http(
        null,
        'POST',
        '/api/scoped/send/transactional',
        contest('heavy@heavy.example', { n: 200 }),
        key,
      );
      assert.equal(heavy.status, 200, JSON.stringify(heavy.body));
      while ((await worker.runOnce()) > 0);
      const read = async (id: number) =>
        (await http(null, 'GET', `/api/scoped/emails/${id}`, undefined, key)).body.email;
      const lightEmail = await read(light.body.scheduled_email_id);
      const heavyEmail = await read(heavy.body.scheduled_email_id);
      assert.equal(lightEmail.status, 'sent', JSON.stringify(lightEmail));
      assert.equal(heavyEmail.status, 'failed', JSON.stringify(heavyEmail));
      assert.equal(heavyEmail.reason, 'render_budget');
      assert.match(heavyEmail.outcome, /render_budget: .*300 ms of CPU/);
      assert.equal(heavyEmail.attempts, 0, 'a render stopped is not an attempt at the relay');
      assert.equal((await http(null, 'GET', '/healthz')).status, 200);
    });
  });
}

// A process that rendered and has nothing else to do ends by itself: an idle render thread does not keep
// it alive (one that never ran a task did, and the delivery and e2e benches never exited), and a thread
// still starting does while a render waits for it (the process does not end with the render unsettled).
describe('render threads and the life of the process', () => {
  it('a script that saves one template exits by itself, with threads left that never ran a task', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'egw-render-exit-'));
    const file = join(dir, 'render-once.mts');
    const pool = new URL('../src/delivery/renderPool.ts', import.meta.url).href;
    writeFileSync(
      file,
      [
        `import { configureRenderPool, prepareInPool } from '${pool}';`,
        `configureRenderPool({ budgetMs: 500, threads: 3 });`,
        `const source = { subject: 'Hi', html: '<p>{{ name }}</p>', text: 'x' };`,
        `console.log('rendered', (await prepareInPool(1, { source, layout: null })).ok);`,
      ].join('\n'),
    );
    const child = spawn(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += String(c)));
    child.stderr.on('data', (c: Buffer) => (out += String(c)));
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    clearTimeout(killer);
    rmSync(dir, { recursive: true, force: true });
    assert.equal(signal, null, `still running after 30 s:\n${out}`);
    assert.equal(code, 0, out);
    assert.match(out, /rendered true/);
  });
});
