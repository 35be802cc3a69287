// Delivery bench: 20,000 due e-mails (one per contact, the demo project's routed contest_results
// template) sent by one `worker` process, into a discard SMTP sink and into the capture transport, on
// SQLite and PostgreSQL. Reports e-mails/s (first to last sent_at, and wall time from the moment they
// became due) and the worker's peak RSS. The sink is postfix's smtp-sink when installed
// (apt-get install postfix), else bench/smtp-sink.ts (smtp-server, discarding); BENCH_SINK=node forces
// the latter, BENCH_SINK=both runs both.
// Baseline, measured in the same run: the sink alone, fed by nodemailer's pool at the same pool size
// (how fast this machine moves messages into that sink with no database and no rendering at all).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import {
  freePort,
  freshDatabase,
  KINDS,
  loadBenchProject,
  log,
  machine,
  QUICK,
  sleep,
  spawnNode,
  summary,
  type BenchDb,
  type Kind,
} from './lib.js';
import { contestTemplate, seedContacts, seedEmails } from './seed.js';
import { loadConfig } from '../src/config.js';
import { systemClock } from '../src/services/context.js';
import { putDelivery } from '../src/services/delivery.js';

// Per-project transports (issue 13): the worker decrypts each project's relay settings with this key.
const BENCH_SECRET = 'bench-secret-key-for-per-project-delivery';
/** Who the audit log names for the settings the bench saves. */
const BENCH_ACTOR = { actor: 'bench', via: 'cli' as const, address: null };

const N = Number(process.env.BENCH_EMAILS) || (QUICK ? 2000 : 20_000);
const POOL = Number(process.env.SMTP_POOL_SIZE) || 5; // the worker's SMTP_POOL_SIZE (default 5)

interface Sink {
  kind: 'smtp-sink' | 'node';
  url: string;
  stop(): Promise<number | null>;
}

function hasPostfixSink(): string | null {
  return ['/usr/sbin/smtp-sink', '/usr/lib/postfix/sbin/smtp-sink'].find((p) => existsSync(p)) ?? null;
}

async function startSink(kind: 'smtp-sink' | 'node'): Promise<Sink> {
  const port = await freePort();
  if (kind === 'smtp-sink') {
    const bin = hasPostfixSink()!;
    // Accepts and discards; -u: the user to run as when started as root; -m: concurrent sessions.
    const args = [...(process.getuid?.() === 0 ? ['-u', 'nobody'] : []), '-m', '1000', `127.0.0.1:${port}`, '256'];
    const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (c) => (out += String(c)));
    for (let i = 0; i < 50; i++) {
      try {
        const t = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
        await t.verify();
        t.close();
        break;
      } catch {
        await sleep(100);
      }
    }
    return {
      kind,
      url: `smtp://127.0.0.1:${port}`,
      async stop() {
        proc.kill('SIGTERM');
        await new Promise((r) => proc.once('exit', r));
        return null;
      },
    };
  }
  const child = await spawnNode('bench/smtp-sink.ts', [], { PORT: String(port) }, { name: 'sink' });
  for (let i = 0; i < 100 && !child.output().includes('sink listening'); i++) await sleep(100);
  return {
    kind,
    url: `smtp://127.0.0.1:${port}`,
    async stop() {
      await child.stop();
      const m = /sink received (\d+)/.exec(child.output());
      return m ? Number(m[1]) : null;
    },
  };
}

/** The sink alone: nodemailer's pool (same size) sending pre-built small messages as fast as it can. */
async function baselineRate(sink: Sink, n: number): Promise<number> {
  const t = nodemailer.createTransport({ url: sink.url, pool: true, maxConnections: POOL, maxMessages: 100 } as any);
  const started = Date.now();
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      await t.sendMail({
        from: 'noreply@courses.example',
        to: `reader${i}@example.com`,
        subject: 'Baseline',
        text: 'Hello',
        html: '<p>Hello</p>',
        messageId: `<b${i}@bench>`,
      });
    }
  };
  await Promise.all(Array.from({ length: POOL * 2 }, lane));
  const rate = n / ((Date.now() - started) / 1000);
  t.close();
  return rate;
}

/**
 * Two projects, half of the e-mails each, each sending through its own relay (its own sink): the demo
 * project and a copy of its contest template in a second one.
 */
