// What a gateway process answered, for the fault tests (faults-*.test.ts): one HTTP call recorded as
// status, error code and Retry-After (or "refused" when the socket was), and a one-line summary.

export interface Answer {
  status: number | 'refused';
  code?: string;
  retryAfter?: string | null;
  id?: number;
  error?: string;
}

export const ok = (a: Answer) => typeof a.status === 'number' && a.status >= 200 && a.status < 300;

/** "200: 12, 503 service_unavailable: 3" */
export const summary = (answers: Answer[]) => {
  const label = (a: Answer) => `${a.status}${a.code ? ` ${a.code}` : ''}`;
  return [...new Set(answers.map(label))]
    .map((s) => `${s}: ${answers.filter((a) => label(a) === s).length}`)
    .join(', ');
};

/** One call to the process on `port`; never throws (a refused or reset connection is an answer too). */
export async function callGateway(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
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
    };
  } catch (err) {
    return { status: 'refused', error: String((err as Error).cause ?? err) };
  }
}
