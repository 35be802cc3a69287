// ioredis is loaded with the first Redis connection, not at start: a process without REDIS_URL (the
// default) never loads it (~20 MiB of resident memory, issue 29). createRequire keeps the callers'
// constructors synchronous.
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';

const require = createRequire(import.meta.url);

export function newRedis(url: string, options: RedisOptions): Redis {
  const { Redis: RedisClient } = require('ioredis') as typeof import('ioredis');
  return new RedisClient(url, options);
}