async function seedTwoProjects(b: BenchDb, n: number, dueAt: number, sinks: [Sink, Sink]): Promise<void> {
  const demo = await loadBenchProject(b);
  const t = await contestTemplate(b, demo.projectId);
  const now = Date.now();
  const second = await b.db.db
    .insertInto('projects')
    .values({
      site_key: 'bench-second',
      name: 'Second',
      from_email: 'noreply@second.example',
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const tpl = await b.db.db.selectFrom('templates').selectAll().where('id', '=', t.id).executeTakeFirstOrThrow();
  const t2 = await b.db.db
    .insertInto('templates')
    .values({
      project_id: second.id,
      name: tpl.name,
      subject: tpl.subject,
      html: tpl.html,
      text: tpl.text,
      created_at: now,
      updated_at: now,
    })
    .returning(['id', 'name'])
    .executeTakeFirstOrThrow();
  const half = Math.floor(n / 2);
  for (const [projectId, template, prefix, count] of [
    [demo.projectId, t, 'reader', half],
    [second.id, t2, 'other', n - half],
  ] as const) {
    await seedContacts(b, projectId, count, prefix);
    const made = await seedEmails(b, {
      projectId,
      templateId: template.id,
      templateKey: template.name,
      contactPrefix: prefix,
      status: 'queued',
      dueAt,
    });
    if (made !== count) throw new Error(`seeded ${made} e-mails, wanted ${count}`);
  }
  const deps = {
    db: b.db,
    // The bench's sinks listen on loopback, which a relay may point at only when allowed.
    config: loadConfig({ DATABASE_URL: b.url, RELAYS_ALLOW_PRIVATE: 'true' }),
    clock: systemClock,
    secret: BENCH_SECRET,
  };
  await putDelivery(deps, BENCH_ACTOR, demo.siteKey, { primary: { smtp_url: sinks[0].url, pool_size: POOL } });
  await putDelivery(deps, BENCH_ACTOR, 'bench-second', { primary: { smtp_url: sinks[1].url, pool_size: POOL } });
}

async function seed(b: BenchDb, n: number, dueAt: number): Promise<{ projectId: number }> {
  const demo = await loadBenchProject(b);
  const t = await contestTemplate(b, demo.projectId);
  await seedContacts(b, demo.projectId, n, 'reader');
  const made = await seedEmails(b, {
    projectId: demo.projectId,
    templateId: t.id,
    templateKey: t.name,
    contactPrefix: 'reader',
    status: 'queued',
    dueAt,
  });
  if (made !== n) throw new Error(`seeded ${made} e-mails, wanted ${n}`);
  return { projectId: demo.projectId };
}

interface Run {
  rate: number;
  wallRate: number;
  rssMb: number;
  sent: number;
  received: number | null;
  /** Worker CPU (user + system, all worker processes) per e-mail, in microseconds. */
  cpuUsPerEmail: number;
}

async function runOnce(
  kind: Kind,
  transport: 'smtp-sink' | 'node' | 'capture',
  workers = 1,
  perProject = false,
): Promise<Run> {
  const b = await freshDatabase(kind);
  let sink: Sink | null = null;
  let own: [Sink, Sink] | null = null;
  try {
    // Due a little in the future: the workers are up and idle before they fall due together.
    const startAt = Date.now() + 8000 + 2000 * workers + (perProject ? 6000 : 0);
    if (perProject && transport !== 'capture') {
      own = [await startSink(transport), await startSink(transport)];
      await seedTwoProjects(b, N, startAt, own);
    } else await seed(b, N, startAt);
    if (transport !== 'capture' && !own) sink = await startSink(transport);
    const procs = await Promise.all(
      Array.from({ length: workers }, async (_, i) => {
        const metricsPort = await freePort();
        return spawnNode(
          'src/cli.ts',
          ['worker'],
          {
            DATABASE_URL: b.url,
            LOG_LEVEL: 'warn',
            METRICS_PORT: String(metricsPort),
            ...(sink ? { SMTP_URL: sink.url } : {}),
            ...(own ? { SECRET_KEY: BENCH_SECRET } : {}),
          },
          { port: metricsPort, name: `delivery-${kind}-${transport}-${i + 1}` },
        );
      }),
    );
    if (Date.now() > startAt - 500)
      throw new Error('workers took too long to start; the e-mails fell due before they were ready');
    const cpu0 = procs.reduce((t, p) => t + p.cpuSeconds(), 0);
    let sent = 0;
    let rssMb = 0;
    let cpu = 0;
    try {
      const deadline = startAt + 300_000;
      for (;;) {
        await sleep(250);
        const r = await b.db.db
          .selectFrom('scheduled_emails')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('status', '=', 'sent')
          .executeTakeFirstOrThrow();
        sent = Number(r.n);
        if (sent >= N || Date.now() > deadline) break;
      }
    } finally {
      cpu = procs.reduce((t, p) => t + p.cpuSeconds(), 0) - cpu0;
      for (const p of procs) rssMb = Math.max(rssMb, await p.stop());
    }
    const span = await b.db.db
      .selectFrom('scheduled_emails')
      .select((eb) => [
        eb.fn.min('sent_at').as('first'),
        eb.fn.max('sent_at').as('last'),
        eb.fn.countAll<number>().as('n'),
      ])
      .where('status', '=', 'sent')
      .executeTakeFirstOrThrow();
    const first = Number(span.first);
    const last = Number(span.last);
    let received = sink ? await sink.stop() : null;
    sink = null;
    if (own) {
      const got = await Promise.all(own.map((x) => x.stop()));
      received = got.every((g) => g !== null) ? got.reduce((a, g) => a + g, 0) : null;
      own = null;
    }
    return {
      rate: sent / Math.max(0.001, (last - first) / 1000),
      wallRate: sent / Math.max(0.001, (last - startAt) / 1000),
      rssMb,
      sent,
      received,
      cpuUsPerEmail: (cpu * 1e6) / Math.max(1, sent),
    };
  } finally {
    if (sink) await sink.stop();
    if (own) for (const x of own) await x.stop();
    await b.cleanup();
  }
}

export async function runDelivery(kinds: Kind[] = KINDS): Promise<Record<string, string | number>> {
  const postfix = hasPostfixSink();
  const want = process.env.BENCH_SINK ?? (postfix ? 'smtp-sink' : 'node');
  const sinks = (want === 'both' ? ['smtp-sink', 'node'] : [want]) as ('smtp-sink' | 'node')[];
  if (sinks.includes('smtp-sink') && !postfix)
    throw new Error('postfix smtp-sink not found: apt-get install postfix, or BENCH_SINK=node');
  log(
    `== delivery: ${N} due e-mails; worker defaults (batch 200, concurrency 10, SMTP_POOL_SIZE ${process.env.SMTP_POOL_SIZE ?? POOL}); sinks: ${sinks.join(', ')}; ${machine()}`,
  );
  const out: Record<string, string | number> = {};
  for (const s of sinks) {
    const sink = await startSink(s);
    const rate = await baselineRate(sink, Math.min(N, QUICK ? 2000 : 10_000));
    await sink.stop();
    log(`baseline  nodemailer pool -> ${s}: ${rate.toFixed(0)} messages/s (no database, no rendering)`);
    out[`baseline_${s === 'node' ? 'nodesink' : 'smtpsink'}_per_s`] = Math.round(rate);
  }
  let allSent = true;
  const runs: { kind: Kind; t: 'smtp-sink' | 'node' | 'capture'; workers: number; perProject?: boolean }[] = [];
  for (const kind of kinds) {
    for (const t of sinks) runs.push({ kind, t, workers: 1 });
    // Per-project transports: two projects, each through its own relay (sink), one worker.
    for (const t of sinks) runs.push({ kind, t, workers: 1, perProject: true });
    runs.push({ kind, t: 'capture', workers: 1 });
    // Scale-out: two worker processes on one PostgreSQL outbox (FOR UPDATE SKIP LOCKED).
    if (kind === 'postgres') for (const t of sinks) runs.push({ kind, t, workers: 2 });
  }
  for (const { kind, t, workers, perProject } of runs) {
    // BENCH_PER_PROJECT=compare: only the per-project runs and the one-worker single-sink runs beside them.
    if (process.env.BENCH_PER_PROJECT === 'compare' && !perProject && (workers > 1 || t === 'capture')) continue;
    const r = await runOnce(kind, t, workers, perProject);
    allSent &&= r.sent === N && (r.received === null || r.received === N);
    const who = `${workers} worker${workers > 1 ? 's' : ' '}${perProject ? ', 2 projects on 2 sinks' : ''}`;
    log(
      `${kind.padEnd(9)} -> ${t.padEnd(9)} ${who} ${r.rate.toFixed(0).padStart(6)} e-mails/s (first to last send)  ${r.wallRate.toFixed(0)} /s from due time  ` +
        `sent ${r.sent}/${N}${r.received !== null ? ` sink got ${r.received}` : ''}  worker CPU ${r.cpuUsPerEmail.toFixed(0)} us/e-mail  peak RSS ${r.rssMb.toFixed(0)} MiB`,
    );
    const tag = `${kind === 'sqlite' ? 'sqlite' : 'pg'}_${t === 'capture' ? 'capture' : t === 'node' ? 'nodesink' : 'smtpsink'}${workers > 1 ? `_${workers}workers` : ''}${perProject ? '_perproject' : ''}`;
    out[`${tag}_per_s`] = Math.round(r.rate);
    out[`${tag}_rss_mb`] = Math.round(r.rssMb);
  }
  out.all_sent = allSent ? 'yes' : 'NO';
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await runDelivery();
  log(summary('delivery', figures));
}
