// A real gateway process for the client tests: `demo` then `serve` through the CLI on a database of its
// own (SQLite file, or a PostgreSQL schema), plus a TCP proxy in front of it that breaks chosen requests.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dropSchema, openDatabase, schemaUrl } from '../../src/db/index.js';
import { freePort } from '../fixtures/delivery-support.js';
import { PG_URL } from './harness.js';
import { hasExited } from './processes.js';

const run = promisify(execFile);
export const LIVE_ADMIN_TOKEN = 'client-tests-admin-token-0123456789';

export interface LiveGateway {
  url: string;
  siteKey: string;
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

/** Starts `serve` over the demo project; resolves once /healthz answers. */
export async function startLiveGateway(dialect: 'sqlite' | 'postgres'): Promise<LiveGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'egw-clients-'));
  let databaseUrl = `sqlite:${join(dir, 'gateway.db')}`;
  let schema: string | null = null;
  if (dialect === 'postgres') {
    schema = `clients_${randomBytes(5).toString('hex')}`;
    await (await openDatabase(PG_URL!, { schema })).close(); // creates the schema
    databaseUrl = schemaUrl(PG_URL!, schema);
  }
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN: LIVE_ADMIN_TOKEN,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // The clients' webhook tests register receivers on 127.0.0.1.
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    RELAYS_ALLOW_PRIVATE: 'true',
  } as NodeJS.ProcessEnv;
  await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'demo'], { env });
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (c: Buffer) => (out = (out + String(c)).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${port}`;

  const close = async () => {
    if (!hasExited(child)) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    }
    if (schema) await dropSchema(PG_URL!, schema);
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (hasExited(child)) {
      await close();
      throw new Error(`serve exited early:\n${out}`);
    }
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      await close();
      throw new Error(`serve did not become healthy:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    url,
    siteKey: 'demo-courses',
    async admin(method, path, body) {
      const res = await fetch(url + path, {
        method,
        headers: {
          authorization: `Bearer ${LIVE_ADMIN_TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const data = await res.json();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
      return data;
    },
    close,
  };
}

export interface BreakingProxy {
  url: string;
  /** Order ids whose first answer was cut or replaced. */
  broken: string[];
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of the gateway. For a request whose body has an order id starting with `cut-`, the
 * first time: the request is forwarded, the gateway handles it, and the connection is reset as its answer
 * starts, so the client never sees it. Starting with `fail503-`, the first time: the request never reaches
 * the gateway and a load balancer's 503 comes back. Everything else passes through.
 */
export async function startBreakingProxy(target: string): Promise<BreakingProxy> {
  const { hostname, port } = new URL(target);
  const seen = new Set<string>();
  const broken: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    // The bytes of the request in flight: no client here pipelines, so an answer ends a request.
    let request = '';
    let holding = false;
    client.on('data', (chunk: Buffer) => {
      request += chunk.toString('latin1');
      const m = /"order_id":"((cut|fail503)-[^"]+)"/.exec(request);
      if (m && !seen.has(m[1]) && m[2] === 'fail503') {
        // Wait for the whole body (by Content-Length) so the client is not cut while still sending.
        const head = request.indexOf('\r\n\r\n');
        const length = Number(/content-length:\s*(\d+)/i.exec(request.slice(0, head))?.[1] ?? 0);
        if (Buffer.byteLength(request.slice(head + 4), 'latin1') < length) return;
        seen.add(m[1]);
        broken.push(m[1]);
        const body = '<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>';
        client.write(
          `HTTP/1.1 503 Service Temporarily Unavailable\r\nContent-Type: text/html\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`,
        );
        request = '';
        return;
      }
      holding = Boolean(m && !seen.has(m[1]) && m[2] === 'cut');
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (holding) {
        const m = /"order_id":"(cut-[^"]+)"/.exec(request)!;
        seen.add(m[1]);
        broken.push(m[1]);
        holding = false;
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      request = '';
      client.write(chunk);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    broken,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
