// Issue 38: the message bytes written synchronously (src/delivery/mimeBytes.ts) are exactly the bytes
// nodemailer's MimeNode.build() streams for the same tree: every gallery template and layout as the body,
// Cyrillic and emoji (base64), long ASCII lines and trailing spaces (quoted-printable), short ASCII
// (7bit), an empty text part, encoded header words, a VERP envelope; and a tree it does not handle is
// left to nodemailer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEMO_LAYOUT, templateGallery } from '../src/services/demoTemplates.js';
import { defaultLayout } from '../src/domain/defaultLayout.js';
import { mimeBytes } from '../src/delivery/mimeBytes.js';
import { composeNode, type OutgoingMessage } from '../src/delivery/transports.js';

function message(over: Partial<OutgoingMessage>): OutgoingMessage {
  return {
    from: { name: 'Школа «Знание»', address: 'noreply@school.example' },
    to: { name: 'Анна Иванова', address: 'anna@example.org' },
    subject: 'Ваш заказ № S-1 оплачен',
    html: '<p>Здравствуйте!</p>',
    text: 'Здравствуйте!',
    headers: {
      'List-Unsubscribe': '<https://gw.example/u/abc>, <mailto:u@gw.example>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'X-Школа': 'значение',
    },
    messageId: '<email-1.site.ab12cd34@school.example>',
    ...over,
  };
}

async function same(msg: OutgoingMessage, label: string): Promise<void> {
  const node = composeNode(msg);
  const ours = mimeBytes(node);
  assert.ok(ours, `${label}: handled`);
  const theirs = await node.build();
  assert.equal(ours.toString('latin1'), theirs.toString('latin1'), label);
}

test('the synchronous bytes equal MimeNode.build() for every gallery template and layout', async () => {
  const layouts = [DEMO_LAYOUT, defaultLayout('ru'), defaultLayout('en')];
  for (const t of templateGallery())
    for (const l of layouts) {
      const html = l.html.replace('{{ content }}', t.html);
      const text = l.text.replace('{{ content }}', t.text);
      await same(message({ subject: t.subject, html, text }), `${t.routing_key} in ${l.name}`);
    }
});

test('the synchronous bytes equal MimeNode.build() at every transfer encoding and edge', async () => {
  const long = `${'Read the course page at https://school.example/courses/1 and then '.repeat(6)}end`;
  const cases: [string, Partial<OutgoingMessage>][] = [
    ['cyrillic (base64)', {}],
    ['ascii, long lines (quoted-printable)', { subject: 'Order paid', html: `<p>${long}</p>`, text: long }],
    ['ascii, short (7bit)', { subject: 'Hi', html: '<p>Hi</p>', text: 'Hi', from: { name: 'S', address: 's@x.io' } }],
    ['trailing spaces and tabs', { html: '<p>a  \r\nb\t\r\n</p>   ', text: 'line   \nnext\t' }],
    ['emoji and a lone CR', { html: '<p>🎓 курс</p>\r', text: 'курс 🎓\rx' }],
    ['empty text part', { text: '' }],
    ['html only of ascii', { subject: 'x', html: '<b>x</b>', text: '' }],
    ['envelope (VERP)', { envelopeFrom: 'b+1.abc@bounce.example' }],
    ['long subject', { subject: `${'Очень длинная тема письма '.repeat(8)}конец` }],
    ['exactly 76 characters', { subject: 'x', html: 'a'.repeat(76), text: `${'b'.repeat(75)}=` }],
  ];
  for (const [label, over] of cases) await same(message(over), label);
});

test('a tree with streamed content is left to nodemailer', async () => {
  const { Readable } = await import('node:stream');
  const node = composeNode(message({}));
  node.childNodes[0].setContent(Readable.from(['streamed']));
  assert.equal(mimeBytes(node), null);
});

test('every message has boundaries of its own (drawn in bulk, never repeated)', () => {
  const seen = new Set<string>();
  // More messages than one draw of random bytes serves (1 KiB, 8 bytes a message).
  for (let i = 0; i < 300; i++) {
    const bytes = mimeBytes(composeNode(message({})));
    assert.ok(bytes, 'written synchronously');
    const boundary = /boundary="([^"]+)"/.exec(bytes.toString('latin1'))?.[1];
    assert.ok(boundary, 'a multipart message');
    seen.add(boundary);
  }
  assert.equal(seen.size, 300);
});
