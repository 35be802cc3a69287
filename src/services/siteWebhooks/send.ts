// One webhook POST, as safely as a gateway that sits inside an installation's network must send it: the
// host is resolved first and every address checked (no loopback or private ranges unless allowed), the
// connection goes to the checked address (a second lookup cannot swap it), redirects are not followed,
// the whole exchange is bounded in time and only the first bytes of the answer are kept.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { cleanText } from '../../domain/inputRules.js';
import { hostOf, isPrivateAddress, urlProblem } from '../../domain/siteWebhooks.js';

/** Resolves a host name to its addresses; injectable because tests have no outside DNS. */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true })).map((a) => a.address);

/** Kept of an answer's body: enough to read an error page's first lines. */
export const EXCERPT_BYTES = 1024;

export interface SendResult {
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
  latencyMs: number;
}

export class RefusedAddress extends Error {}

/** The address to connect to, after every check; throws RefusedAddress with the reason. */
export async function checkedAddress(rawUrl: string, o: { allowPrivate: boolean; resolve: Resolver }): Promise<string> {
  const problem = urlProblem(rawUrl);
  if (problem) throw new RefusedAddress(`URL ${problem.text}`);
  const host = hostOf(new URL(rawUrl));
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await o.resolve(host);
    } catch (e) {
      throw new RefusedAddress(`host ${host} could not be resolved: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    if (addresses.length === 0) throw new RefusedAddress(`host ${host} has no address`);
  }
  if (!o.allowPrivate) {
    const bad = addresses.find(isPrivateAddress);
    if (bad) throw new RefusedAddress(`host ${host} is a private or loopback address (${bad})`);
  }
  return addresses[0];
}

export async function postWebhook(o: {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  resolve: Resolver;
}): Promise<SendResult> {
  const started = performance.now();
  const done = (r: Omit<SendResult, 'latencyMs'>): SendResult => ({ ...r, latencyMs: performance.now() - started });
  let address: string;
  try {
    address = await checkedAddress(o.url, o);
  } catch (e) {
    return done({ statusCode: null, error: (e as Error).message, excerpt: null });
  }
  const u = new URL(o.url);
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (r: Omit<SendResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(done(r));
    };
    const req = send({
      method: 'POST',
      hostname: address,
      port: u.port || undefined,
      path: `${u.pathname}${u.search}`,
      // TLS is checked against the name the administrator entered, not the address.
      servername: isIP(hostOf(u)) ? undefined : hostOf(u),
      headers: {
        ...o.headers,
        host: u.host,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(o.body)),
        'user-agent': 'edu-gateway-webhooks/1',
      },
      agent: false,
    });
    // One bound for connect, send and answer together.
    const timer = setTimeout(
      () => finish({ statusCode: null, error: `timed out after ${o.timeoutMs} ms`, excerpt: null }),
      o.timeoutMs,
    );
    req.on('error', (e: NodeJS.ErrnoException) =>
      finish({ statusCode: null, error: `${e.code ?? 'error'}: ${e.message}`.slice(0, 500), excerpt: null }),
    );
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const end = () => {
        // Stored with the attempt: U+0000 (which PostgreSQL refuses in text) would make it unrecordable.
        const excerpt = cleanText(Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8'));
        const code = res.statusCode ?? 0;
        const ok = code >= 200 && code < 300;
        // A redirect is an answer like any other non-2xx: not followed, retried.
        const error = ok
          ? null
          : code >= 300 && code < 400
            ? `redirect to ${res.headers.location ?? '?'} not followed`
            : `HTTP ${code}`;
        finish({ statusCode: code, error, excerpt: excerpt || null });
      };
      res.on('data', (c: Buffer) => {
        if (size < EXCERPT_BYTES) chunks.push(c);
        size += c.length;
        if (size >= EXCERPT_BYTES) end();
      });
      res.on('end', end);
      res.on('error', end);
    });
    req.end(o.body);
  });
}
