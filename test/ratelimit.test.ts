// Per-key rate limits (SPEC §7): 429 with Retry-After and RateLimit headers, recovery, in memory and
// in Redis (shared by every instance).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { MemoryRateLimiter, RedisRateLimiter } from '../src/services/rateLimiter.js';
import { adminCall, createTestApp, keyCall, newKey, setupProject, type TestApp } from './support/harness.js';

const REDIS_URL = process.env.TEST_REDIS_URL?.trim() || null;
const CATALOG = '/api/scoped/events/catalog';

describe('rate limits in memory', () => {
  let t: TestApp;
  let site: string;
  before(async () => {
    t = await createTestApp('sqlite');
    t.deps.rateLimiter = new MemoryRateLimiter(t.clock);
    ({ site } = await setupProject(t.app));
  });
  after(() => t.close());

  it('allows the burst, refuses the next with 429 and headers, recovers as tokens refill', async () => {
    const c = await adminCall(t.app, 'POST', '/api/admin/keys', {
      site_key: site,
      name: 'slow',
      rights: { permissions: [] },
      rate_limit: { per_second: 2, burst: 3 },
    });
    const key = c.body.key as string;
    for (const remaining of ['2', '1', '0']) {
      const r = await keyCall(t.app, key, 'GET', CATALOG);
      assert.equal(r.status, 200);
      assert.equal(r.headers['ratelimit-limit'], '3');
      assert.equal(r.headers['ratelimit-remaining'], remaining);
    }
    const refused = await keyCall(t.app, key, 'GET', CATALOG);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.detail.error.code, 'rate_limited');
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    t.clock.advance(500);
    assert.equal((await keyCall(t.app, key, 'GET', CATALOG)).status, 200, 'one token back after 0.5 s at 2/s');
    assert.equal((await keyCall(t.app, key, 'GET', CATALOG)).status, 429);
    const logged = (await adminCall(t.app, 'GET', `/api/admin/external-events?site_key=${site}&status=rejected`)).body
      .items;
    assert.ok(logged.some((e: any) => e.error_code === 'rate_limited'));
  });

  it('limits are per key, the default applies to keys without their own, and a change applies at once', async () => {
    const a = await newKey(t.app, site, { permissions: [] }, 'a');
    const b = await newKey(t.app, site, { permissions: [] }, 'b');
    await adminCall(t.app, 'PATCH', `/api/admin/keys/${a.id}`, { rate_limit: { per_second: 1, burst: 1 } });
    assert.equal((await keyCall(t.app, a.key, 'GET', CATALOG)).status, 200);
    assert.equal((await keyCall(t.app, a.key, 'GET', CATALOG)).status, 429);
    const rb = await keyCall(t.app, b.key, 'GET', CATALOG);
    assert.equal(rb.status, 200);
    assert.equal(rb.headers['ratelimit-limit'], String(t.config.rateLimit.burst));
  });
});

describe(
  'rate limits in Redis',
  { skip: REDIS_URL ? false : 'TEST_REDIS_URL is not set: Redis rate-limit test skipped' },
  () => {
    let t: TestApp;
    let site: string;
    const limiters: RedisRateLimiter[] = [];
    before(async () => {
      t = await createTestApp('sqlite');
      const prefix = `egw:test:${randomBytes(4).toString('hex')}:`;
      // Two limiters with one prefix stand for two API processes sharing Redis.
      limiters.push(
        new RedisRateLimiter(REDIS_URL!, undefined, prefix),
        new RedisRateLimiter(REDIS_URL!, undefined, prefix),
      );
      ({ site } = await setupProject(t.app));
    });
    after(async () => {
      for (const l of limiters) await l.close();
      await t.close();
    });

    it('one bucket across instances: the burst is shared, then 429, then recovery in real time', async () => {
      const c = await adminCall(t.app, 'POST', '/api/admin/keys', {
        site_key: site,
        name: 'redis',
        rights: { permissions: [] },
        rate_limit: { per_second: 4, burst: 4 },
      });
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        t.deps.rateLimiter = limiters[i % 2];
        const r = await keyCall(t.app, c.body.key, 'GET', CATALOG);
        statuses.push(r.status);
        if (r.status === 429) assert.ok(Number(r.headers['retry-after']) >= 1);
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
      await new Promise((r) => setTimeout(r, 600));
      t.deps.rateLimiter = limiters[0];
      assert.equal((await keyCall(t.app, c.body.key, 'GET', CATALOG)).status, 200);
    });

    it("an unreachable Redis falls back to the process's own buckets at once (SPEC §20)", async () => {
      const errors: unknown[] = [];
      const dead = new RedisRateLimiter('redis://127.0.0.1:1', (e) => errors.push(e));
      const limit = { per_second: 1, burst: 1 };
      assert.equal((await dead.take('x', limit)).allowed, true);
      assert.equal((await dead.take('x', limit)).allowed, false, 'the limit still holds, in this process');
      assert.ok(errors.length > 0);
      await dead.close();
    });
  },
);
