// Reads a V8 .cpuprofile (from `--cpu-prof`, e.g. BENCH_PROFILE=1 npm run bench) and prints where the
// time went: self time by function and by package/file, and inclusive time of the gateway's own
// functions. Usage: npx tsx bench/profile-summary.ts bench/profiles/<file>.cpuprofile [top]
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const file = process.argv[2];
const top = Number(process.argv[3] ?? 30);
if (!file) {
  console.error('usage: profile-summary <file.cpuprofile> [top]');
  process.exit(1);
}
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Time per sample: the delta to the next one.
const self = new Map<number, number>();
for (let i = 0; i < p.samples.length; i++) {
  const dt = p.timeDeltas[i + 1] ?? 0;
  self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + dt);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

function where(url: string): string {
  if (!url) return '(native/vm)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  const s = /\/(src|bench|test)\/(.+)$/.exec(url);
  if (s) return `${s[1]}/${s[2]}`;
  if (url.startsWith('node:')) return url;
  return url;
}
const label = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;

const bySelf = new Map<string, number>();
const byPkg = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id)!;
  bySelf.set(label(n), (bySelf.get(label(n)) ?? 0) + t);
  const pkg = n.callFrame.url
    ? where(n.callFrame.url).replace(/^src\/.*/, (s) => s)
    : n.callFrame.functionName || '(vm)';
  byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + t);
}

// Inclusive time: a sample counts once for every distinct function on its stack.
const incl = new Map<string, number>();
for (const [id, t] of self) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (!seen.has(l)) {
      seen.add(l);
      incl.set(l, (incl.get(l) ?? 0) + t);
    }
  }
}

const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
const show = (title: string, m: Map<string, number>, filter: (k: string) => boolean = () => true) => {
  console.log(`\n-- ${title}`);
  for (const [k, t] of [...m]
    .filter(([k]) => filter(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    console.log(`${pct(t)}  ${k}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled`);
show('self time by package or file', byPkg);
show('self time by function', bySelf);
show('inclusive time, gateway code', incl, (k) => / src\//.test(k));
