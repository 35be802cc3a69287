// A real `serve` process on a SQLite file, for the SQLite fault tests (faults-sqlite*.test.ts): the demo
// project loaded, a relay that counts what it receives by Message-ID, and a client that sends
// transactional e-mails under load and says what was answered.
import assert from 'node:assert/strict';
import { existsSync, statSync, statfsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { cliActor } from '../../src/cliAdmin.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { systemClock } from '../../src/services/context.js';
import { loadDemo } from '../../src/services/demo.js';
import { freePort } from '../fixtures/delivery-support.js';
import { callGateway, ok, type Answer } from './faultAnswers.js';
import { assertAlive, healthy, startProcess, stopProcess, type Proc } from './processes.js';

export interface SqliteServe {
  serve: Proc;
  /** Times each Message-ID reached the relay. */
  received: Map<string, number>;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** One transactional send, a new idempotency key each time. */
  send(): Promise<Answer>;
  /** `clients` senders in a loop for `ms`. */
  load(ms: number, clients?: number): Promise<Answer[]>;
  /** Fails the test when the process has ended. */
  alive(): void;
  /** Waits until every e-mail of `answers` answered 2xx is stored and sent; returns how many were received twice. */
  delivered(answers: Answer[]): Promise<{ ids: number; twice: number }>;
  stop(): Promise<void>;
}

/** Migrates `file`, loads the demo project and starts `serve` on it with a relay that waits `relayDelayMs`. */
export async function startSqliteServe(file: string, relayDelayMs = 0): Promise<SqliteServe> {
  const url = `sqlite:${file}`;
  const db = await openDatabase(url);
  await migrateToLatest(db);
  const demo = await loadDemo({ db, config: loadConfig({ DATABASE_URL: url }), clock: systemClock }, cliActor());
  const key = demo.keys.find((k) => k.name.startsWith('site backend'))!.key!;
  await db.db
    .updateTable('api_keys')
    .set({ rate_per_second: 100_000, rate_burst: 100_000 })
    .where('name', 'like', 'site backend%')
    .execute();
  await db.close();

  const received = new Map<string, number>();
  const smtp = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onData(stream, _s, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const id = /^Message-ID:\s*(<[^>\r\n]+>)/im.exec(Buffer.concat(chunks).toString('latin1'))?.[1] ?? '(none)';
        received.set(id, (received.get(id) ?? 0) + 1);
        setTimeout(() => cb(null), relayDelayMs);
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  const port = await freePort();
  const serve = startProcess(
    'serve',
    'serve',
    {
      DATABASE_URL: url,
      PORT: String(port),
      PUBLIC_URL: 'https://mail.example.test',
      SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    },
    port,
  );
  await healthy(serve);

  const call = (method: string, path: string, body?: unknown, headers = {}) =>
    callGateway(serve.port, method, path, body, headers);
  let seq = 0;
  const send = () =>
    call(
      'POST',
      '/api/scoped/send/transactional',
      {
        event_type: 'contest_results',
        email: `reader${seq % 200}@example.com`,
        name: 'Reader',
        idempotency_key: `fault-${seq++}`,
        fields: { event_title: 'Spring contest', work_title: `Work ${seq}`, place: '1' },
      },
      { 'x-api-key': key, prefer: 'respond-async' },
    );
  const load = async (ms: number, clients = 10) => {
    const answers: Answer[] = [];
    const end = Date.now() + ms;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (Date.now() < end) answers.push(await send());
      }),
    );
    return answers;
  };
  const alive = () => assertAlive(serve);

  // Said when e-mails stay unsent: a file system filled up again shows here.
  const filesNow = () => {
    const size = (f: string) => (existsSync(f) ? statSync(f).size : 0);
    const fs = statfsSync(dirname(file));
    return `database ${size(file)} B, -wal ${size(`${file}-wal`)} B, ${fs.bavail * fs.bsize} B free`;
  };
  const delivered = async (answers: Answer[]) => {
    const ids = [...new Set(answers.filter(ok).map((a) => a.id!))];
    const check = await openDatabase(url);
    try {
      const deadline = Date.now() + 120_000;
      let rows: { id: number; status: string; message_id: string | null }[] = [];
      for (;;) {
        rows = await check.db
          .selectFrom('scheduled_emails')
          .select(['id', 'status', 'message_id'])
          .where('id', 'in', ids)
          .execute();
        if (rows.every((r) => r.status === 'sent') || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      assert.equal(rows.length, ids.length, 'every e-mail answered 2xx is stored');
      const unsent = rows.filter((r) => r.status !== 'sent');
      const byStatus = [...new Set(unsent.map((r) => r.status))].map(
        (st) => `${st}: ${unsent.filter((r) => r.status === st).length}`,
      );
      assert.equal(
        unsent.length,
        0,
        `every e-mail is sent; not sent: ${byStatus.join(', ')} (ids ${unsent[0]?.id}…); ${filesNow()}\n${serve.out().slice(-4000)}`,
      );
      return { ids: ids.length, twice: rows.filter((r) => (received.get(r.message_id!) ?? 0) > 1).length };
    } finally {
      await check.close();
    }
  };

  return {
    serve,
    received,
    call,
    send,
    load,
    alive,
    delivered,
    stop: async () => {
      await stopProcess(serve);
      await new Promise<void>((r) => smtp.close(() => r()));
    },
  };
}
