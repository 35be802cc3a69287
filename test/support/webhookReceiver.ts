// A real HTTP receiver for webhook tests: it verifies every request with the standardwebhooks library
// (as a site would) and answers as the test tells it: 200, 500, a redirect, or not at all (time-outs).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type Mode = 'ok' | 'fail' | 'hang' | 'redirect';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  /** null when the signature (or its timestamp) did not verify. */
  verified: unknown;
}

export interface Receiver {
  url: string;
  port: number;
  mode: Mode;
  secret: string | null;
  received: Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hanging = new Set<import('node:http').ServerResponse>();
  const r: Receiver = {
    url: '',
    port: 0,
    mode: 'ok',
    secret: null,
    received: [],
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let verified: unknown;
      try {
        verified = new Webhook(r.secret ?? '').verify(raw, req.headers as Record<string, string>);
      } catch {
        verified = null;
      }
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = null;
      }
      r.received.push({ path: req.url ?? '', headers: req.headers, raw, body, verified });
      if (r.mode === 'hang') {
        hanging.add(res);
        return;
      }
      if (r.mode === 'redirect') {
        res.writeHead(302, { location: `${r.url}/elsewhere` }).end();
        return;
      }
      // A NUL byte in the answer: PostgreSQL refuses it in the stored excerpt.
      if (r.mode === 'fail') {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`upstream broke\u0000 ${'x'.repeat(5000)}`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}`;
  return r;
}
