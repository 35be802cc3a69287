// A transport's rate cap in messages per second (issue 13): each send takes the next free slot, spaced
// 1/rate apart. In Redis (REDIS_URL) the slot counter is one key per transport shared by every worker
// process, timed by the Redis server's clock; without Redis each process keeps its own (documented: N
// processes then send up to N times the rate).
import type { Redis } from 'ioredis';
import { dropRedis, newRedis } from '../redis.js';

export interface RateCap {
  readonly kind: 'memory' | 'redis';
  /** Resolves when this send may go. */
  acquire(id: string, perSecond: number): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class MemoryRateCap implements RateCap {
  readonly kind = 'memory' as const;
  private readonly next = new Map<string, number>();
  async acquire(id: string, perSecond: number): Promise<void> {
    const now = Date.now();
    const slot = Math.max(now, this.next.get(id) ?? now);
    this.next.set(id, slot + 1000 / perSecond);
    if (slot > now) await sleep(slot - now);
  }
  async close(): Promise<void> {}
}

// Returns how long the caller waits for its slot (ms); the key expires when the transport goes idle.
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local slot = tonumber(redis.call('GET', KEYS[1]) or now)
if slot < now then slot = now end
redis.call('SET', KEYS[1], tostring(slot + interval), 'PX', math.ceil(slot - now + interval + 60000))
return math.ceil(slot - now)
`;

export class RedisRateCap implements RateCap {
  readonly kind = 'redis' as const;
  private readonly redis: Redis;
  private readonly fallback = new MemoryRateCap();
  constructor(url: string) {
    // Fails fast while disconnected (src/redis.ts): no send waits for a reconnect. Before issue 34 the
    // offline queue held every capped send until a reconnect attempt failed, seconds each.
    this.redis = newRedis(url, { lazyConnect: false });
    this.redis.on('error', () => {}); // reported once per outage by src/redis.ts
    this.redis.defineCommand('egwSlot', { numberOfKeys: 1, lua: SCRIPT });
  }
  async acquire(id: string, perSecond: number): Promise<void> {
    if (this.redis.status !== 'ready') return this.fallback.acquire(id, perSecond);
    let wait: number;
    try {
      // defineCommand adds the method at run time; ioredis's types do not know it.
      const redis = this.redis as unknown as { egwSlot(key: string, intervalMs: string): Promise<number> };
      wait = Number(await redis.egwSlot(`egw:ratecap:${id}`, String(1000 / perSecond)));
    } catch {
      // Redis away: pace this process alone rather than stop sending.
      return this.fallback.acquire(id, perSecond);
    }
    if (wait > 0) await sleep(wait);
  }
  async close(): Promise<void> {
    dropRedis(this.redis);
  }
}

export function createRateCap(redisUrl: string | null): RateCap {
  return redisUrl ? new RedisRateCap(redisUrl) : new MemoryRateCap();
}
