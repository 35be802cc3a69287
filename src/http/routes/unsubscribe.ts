// One-click unsubscribe (SPEC §4, RFC 8058). GET shows a confirmation page with a button and changes
// nothing (mail scanners and link previews follow GET links); POST unsubscribes at once, which is what
// mail clients send for `List-Unsubscribe-Post: List-Unsubscribe=One-Click`. No login: the signed token
// in the path is the authorisation.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../db/index.js';
import type { ContactRow } from '../../db/schema.js';
import type { Clock } from '../../delivery/clock.js';
import { resolveLinkToken, unsubscribeContact } from '../../delivery/unsubscribe.js';
import { listTopics, readTopicStanding } from '../../repos/consent.js';
import { findProjectById } from '../../repos/projects.js';

export interface UnsubscribeRouteOptions {
  db: Db;
  secret: string;
  clock: Clock;
}

export const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** j***@example.org: enough for the person to recognise the address, little for anyone else. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

/**
 * A name in «ёлочках» after «от отправителя» (issue 37: «от Педагогические курсы «Развитие»» had no
 * genitive and nested quotes): quotes inside the name become „лапки“, as Russian typography nests them.
 */
const quotedRu = (name: string) => `«${name.replace(/«/g, '„').replace(/»/g, '“')}»`;

/** The page's words in the project's language (a person who clicks in a Russian e-mail reads Russian). */
const WORDS = {
  ru: {
    done: 'Вы отписались',
    ask: 'Отписка',
    button: 'Отписаться',
    topic: (title: string) => `письма «${title}»`,
    all: 'напоминания и рассылки',
    site: 'этого сайта',
    sender: (name: string) => `отправителя ${quotedRu(name)}`,
    left: (who: string, what: string, from: string) => `${who} больше не получает ${what} от ${from}.`,
    willLeave: (who: string, what: string, from: string) => `${who} больше не будет получать ${what} от ${from}.`,
    question: (what: string, from: string, who: string) =>
      `Больше не присылать ${what} от <strong>${from}</strong> на адрес ${who}?`,
    still: 'Письма о ваших заказах, курсах и документах будут приходить как прежде.',
  },
  en: {
    done: 'You are unsubscribed',
    ask: 'Unsubscribe',
    button: 'Unsubscribe',
    topic: (title: string) => `«${title}» e-mails`,
    all: 'reminder and newsletter e-mails',
    site: 'this site',
    sender: (name: string) => name,
    left: (who: string, what: string, from: string) => `${who} no longer receives ${what} from ${from}.`,
    willLeave: (who: string, what: string, from: string) => `${who} will no longer receive ${what} from ${from}.`,
    question: (what: string, from: string, who: string) => `Stop ${what} from <strong>${from}</strong> to ${who}?`,
    still: 'E-mails about your own orders, courses and documents will still arrive.',
  },
};
type Lang = keyof typeof WORDS;

function page(lang: Lang, title: string, body: string): string {
  return `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${esc(title)}</title></head>
<body style="margin:0;background:#f4f5f7;font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1f2933">
<main style="max-width:28rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.12)">
<h1 style="font-size:1.3rem;margin:0 0 1rem">${esc(title)}</h1>
${body}
</main></body></html>`;
}

export function send(reply: FastifyReply, status: number, html: string) {
  return (
    reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      // The token is in the URL: never hand it to another site.
      .header('referrer-policy', 'no-referrer')
      .header('x-robots-tag', 'noindex')
      .header(
        'content-security-policy',
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      )
      .send(html)
  );
}

// No project is known for a bad link: both languages.
const invalidPage = () =>
  page(
    'ru',
    'Ссылка недействительна · Link not valid',
    '<p style="margin:0">Эта ссылка для отписки недействительна. Воспользуйтесь ссылкой из недавнего письма.</p>' +
      '<p lang="en" style="margin:1rem 0 0">This unsubscribe link is not valid. Please use the link from a recent e-mail.</p>',
  );

