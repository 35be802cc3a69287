// Per-key rate limits (SPEC §7): a token bucket of `burst` tokens refilled at `per_second`. Counted in
// Redis when REDIS_URL is set (one bucket shared by every API process), in memory otherwise, and in
// memory too while Redis is away (SPEC §20: each process then limits on its own).
import type { Redis } from 'ioredis';
import { dropRedis, newRedis } from '../redis.js';
import type { RateLimit } from '../schemas/common.js';
import { systemClock, type Clock } from './context.js';

/** What a take is told while Redis is known to be away (counted like a failed command). */
const REDIS_AWAY = new Error('Redis is unavailable: this process limits on its own');

export interface Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (RateLimit-Reset). */
  resetSeconds: number;
  /** Seconds until one request is allowed again (Retry-After), when refused. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Spends `cost` tokens (default 1) when at least one is there; cost 0 only asks whether one is. */
  take(bucket: string, limit: RateLimit, cost?: number): Promise<Decision>;
  close(): Promise<void>;
  readonly kind: 'memory' | 'redis';
}

/** The arithmetic both stores share: refill since the last take, then spend one token. */
export function refill(tokens: number, lastMs: number, nowMs: number, limit: RateLimit): number {
  return Math.min(limit.burst, tokens + (Math.max(0, nowMs - lastMs) * limit.per_second) / 1000);
}

export function decide(tokensAfter: number, allowed: boolean, limit: RateLimit): Decision {
  return {
    allowed,
    limit: limit.burst,
    remaining: Math.max(0, Math.floor(tokensAfter)),
    resetSeconds: Math.ceil((limit.burst - tokensAfter) / limit.per_second),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokensAfter) / limit.per_second)),
  };
}

export class MemoryRateLimiter implements RateLimiter {
  readonly kind = 'memory' as const;
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly clock: Clock) {}

  async take(bucket: string, limit: RateLimit, cost = 1): Promise<Decision> {
    const now = this.clock.now();
    const b = this.buckets.get(bucket);
    let tokens = b ? refill(b.tokens, b.at, now, limit) : limit.burst;
    const allowed = tokens >= 1;
    if (allowed) tokens -= cost;
    this.buckets.set(bucket, { tokens, at: now });
    // Full buckets carry no information: drop them so the map stays as small as the active keys.
    if (this.buckets.size > 10_000) {
      for (const [k, v] of this.buckets) if (refill(v.tokens, v.at, now, limit) >= limit.burst) this.buckets.delete(k);
    }
    return decide(tokens, allowed, limit);
  }

  async close(): Promise<void> {}
}

// Atomic in Redis, timed by the Redis server's clock so instances with skewed clocks agree.
const SCRIPT = `
local rate = tonumber(ARGV[1]) / 1000
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil then tokens = burst; at = now end
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local allowed = 0
if tokens >= 1 then tokens = tokens - tonumber(ARGV[3]); allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate) + 1000)
return {allowed, tostring(tokens)}
`;

export class RedisRateLimiter implements RateLimiter {
  readonly kind = 'redis' as const;
  private readonly redis: Redis;
  /** The process's own buckets, in force while Redis is away (SPEC §20). */
  private readonly fallback: MemoryRateLimiter;
  constructor(
    url: string,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly prefix = 'egw:rl:',
    clock: Clock = systemClock,
  ) {
    this.fallback = new MemoryRateLimiter(clock);
    // Fails fast while disconnected (src/redis.ts): no request waits for a reconnect.
    this.redis = newRedis(url, { lazyConnect: false });
    this.redis.on('error', () => {}); // reported once per outage by src/redis.ts
    this.redis.defineCommand('egwTake', { numberOfKeys: 1, lua: SCRIPT });
  }

  async take(bucket: string, limit: RateLimit, cost = 1): Promise<Decision> {
    // Known to be away: straight to this process's own buckets, without a failed command each time.
    if (this.redis.status !== 'ready') {
      this.onError(REDIS_AWAY);
      return this.fallback.take(bucket, limit, cost);
    }
    try {
      // defineCommand adds the method at run time; ioredis's types do not know it.
      const redis = this.redis as unknown as { egwTake(...args: (string | number)[]): Promise<[number, string]> };
      const [allowed, tokens] = await redis.egwTake(this.prefix + bucket, limit.per_second, limit.burst, cost);
      return decide(Number(tokens), allowed === 1, limit);
    } catch (err) {
      // Redis went away mid-command: the process's own limits apply (counted; logged once per outage).
      this.onError(err);
      return this.fallback.take(bucket, limit, cost);
    }
  }

  async close(): Promise<void> {
    dropRedis(this.redis);
  }
}

export function createRateLimiter(
  redisUrl: string | null,
  clock: Clock,
  onError?: (err: unknown) => void,
): RateLimiter {
  return redisUrl ? new RedisRateLimiter(redisUrl, onError, undefined, clock) : new MemoryRateLimiter(clock);
}
