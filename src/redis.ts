// ioredis is loaded with the first Redis connection, not at start: a process without REDIS_URL (the
// default) never loads it (~20 MiB of resident memory, issue 29). createRequire keeps the callers'
// constructors synchronous.
//
// Redis is an optimisation, never a dependency (SPEC §20, issue 34): it makes rate limits and caps
// shared by every process. Every connection is made to fail fast (no offline queue, a command timeout)
// so that nothing waits for a reconnect, and its callers fall back to the process's own limits. Whether
// Redis is reachable is tracked here for all connections of the process, so the operator gets one
// `warn` line when it goes, one `info` line when it is back, and /readyz says which limits are in force.
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';

const require = createRequire(import.meta.url);

/** Longest a command may take before its caller falls back (a Redis that hangs rather than goes). */
const COMMAND_TIMEOUT_MS = 1_000;

type StateListener = (down: boolean, err?: unknown) => void;
// Each connection's last word: up once ready, down from its first error or close until ready again
// (a reconnect attempt under way is still down, so an outage is one line, not one per attempt).
const connections = new Map<Redis, boolean>();
let listener: StateListener = () => {};
let down = false;

/** Tells `l` when Redis becomes unreachable (true, with the error) and reachable again (false). */
export function onRedisState(l: StateListener): void {
  listener = l;
}

/** null without Redis; otherwise whether every connection of this process is up. */
export function redisState(): 'shared' | 'fallback' | null {
  if (connections.size === 0) return null;
  return down ? 'fallback' : 'shared';
}

/**
 * How long every connection must stay up before an outage is over. A Redis being killed or restarted
 * can let a connection come up for a moment between two errors (CI saw a command time out, a reconnect,
 * then ECONNRESET 0.7 s later): without this, one outage was two `warn` lines.
 */
const RECOVERY_SETTLE_MS = 2_000;
let settling: NodeJS.Timeout | null = null;

function update(client: Redis, up: boolean, err?: unknown): void {
  if (connections.has(client)) connections.set(client, up);
  settle();
  const nowDown = [...connections.values()].some((u) => !u);
  if (nowDown && !down) {
    down = true;
    listener(true, err);
  }
}

/** Ends the outage once every connection has stayed up RECOVERY_SETTLE_MS; a new error restarts the wait. */
function settle(): void {
  if (settling) clearTimeout(settling);
  settling = null;
  if (!down || [...connections.values()].some((u) => !u)) return;
  settling = setTimeout(() => {
    settling = null;
    if (!down || [...connections.values()].some((u) => !u)) return;
    down = false;
    listener(false);
  }, RECOVERY_SETTLE_MS);
  settling.unref();
}

export function newRedis(url: string, options: RedisOptions): Redis {
  const { Redis: RedisClient } = require('ioredis') as typeof import('ioredis');
  const client = new RedisClient(url, {
    ...options,
    // A command while disconnected fails at once instead of waiting in a queue for the reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
  });
  connections.set(client, true);
  client.on('error', (err: unknown) => update(client, false, err));
  client.on('close', () => update(client, false));
  client.on('ready', () => update(client, true));
  return client;
}

/** Forgets a connection being closed on purpose (it is not Redis going away). */
export function dropRedis(client: Redis): void {
  connections.delete(client);
  client.disconnect();
  if (down && [...connections.values()].every((u) => u)) {
    if (settling) clearTimeout(settling);
    settling = null;
    down = false;
    listener(false);
  }
}