/** How a POST came: a mail client's RFC 8058 one-click body, or the confirmation page's button. */
const sourceOf = (body: unknown) =>
  (body as Record<string, string> | undefined)?.['List-Unsubscribe'] === 'One-Click'
    ? 'list_unsubscribe'
    : 'unsubscribe_link';

export const unsubscribeRoutes: FastifyPluginAsyncTypebox<UnsubscribeRouteOptions> = async (app, opts) => {
  // RFC 8058 clients POST a form body (urlencoded or multipart): only its one-click member matters, to
  // tell a mail client's unsubscribe from a click on the page (the consent record names which).
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded'))
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 16 * 1024 },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
  if (!app.hasContentTypeParser('multipart/form-data'))
    app.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) =>
      done(
        null,
        /name="List-Unsubscribe"\r\n\r\nOne-Click/.test(String(body)) ? { 'List-Unsubscribe': 'One-Click' } : {},
      ),
    );

  const lookup = async (
    token: string,
  ): Promise<{ contact: ContactRow; topic: string | null; projectName: string; what: string; lang: Lang } | null> => {
    const found = await resolveLinkToken(opts.db.db, opts.secret, token);
    if (!found) return null;
    const { contact, topic } = found;
    const project = await findProjectById(opts.db.db, contact.project_id);
    const lang: Lang = project?.locale === 'en' ? 'en' : 'ru';
    const w = WORDS[lang];
    const title = topic ? (await listTopics(opts.db.db, contact.project_id)).find((t) => t.key === topic)?.title : null;
    return {
      contact,
      topic,
      projectName: project ? w.sender(project.name) : w.site,
      what: title ? w.topic(title) : w.all,
      lang,
    };
  };

  const schema = { params: Type.Object({ token: Type.String({ maxLength: 200 }) }), hide: true };

  app.get('/u/:token', { schema }, async (req, reply) => {
    const found = await lookup(req.params.token);
    if (!found) return send(reply, 404, invalidPage());
    const { contact, projectName, what, topic, lang } = found;
    const w = WORDS[lang];
    const left = topic
      ? contact.status !== 'active' ||
        !(await readTopicStanding(opts.db.db, contact.id, contact.project_id, topic)).subscribed
      : contact.status !== 'active';
    if (left) {
      return send(
        reply,
        200,
        page(
          lang,
          w.done,
          `<p style="margin:0">${w.left(esc(maskEmail(contact.email)), esc(what), esc(projectName))}</p>`,
        ),
      );
    }
    const body = `<p style="margin:0 0 1.5rem">${w.question(esc(what), esc(projectName), esc(maskEmail(contact.email)))}
${w.still}</p>
<form method="post" style="margin:0"><button type="submit" style="font:inherit;padding:.6rem 1.2rem;border:0;border-radius:6px;background:#c81e1e;color:#fff;cursor:pointer">${w.button}</button></form>`;
    return send(reply, 200, page(lang, w.ask, body));
  });

  app.post('/u/:token', { schema, bodyLimit: 16 * 1024 }, async (req, reply) => {
    const found = await lookup(req.params.token);
    if (!found) return send(reply, 404, invalidPage());
    const { contact, projectName, what, topic, lang } = found;
    const w = WORDS[lang];
    await unsubscribeContact(opts.db.db, contact, topic, sourceOf(req.body), opts.clock.now(), {
      ip: req.ip,
      user_agent: String(req.headers['user-agent'] ?? '').slice(0, 500) || null,
    });
    req.log.info({ contact_id: contact.id, project_id: contact.project_id, topic }, 'contact unsubscribed by link');
    return send(
      reply,
      200,
      page(
        lang,
        w.done,
        `<p style="margin:0">${w.willLeave(esc(maskEmail(contact.email)), esc(what), esc(projectName))}</p>`,
      ),
    );
  });
};
