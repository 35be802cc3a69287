// `npm run bench`: every bench in turn, each printing its figures, its baseline and one SUMMARY line.
//   BENCH_QUICK=1          short runs and small sizes (a smoke run, minutes instead of ~15)
//   BENCH_ONLY=accept,lag  a subset (accept, delivery, e2e, lag, size, impact, tracking)
//   BENCH_DB=sqlite        one engine (sqlite or postgres); PostgreSQL from BENCH_DATABASE_URL,
//                          TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test
//   BENCH_BEFORE=<ref>     the accept bench also runs the gateway built from that commit, right after
//                          this one's, and prints this/before per endpoint (bench/before.ts)
//   BENCH_PROFILE=1        run the spawned processes under --cpu-prof (.bench/profiles/, read them with
//                          npx tsx bench/profile-summary.ts <file>)
// The delivery bench uses postfix's smtp-sink when installed (apt-get install postfix), else an
// equivalent discard sink in Node (bench/smtp-sink.ts); BENCH_SINK=node|smtp-sink|both chooses.
import { runAccept } from './accept.js';
import { runDelivery } from './delivery.js';
import { runE2e } from './e2e.js';
import { runImpact } from './impact.js';
import { runLag } from './lag.js';
import { log, machine, QUICK, summary } from './lib.js';
import { runSize } from './size.js';
import { runTracking } from './tracking.js';

const benches: Record<string, () => Promise<Record<string, string | number>>> = {
  accept: runAccept,
  delivery: runDelivery,
  e2e: runE2e,
  lag: runLag,
  impact: runImpact,
  size: runSize,
  tracking: runTracking,
};
const only = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((s) => s.trim()) : Object.keys(benches);
log(`${machine()}${QUICK ? ' — QUICK mode: figures are indicative only' : ''}`);
const lines: string[] = [];
for (const name of only) {
  const run = benches[name];
  if (!run) throw new Error(`unknown bench ${name} (known: ${Object.keys(benches).join(', ')})`);
  const line = summary(name, await run());
  log(line);
  lines.push(line);
}
log('\n' + lines.join('\n'));
