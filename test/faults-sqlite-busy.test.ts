// Issue 34 / SPEC §20 on SQLite: another connection holds the file's write lock (BEGIN IMMEDIATE, as a
// backup tool or an `sqlite3` shell left in a transaction would) while a real `serve` process takes
// sends. Waiting for the lock must not stop the process: /healthz goes on answering while the lock is
// held (SQLite's busy_timeout of 5 s used to hold the event loop for each write), requests are answered
// 2xx or 503 service_unavailable with Retry-After (the lock held beyond the 5 s wait), every 2xx is
// stored and sent, and once the lock is released everything works without a restart.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { ok, summary, type Answer } from './support/faultAnswers.js';
import { startSqliteServe, type SqliteServe } from './support/sqliteServe.js';

// Longer than the gateway's 5 s wait for a lock, so that some requests are refused.
const HOLD_MS = 8_000;

describe('SQLite file locked by another connection (issue 34)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'egw-busy-'));
  const file = join(dir, 'gateway.db');
  let gw: SqliteServe;

  before(async () => {
    gw = await startSqliteServe(file);
  });

  after(async () => {
    if (gw) await gw.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'the event loop runs while the lock is waited for; 2xx or 503 with Retry-After; nothing lost; back after',
    { timeout: 240_000 },
    async () => {
      const first = await gw.load(1_500, 5);
      assert.ok(first.every(ok), `before the lock: ${summary(first)}`);

      // Another connection takes the write lock (it may wait a moment for the gateway's own commit).
      const holder = new SQLite(file, { timeout: 10_000 });
      holder.exec('BEGIN IMMEDIATE');
      let held = true;
      let writesPending = 0;
      const pending = async () => {
        writesPending++;
        try {
          return await gw.send();
        } finally {
          writesPending--;
        }
      };
      const release = new Promise<void>((r) =>
        setTimeout(() => {
          holder.exec('COMMIT');
          held = false;
          r();
        }, HOLD_MS),
      );

      // Writers keep sending while the lock is held; /healthz is asked meanwhile, one call after another.
      const during: Answer[] = [];
      const writers = Array.from({ length: 8 }, async () => {
        while (held) during.push(await pending());
      });
      let healthAnswered = 0;
      let healthWhileWaiting = 0;
      const health = (async () => {
        while (held) {
          const a = await gw.call('GET', '/healthz');
          assert.equal(a.status, 200, `/healthz while the file is locked: ${JSON.stringify(a)}`);
          healthAnswered++;
          // Answered while the lock was still held and a write was waiting for it: with the wait inside
          // SQLite, nothing is answered until the write gives up (once per 5 s).
          if (held && writesPending > 0) healthWhileWaiting++;
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      await Promise.all([release, health, ...writers]);
      holder.close();
      const saidDuring = summary(during);
      console.log(
        `# lock held ${HOLD_MS} ms: ${saidDuring}; /healthz answered ${healthAnswered} times, ${healthWhileWaiting} while a write waited`,
      );
      gw.alive();
      // A handful is enough to tell the loop ran between tries (the old wait answered at most one per 5 s).
      assert.ok(healthWhileWaiting >= 5, `/healthz answered ${healthWhileWaiting} times while a write waited`);
      for (const a of during.filter((x) => !ok(x))) {
        assert.equal(a.status, 503, saidDuring);
        assert.equal(a.code, 'service_unavailable', saidDuring);
        assert.ok(Number(a.retryAfter) >= 1, 'a 503 carries Retry-After');
      }
      assert.ok(
        during.some((a) => a.status === 503),
        `the lock outlasted the gateway's wait: some requests were refused (${saidDuring})`,
      );

      // Released: writes go through again without a restart.
      const later = await gw.load(2_000, 5);
      assert.ok(later.every(ok), `after the lock was released: ${summary(later)}`);
      gw.alive();

      const { ids, twice } = await gw.delivered([...first, ...during, ...later]);
      console.log(`# ${ids} e-mails answered 2xx, all stored and sent; ${twice} received twice`);
      assert.equal(twice, 0, 'no e-mail was sent twice');
      gw.alive();
    },
  );
});
