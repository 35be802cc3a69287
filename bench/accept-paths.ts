// The accept path's database work alone, without HTTP: the services' transactional send and
// order-created (what the routes call) at 64 requests in flight, in this process, for each way of
// carrying out a plan, taken in turns so they share the machine's conditions. Reports CPU time per
// request (this process: the statements, Kysely, the driver, better-sqlite3 or pg's client side) and
// requests/s. On a shared machine CPU time per request is the figure to compare; wall-clock rates move
// with the other load.
//   npx tsx bench/accept-paths.ts                        SQLite: runPlan (Kysely) vs prebuilt statements
//   ACCEPT_PATHS_DB=postgres npx tsx bench/accept-paths.ts   PostgreSQL: runPlan vs the set-based batches
//   ACCEPT_PATHS_N=4000 ACCEPT_PATHS_ROUNDS=3             requests per run, rounds
import { loadConfig } from '../src/config.js';
import { hashKey } from '../src/domain/keys.js';
import { configSnapshot } from '../src/services/configCache.js';
import { systemClock, type Deps, type GatewayCall } from '../src/services/context.js';
import * as gateway from '../src/services/gateway.js';
import { acceptBody, freshDatabase, loadBenchProject, log, machine, summary, type BenchDb, type Kind } from './lib.js';

const KIND = (process.env.ACCEPT_PATHS_DB ?? 'sqlite') as Kind;
const N = Number(process.env.ACCEPT_PATHS_N) || 3000;
const ROUNDS = Number(process.env.ACCEPT_PATHS_ROUNDS) || 3;
const IN_FLIGHT = 64;

interface Side {
  name: string;
  b: BenchDb;
  deps: Deps;
  tx: GatewayCall;
  order: GatewayCall;
}

async function openSide(name: string, referenceAccept: boolean): Promise<Side> {
  const b = await freshDatabase(KIND);
  const demo = await loadBenchProject(b);
  const deps: Deps = {
    db: b.db,
    config: loadConfig({ DATABASE_URL: b.url }),
    clock: systemClock,
    referenceAccept,
  };
  const config = await configSnapshot(b.db);
  const found = (await config.keyByHash(hashKey(demo.key)))!;
  const call = (endpoint: string): GatewayCall => ({ deps, project: found.project, key: found.key, endpoint, config });
  return { name, b, deps, tx: call('transactional'), order: call('order-created') };
}

let seq = 0;
async function run(side: Side, endpoint: 'transactional' | 'order-created') {
  const run = `${side.name}-${seq++}`;
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const worker = async () => {
    while (next < N) {
      const i = next++;
      const body = acceptBody(endpoint, run, i);
      if (endpoint === 'transactional') await gateway.transactional(side.tx, body, { respondAsync: true });
      else await gateway.orderCreated(side.order, body);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: (cpu.user + cpu.system) / N, rps: N / wall };
}

log(`== accept paths on ${KIND}: ${N} requests per run, ${IN_FLIGHT} in flight, ${ROUNDS} rounds; ${machine()}`);
const sides = [await openSide('runPlan', true), await openSide(KIND === 'sqlite' ? 'prebuilt' : 'batched', false)];
const results: Record<string, number[]> = {};
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const endpoint of ['transactional', 'order-created'] as const) {
      for (const side of round % 2 ? [...sides].reverse() : sides) {
        const r = await run(side, endpoint);
        const k = `${side.name}_${endpoint === 'transactional' ? 'tx' : 'order'}`;
        (results[k] ??= []).push(r.cpuUs);
        log(
          `${side.name.padEnd(9)} ${endpoint.padEnd(14)} ${r.cpuUs.toFixed(0).padStart(5)} us CPU/request  ${r.rps.toFixed(0).padStart(6)} req/s`,
        );
      }
    }
  }
} finally {
  for (const s of sides) await s.b.cleanup();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
log(
  summary(
    'accept-paths',
    Object.fromEntries(Object.entries(results).map(([k, v]) => [`${k}_cpu_us`, Math.round(median(v))])),
  ),
);
