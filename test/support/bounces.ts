// Sample bounce and complaint messages (test/fixtures/bounces), with the e-mail's VERP address,
// recipient and Message-ID filled in, in CRLF as they travel over SMTP.
import { readFileSync } from 'node:fs';

export function bounceFixture(name: string, vars: Record<string, string>): Buffer {
  let text = readFileSync(new URL(`../fixtures/bounces/${name}`, import.meta.url), 'utf8');
  for (const [k, v] of Object.entries(vars)) text = text.replaceAll(`{{${k}}}`, v);
  return Buffer.from(text.replace(/\r?\n/g, '\r\n'));
}
