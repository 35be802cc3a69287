// What a gateway process answered, for the fault tests (faults-*.test.ts): one HTTP call recorded as
// status, error code and Retry-After (or "refused" when the socket was), and a one-line summary.

export interface Answer {
  status: number | 'refused';
  code?: string;
  retryAfter?: string | null;
  id?: number;
  error?: string;
  /** How long the call took, ms. */
  ms?: number;
}

export const ok = (a: Answer) => typeof a.status === 'number' && a.status >= 200 && a.status < 300;

/**
 * "200: 12, 503 service_unavailable: 3 (slowest 41 ms)", and why a call found no answer. One pass: a
 * summary of 10,000 answers built once per answer blocked the test's event loop past the server's
 * keep-alive timeout, and the next call then went out on a socket the server had closed.
 */
export const summary = (answers: Answer[]) => {
  const counts = new Map<string, number>();
  const errors = new Set<string>();
  let slowest = 0;
  for (const a of answers) {
    const label = `${a.status}${a.code ? ` ${a.code}` : ''}`;
    counts.set(label, (counts.get(label) ?? 0) + 1);
    if (a.error) errors.add(a.error);
    slowest = Math.max(slowest, a.ms ?? 0);
  }
  const said = [...counts].map(([label, n]) => `${label}: ${n}`).join(', ');
  return `${said} (slowest ${Math.round(slowest)} ms)${errors.size ? `; no answer: ${[...errors].join('; ')}` : ''}`;
};

/** One call to the process on `port`; never throws (a refused or reset connection is an answer too). */
export async function callGateway(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const start = performance.now();
  const ms = () => performance.now() - start;
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    const json = text ? (JSON.parse(text) as Record<string, any>) : {};
    return {
      status: res.status,
      code: json.detail?.error?.code,
      retryAfter: res.headers.get('retry-after'),
      id: json.scheduled_email_id,
      ms: ms(),
    };
  } catch (err) {
    return { status: 'refused', error: String((err as Error).cause ?? err), ms: ms() };
  }
}
