// A small DNS server for tests (SPEC §21): DNS does not resolve outside names on these machines, so the
// TXT lookups of sender-domain and DKIM checks ask this one on loopback (DNS_SERVERS=127.0.0.1:<port>).
import { createSocket, type Socket } from 'node:dgram';

/** A DNS server answering TXT questions from `records` (name → texts); everything else: no answer. */
export async function dnsServer(records: Map<string, string[]>): Promise<{ port: number; close: () => void }> {
  const sock: Socket = createSocket('udp4');
  sock.on('message', (q, peer) => {
    let at = 12;
    const labels: string[] = [];
    while (q[at] !== 0) {
      labels.push(q.subarray(at + 1, at + 1 + q[at]).toString('ascii'));
      at += q[at] + 1;
    }
    const question = q.subarray(12, at + 5);
    const texts = records.get(labels.join('.').toLowerCase()) ?? [];
    const answers = texts.map((t) => {
      const txt = Buffer.concat([Buffer.from([t.length]), Buffer.from(t, 'ascii')]);
      const head = Buffer.alloc(12);
      head.writeUInt16BE(0xc00c, 0);
      head.writeUInt16BE(16, 2);
      head.writeUInt16BE(1, 4);
      head.writeUInt32BE(60, 6);
      head.writeUInt16BE(txt.length, 10);
      return Buffer.concat([head, txt]);
    });
    const header = Buffer.alloc(12);
    q.copy(header, 0, 0, 2);
    header.writeUInt16BE(texts.length ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    sock.send(Buffer.concat([header, question, ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  return { port: sock.address().port, close: () => sock.close() };
}
