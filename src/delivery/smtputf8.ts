// SMTPUTF8 (RFC 6531) toward the relay. Nodemailer writes an address whose local part is ASCII in ASCII
// form on its own (`ivan@пример.рф` -> `ivan@xn--e1afmkfd.xn--p1ai`, envelope and headers), which every
// relay accepts. An address with a non-ASCII local part (`иван@пример.рф`) has no ASCII form: it can only
// travel with SMTPUTF8, and nodemailer, when the relay does not offer it, sends the UTF-8 bytes anyway
// (a protocol violation that relays reject or mangle). So before such a message the relay's EHLO is read
// once, and without SMTPUTF8 the e-mail fails for good with a reason, instead of being retried.
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import { needsSmtpUtf8 } from '../domain/email.js';

/** A permanent failure: the relay cannot carry this address. classifySmtpError knows the code. */
class SmtpUtf8Unavailable extends Error {
  readonly code = 'ESMTPUTF8';
}

/** Whether the relay at `url` lists SMTPUTF8 in its EHLO reply; read at most once per `ttlMs`. */
export function smtpUtf8Probe(url: string, timeoutMs: number, ttlMs = 10 * 60_000): () => Promise<boolean> {
  let known: { value: boolean; at: number } | null = null;
  let pending: Promise<boolean> | null = null;
  const probe = () =>
    new Promise<boolean>((resolve, reject) => {
      const conn = new SMTPConnection({
        ...parseConnectionUrl(url),
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
      });
      conn.once('error', (err) => {
        conn.close();
        reject(err instanceof Error ? err : new Error(String(err)));
      });
      // connect() calls back after EHLO (and after the second one when STARTTLS was used): the last
      // reply is the capability list.
      conn.connect(() => {
        const ehlo = String((conn as unknown as { lastServerResponse?: string }).lastServerResponse ?? '');
        conn.quit();
        resolve(/^250[ -]SMTPUTF8\b/im.test(ehlo));
      });
    });
  return async () => {
    if (known && Date.now() - known.at < ttlMs) return known.value;
    // Concurrent sends share one probe; a failed probe is not remembered (the send is retried).
    pending ??= probe()
      .then((value) => {
        known = { value, at: Date.now() };
        return value;
      })
      .finally(() => {
        pending = null;
      });
    return pending;
  };
}

/**
 * Throws SmtpUtf8Unavailable when the message has an address only SMTPUTF8 can carry and the relay does
 * not offer it; `offered` is asked only when such an address is there.
 */
export async function checkSmtpUtf8(
  addresses: { from: string; to: string },
  offered: () => Promise<boolean>,
): Promise<void> {
  const sender = needsSmtpUtf8(addresses.from);
  const recipient = needsSmtpUtf8(addresses.to);
  if (!sender && !recipient) return;
  if (await offered()) return;
  const who = recipient
    ? `the recipient address ${addresses.to}`
    : `the sender address ${addresses.from} (the project's from_email)`;
  throw new SmtpUtf8Unavailable(
    `the relay does not offer SMTPUTF8 (RFC 6531), which ${who} needs: its local part is not ASCII and has no ASCII form`,
  );
}
