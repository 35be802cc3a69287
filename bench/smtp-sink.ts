// A discard SMTP sink (the equivalent of postfix's `smtp-sink`, for machines without postfix): accepts
// every message and throws it away, counting them. Runs as its own process so it never shares an event
// loop with what it measures. Usage: PORT=2525 node --import tsx bench/smtp-sink.ts
// GET-free: it prints "sink listening <port>" once ready and "sink received <n>" on SIGTERM.
import { SMTPServer } from 'smtp-server';

let received = 0;
const server = new SMTPServer({
  logger: false,
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  size: 1024 * 1024,
  maxClients: 1000,
  onData(stream, _session, cb) {
    stream.on('data', () => {});
    stream.on('end', () => {
      received++;
      cb(null);
    });
  },
});
const port = Number(process.env.PORT ?? 2525);
// A client that drops its connection (a pool closed at the end of a run) must not end the sink, which
// would lose the arrivals it still has to report.
server.on('error', (err) => console.error(`sink: ${err.message}`));
server.listen(port, '127.0.0.1', () => console.log(`sink listening ${port}`));
const stop = () => {
  console.log(`sink received ${received}`);
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
