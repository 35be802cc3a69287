// The inbound SMTP listener of the bounce domain (SPEC §12). It is the MX target of BOUNCE_DOMAIN and
// nothing else: RCPT is accepted only for signed VERP addresses of that domain (never a relay, never
// mail for anyone else), messages are size-limited, and each message becomes reports through the one
// recording path (services/bounces.ts).
import { createHash } from 'node:crypto';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { parseVerpAddress } from '../delivery/verp.js';
import type { InboundReport } from '../services/bounces.js';
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
    const reports = await parseReportMessage(raw, { bounceDomain: o.domain });
    const hash = createHash('sha256').update(raw).digest('hex');
    const text = raw.toString('utf8');
    for (const id of ids.length ? ids : [null]) {
      for (const [i, p] of reports.entries()) {
        await o.record({
          source: 'smtp',
          projectId: null,
          kind: p.kind,
          statusCode: p.statusCode,
          diagnostic: p.diagnostic,
          recipient: p.recipient,
          verpEmailId: id,
          messageId: p.messageId,
          dedupeKey: `${hash}:${id ?? 0}:${i}`,
          raw: text,
        });
      }
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
