// The inbound SMTP listener of the bounce domain (SPEC §12). It is the MX target of BOUNCE_DOMAIN and
// nothing else: RCPT is accepted only for signed VERP addresses of that domain (never a relay, never
// mail for anyone else), messages are size-limited, and each message becomes reports through the one
// recording path (services/reports.ts).
import { createHash } from 'node:crypto';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { parseVerpAddress } from '../delivery/verp.js';
import type { InboundReport } from '../services/reports.js';
import { parseReportMessage } from './parseReport.js';

export interface BounceListenerOptions {
  host: string;
  port: number;
  domain: string;
  secret: string;
  maxBytes: number;
  /** Stores one report (recordReport bound to its context). */
  record: (r: InboundReport) => Promise<unknown>;
  logger?: { info(o: object, m?: string): void; warn(o: object, m?: string): void };
}

/**
 * The reports one received message leaves (SPEC §12, §19): one per report block and per VERP e-mail it
 * was addressed to; the same function the listener and the corpus test run.
 */
export async function reportsOfMessage(raw: Buffer, ids: number[], domain: string | null): Promise<InboundReport[]> {
  const reports = await parseReportMessage(raw, { bounceDomain: domain });
  const hash = createHash('sha256').update(raw).digest('hex');
  const text = raw.toString('utf8');
  return (ids.length ? ids : [null]).flatMap((id) =>
    reports.map((p, i) => ({
      source: 'smtp' as const,
      projectId: null,
      kind: p.kind,
      statusCode: p.statusCode,
      diagnostic: p.diagnostic,
      recipient: p.recipient,
      verpEmailId: id,
      messageId: p.messageId,
      ...(p.ofSeveral ? { ofSeveral: true } : {}),
      dedupeKey: `${hash}:${id ?? 0}:${i}`,
      raw: text,
    })),
  );
}

function fallbackReports(raw: Buffer, ids: number[], err: unknown): InboundReport[] {
  const hash = createHash('sha256').update(raw).digest('hex');
  return (ids.length ? ids : [null]).map((id) => ({
    source: 'smtp' as const,
    projectId: null,
    kind: 'unparsed' as const,
    statusCode: null,
    diagnostic: `could not be stored as read: ${String((err as Error)?.message ?? err).slice(0, 200)}`,
    recipient: null,
    verpEmailId: id,
    dedupeKey: `${hash}:${id ?? 0}:unparsed`,
    // Only what is surely storable: printable ASCII of the head of the message.
    raw: raw
      .subarray(0, 16 * 1024)
      .toString('latin1')
      .replace(/[^\t\n\r\x20-\x7e]/g, '?'),
  }));
}

export interface BounceListener {
  port: number;
  close(): Promise<void>;
}

const smtpError = (message: string, responseCode: number) => Object.assign(new Error(message), { responseCode });

export async function startBounceListener(o: BounceListenerOptions): Promise<BounceListener> {
  const log = o.logger;
  const verpIds = (session: SMTPServerSession) =>
    session.envelope.rcptTo
      .map((a) => parseVerpAddress(a.address, o.secret, o.domain))
      .filter((id): id is number => id !== null);

  const server = new SMTPServer({
    name: o.domain,
    banner: 'bounce receiver',
    // Receives from other MTAs only: no accounts to log in to, and no certificate of its own (a sending
    // MTA falls back to plain SMTP; what it carries is a report about mail we sent, not a secret).
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    size: o.maxBytes,
    maxClients: 50,
    socketTimeout: 60_000,
    logger: false,
    onRcptTo(address, _session, cb) {
      if (parseVerpAddress(address.address, o.secret, o.domain) === null) {
        return cb(smtpError('5.1.1 No such recipient here: this server only takes reports for its own mail', 550));
      }
      cb();
    },
    onData(stream: SMTPServerDataStream, session, cb) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= o.maxBytes) chunks.push(c);
      });
      stream.on('end', () => {
        if (stream.sizeExceeded) return cb(smtpError('5.3.4 Message too big for a report', 552));
        const raw = Buffer.concat(chunks);
        void receive(raw, verpIds(session)).then(
          () => cb(),
          (err: unknown) => {
            log?.warn({ err }, 'could not store a bounce report; the sender will retry');
            cb(smtpError('4.3.0 Could not store the report now, try again later', 451));
          },
        );
      });
    },
  });

  async function receive(raw: Buffer, ids: number[]) {
    const reports = await reportsOfMessage(raw, ids, o.domain);
    try {
      for (const r of reports) await o.record(r);
    } catch (err) {
      // The database away: the sender's "try again later" (451) is the whole answer.
      if (isDatabaseUnavailable(err)) throw err;
      // Something in the message itself may be what the database refused: keep it as one unparsed
      // report instead of answering 451 (the sender would retry the same message for days). Only if
      // that fails too (the database is down) does the sender hear "try again later".
      log?.warn({ err }, 'a bounce report could not be stored as read; keeping it unparsed');
      for (const r of fallbackReports(raw, ids, err)) await o.record(r);
    }
    log?.info({ email_ids: ids, kinds: reports.map((r) => r.kind) }, 'bounce report received');
  }

  server.on('error', (err) => log?.warn({ err }, 'bounce listener error'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
