// "Verify connection" (issue 13): connect, EHLO, STARTTLS and AUTH against a relay without sending, and
// whether DNS serves a DKIM record. Failures carry the relay's answer in full (it says what is wrong).
import { Resolver } from 'node:dns/promises';
import nodemailer from 'nodemailer';
import { dkimDnsRecord, type StoredSettings } from '../domain/delivery.js';
import type { CheckReason } from '../domain/errorCatalog.js';

/**
 * What a failed check means, from nodemailer's error code, the socket's errno in its message, and the
 * server's reply code: the administrator gets a sentence for it beside the raw reply.
 */
function failureReason(e: { code?: unknown; responseCode?: unknown; message?: unknown }): CheckReason {
  const code = typeof e.code === 'string' ? e.code : '';
  const text = `${code} ${typeof e.message === 'string' ? e.message : ''}`;
  if (code === 'EAUTH' || e.responseCode === 535 || e.responseCode === 534) return 'auth_failed';
  // Something answered, but not with an SMTP greeting (an SSH or HTTP server, a database...).
  if (code === 'EPROTOCOL' || /Invalid greeting/i.test(text)) return 'not_smtp';
  if (/ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ECONNRESET/.test(text)) return 'connection_refused';
  if (/ENOTFOUND|EAI_AGAIN|EDNS/.test(text)) return 'host_not_found';
  if (/ETIMEDOUT|timeout/i.test(text)) return 'timeout';
  if (code === 'ETLS' || /certificate|\bTLS\b|SSL|wrong version number/i.test(text)) return 'tls_failed';
  if (typeof e.responseCode === 'number' && e.responseCode >= 400) return 'refused';
  return 'failed';
}

/**
 * The reply shown to the administrator: an SMTP server's own words (a line starting with its 3-digit
 * code), else the client's error without anything the peer sent. What a service that is not SMTP sent is
 * never echoed (SPEC §21): the check must not read banners off the gateway's network.
 */
function safeReply(
  reason: CheckReason,
  e: { response?: unknown; code?: unknown; message?: unknown },
  err: unknown,
): string {
  if (reason === 'not_smtp') return 'not_smtp: the service at this address did not greet like an SMTP server';
  if (typeof e.response === 'string' && /^[2-5]\d\d[ -]/.test(e.response)) return e.response;
  const message = String(e.message ?? err)
    .replace(/\s*response=[\s\S]*$/i, '')
    .replace(/[^\x20-\x7e]/g, '?');
  return `${typeof e.code === 'string' ? `${e.code}: ` : ''}${message.slice(0, 300)}`;
}

export async function verifyRelay(
  url: string,
  o: { timeoutMs: number; requireTLS: boolean },
): Promise<{ ok: boolean; reason: CheckReason; reply: string }> {
  const t = nodemailer.createTransport({
    url,
    connectionTimeout: o.timeoutMs,
    greetingTimeout: o.timeoutMs,
    socketTimeout: o.timeoutMs,
    ...(o.requireTLS ? { requireTLS: true } : {}),
  });
  try {
    await t.verify();
    return {
      ok: true,
      reason: 'relay_ok',
      reply: 'connected; EHLO, STARTTLS (when offered or required) and AUTH (when configured) accepted',
    };
  } catch (err) {
    const e = err as { response?: unknown; code?: unknown; message?: unknown; responseCode?: unknown };
    const reason = failureReason(e);
    return { ok: false, reason, reply: safeReply(reason, e, err) };
  } finally {
    t.close();
  }
}

export type TxtLookup = (name: string) => Promise<string[][]>;

export function systemTxtLookup(timeoutMs = 3000): TxtLookup {
  const r = new Resolver({ timeout: timeoutMs, tries: 1 });
  return (name) => r.resolveTxt(name);
}

/** Whether DNS serves the selector's record with this key; "not found" also when DNS cannot be reached. */
export async function checkDkimDns(dkim: NonNullable<StoredSettings['dkim']>, lookup: TxtLookup) {
  const want = dkimDnsRecord(dkim);
  let records: string[][];
  try {
    records = await lookup(want.name);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return {
      ok: false,
      reason: 'dkim_not_found' as CheckReason,
      record: want,
      found: null,
      reply: `not found: no TXT record at ${want.name} (${typeof code === 'string' ? code : 'DNS unreachable'})`,
    };
  }
  const texts = records.map((parts) => parts.join(''));
  const p = (s: string) => /(?:^|;)\s*p=([^;\s]*)/.exec(s)?.[1] ?? null;
  const match = texts.find((s) => p(s) === dkim.public_key) ?? null;
  return {
    ok: match !== null,
    reason: (match ? 'dkim_found' : texts.length ? 'dkim_mismatch' : 'dkim_not_found') as CheckReason,
    record: want,
    found: texts,
    reply: match
      ? `found: ${want.name} publishes this key`
      : texts.length
        ? `mismatch: ${want.name} publishes another key`
        : `not found: no TXT record at ${want.name}`,
  };
}
