// What every provider receiver (SPEC §12) shares: the request it reads, the credentials it checks and
// the reports it produces for services/reports.ts.
import type { InboundReport } from '../../services/reports.js';

export type ProviderReport = Omit<InboundReport, 'source' | 'projectId' | 'raw'>;

export interface WebhookRequest {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** The provider's credentials from the project's delivery settings (`webhooks.<provider>`). */
export type Credentials = Record<string, string>;

export type ProviderResult =
  { ok: true; reports: ProviderReport[]; note?: string } | { ok: false; status: 400 | 401; message: string };

/** GET of a URL the provider gave (SNS certificates, subscription confirmation); injectable for tests. */
export type HttpGet = (url: string) => Promise<string>;

export interface ProviderDeps {
  httpGet: HttpGet;
}

export const refuse = (message: string): ProviderResult => ({ ok: false, status: 401, message });
export const malformed = (message: string): ProviderResult => ({ ok: false, status: 400, message });

export function header(req: WebhookRequest, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

export function parseJsonBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

export const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/** A JSON object member by member (`{}` for anything else): provider payloads are read defensively. */
export type Json = Record<string, unknown>;
export const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
