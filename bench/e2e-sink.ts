// The end-to-end bench's SMTP sink: accepts and discards every message like postfix's `smtp-sink`, but
// notes when it answered 250 to each recipient, because the figure a site owner cares about is the time
// from the gateway's answer to the relay's 250 (postfix's sink cannot say when it accepted which message).
// Runs as its own process so it never shares an event loop with what it measures.
//   PORT=2525 STATUS_PORT=2526 OUT=/tmp/arrivals.tsv node --import tsx bench/e2e-sink.ts
// GET http://127.0.0.1:STATUS_PORT/?after=<epoch ms> → {"received", "connections", "last": epoch ms of
// the latest 250, "after": how many came after that time}; on SIGTERM it writes
// "<recipient>\t<epoch ms>" lines to OUT and exits.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { SMTPServer } from 'smtp-server';

const arrivals: string[] = [];
const times: number[] = [];
let connections = 0;
const server = new SMTPServer({
  logger: false,
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  size: 1024 * 1024,
  maxClients: 1000,
  onConnect(_session, cb) {
    connections++;
    cb();
  },
  onData(stream, session, cb) {
    stream.on('data', () => {});
    stream.on('end', () => {
      const t = Date.now();
      for (const r of session.envelope.rcptTo) {
        arrivals.push(`${r.address}\t${t}`);
        times.push(t);
      }
      cb(null);
    });
  },
});
const port = Number(process.env.PORT ?? 2525);
// A client that drops its connection (a pool closed at the end of a run) must not end the sink, which
// would lose the arrivals it still has to report.
server.on('error', (err) => console.error(`sink: ${err.message}`));
const status = createServer((req, res) => {
  const after = Number(new URL(req.url ?? '/', 'http://sink').searchParams.get('after') ?? Infinity);
  res.setHeader('content-type', 'application/json');
  res.end(
    JSON.stringify({
      received: times.length,
      connections,
      last: times.length ? times[times.length - 1] : null,
      after: times.filter((t) => t > after).length,
    }),
  );
});
status.listen(Number(process.env.STATUS_PORT ?? 2526), '127.0.0.1');
server.listen(port, '127.0.0.1', () => console.log(`sink listening ${port}`));
const stop = () => {
  if (process.env.OUT) writeFileSync(process.env.OUT, arrivals.join('\n'));
  console.log(`sink received ${arrivals.length}`);
  status.close();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
