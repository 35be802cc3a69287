// The preference page (SPEC §18): `{PUBLIC_URL}/p/{token}`, linked from every non-transactional e-mail.
// No login: the signed link is the credential, dead once the contact is erased. Server-rendered HTML in
// the project's locale and colour, a plain form that works without JavaScript.
//
// CSRF: a POST must carry the form token of a page rendered for this same link (an HMAC of the link and
// the time it was rendered, valid for a few hours), and a browser's Origin / Sec-Fetch-Site must say the
// form was sent from this site. Another site cannot read the token, so it cannot forge the form.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../db/index.js';
import type { ContactRow, Project } from '../../db/schema.js';
import type { Clock } from '../../delivery/clock.js';
import { resolveLinkToken } from '../../delivery/unsubscribe.js';
import { TRANSACTIONAL, type Topic } from '../../domain/consent.js';
import { contactTopicState, listTopics } from '../../repos/consent.js';
import { findContact } from '../../repos/contacts.js';
import { findProjectById } from '../../repos/projects.js';
import { leaveAll, recordChoices } from '../../services/consent.js';
import { esc, maskEmail, send } from './unsubscribe.js';

export interface PreferenceRouteOptions {
  db: Db;
  secret: string;
  clock: Clock;
  publicUrl: string;
}

const FORM_TTL_MS = 6 * 3_600_000;
const DEFAULT_COLOR = '#1d4ed8';

const TEXT = {
  ru: {
    title: 'Настройки писем',
    intro: (project: string, email: string) =>
      `Какие письма от «${project}» получать на адрес ${email}. Отметьте нужные и сохраните.`,
    always: 'Приходят всегда: это письма о ваших заказах, курсах и документах.',
    save: 'Сохранить',
    leaveAll: 'Отписаться от всех рассылок',
    saved: 'Сохранено.',
    left: 'Вы отписаны от всех рассылок. Письма о ваших заказах и документах будут приходить.',
    invalid: 'Ссылка недействительна. Откройте ссылку из недавнего письма.',
    expired: 'Страница устарела. Обновите её и попробуйте ещё раз.',
    legend: 'Рассылки',
  },
  en: {
    title: 'E-mail preferences',
    intro: (project: string, email: string) =>
      `Which e-mails from “${project}” ${email} receives. Tick the ones you want and save.`,
    always: 'Always sent: these are about your own orders, courses and documents.',
    save: 'Save',
    leaveAll: 'Unsubscribe from all mailings',
    saved: 'Saved.',
    left: 'You are unsubscribed from all mailings. E-mails about your orders and documents will still arrive.',
    invalid: 'This link is not valid. Please use the link from a recent e-mail.',
    expired: 'This page is out of date. Reload it and try again.',
    legend: 'Mailings',
  },
} as const;
type Text = (typeof TEXT)[keyof typeof TEXT];

function formToken(secret: string, link: string, at: number): string {
  const mac = createHmac('sha256', secret).update(`preferences-form:${link}:${at}`).digest('base64url');
  return `${at.toString(36)}.${mac}`;
}

function formTokenValid(secret: string, link: string, given: unknown, now: number): boolean {
  if (typeof given !== 'string') return false;
  const m = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(given);
  if (!m) return false;
  const at = parseInt(m[1], 36);
  if (!(at <= now && now - at < FORM_TTL_MS)) return false;
  const want = Buffer.from(formToken(secret, link, at));
  const got = Buffer.from(given);
  return want.length === got.length && timingSafeEqual(want, got);
}

/**
 * A browser says where a form came from; a POST from another site is refused. Sec-Fetch-Site decides
 * when sent. The page's no-referrer policy makes browsers send `Origin: null` for its own form, so a
 * null origin says nothing and the form token alone answers (another site cannot read it).
 */
function sameOrigin(req: FastifyRequest, publicUrl: string): boolean {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin' || site === 'none';
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || origin === 'null') return true;
  const host = req.headers.host;
  try {
    return origin === new URL(publicUrl).origin || (host !== undefined && new URL(origin).host === host);
  } catch {
    return false;
  }
}

function layout(lang: 'ru' | 'en', color: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${esc(title)}</title>
<style>
body{margin:0;background:#f4f5f7;font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1f2933}
main{max-width:32rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.12);border-top:6px solid ${color}}
h1{font-size:1.35rem;margin:0 0 .25rem}.project{margin:0 0 1rem;color:${color};font-weight:600}
fieldset{border:0;padding:0;margin:1rem 0}legend{font-weight:600;margin-bottom:.5rem}
.topic{display:flex;gap:.6rem;align-items:flex-start;padding:.5rem 0;border-bottom:1px solid #e5e7eb}
.topic input{width:1.25rem;height:1.25rem;margin-top:.15rem;accent-color:${color}}
.hint{display:block;color:#52606d;font-size:.9rem}
button{font:inherit;padding:.6rem 1.2rem;border-radius:6px;cursor:pointer;margin:.5rem .5rem 0 0}
.primary{border:0;background:${color};color:#fff}.secondary{border:1px solid #9aa5b1;background:#fff;color:#1f2933}
button:focus-visible,input:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.notice{padding:.6rem .8rem;border-radius:6px;background:#ecfdf5;color:#065f46}
</style></head>
<body><main>${body}</main></body></html>`;
}

interface Found {
  contact: ContactRow;
  project: Project;
  topics: Topic[];
  text: Text;
  lang: 'ru' | 'en';
  color: string;
}

export const preferenceRoutes: FastifyPluginAsyncTypebox<PreferenceRouteOptions> = async (app, opts) => {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16 * 1024 },
    (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  const lookup = async (token: string): Promise<Found | null> => {
    const found = await resolveLinkToken(opts.db.db, opts.secret, token, 'preferences');
    if (!found) return null;
    const project = await findProjectById(opts.db.db, found.contact.project_id);
    if (!project) return null;
    const lang = project.locale === 'en' ? 'en' : 'ru';
    const color = project.brand_color ?? DEFAULT_COLOR;
    return {
      contact: found.contact,
      project,
      topics: await listTopics(opts.db.db, project.id),
      text: TEXT[lang],
      lang,
      color,
    };
  };

  const render = async (f: Found, token: string, notice: string | null) => {
    const state = await contactTopicState(opts.db.db, f.contact.id);
    const all = f.contact.status === 'unsubscribed';
    const rows = f.topics
      .map((t) => {
        const id = `topic-${t.key}`;
        if (t.key === TRANSACTIONAL)
          return `<div class="topic"><input type="checkbox" id="${id}" checked disabled aria-describedby="${id}-hint">
<label for="${id}">${esc(t.title)}<span class="hint" id="${id}-hint">${esc(f.text.always)}</span></label></div>`;
        const on = !all && (state.subscribed.get(t.key) ?? true);
        return `<div class="topic"><input type="checkbox" id="${id}" name="topic_${t.key}" value="on"${on ? ' checked' : ''}>
<label for="${id}">${esc(t.title)}</label></div>`;
      })
      .join('\n');
    const body = `<h1>${esc(f.text.title)}</h1><p class="project">${esc(f.project.name)}</p>
${notice ? `<p class="notice" role="status">${esc(notice)}</p>` : ''}
<p>${esc(f.text.intro(f.project.name, maskEmail(f.contact.email)))}</p>
<form method="post">
<input type="hidden" name="form_token" value="${formToken(opts.secret, token, opts.clock.now())}">
<fieldset><legend>${esc(f.text.legend)}</legend>
${rows}
</fieldset>
<button type="submit" class="primary" name="action" value="save">${esc(f.text.save)}</button>
<button type="submit" class="secondary" name="action" value="leave_all">${esc(f.text.leaveAll)}</button>
</form>`;
    return layout(f.lang, f.color, f.text.title, body);
  };

  const invalid = () =>
    layout(
      'ru',
      DEFAULT_COLOR,
      TEXT.ru.title,
      `<p>${esc(TEXT.ru.invalid)}</p><p lang="en">${esc(TEXT.en.invalid)}</p>`,
    );
  const params = Type.Object({ token: Type.String({ maxLength: 200 }) });
  const schema = {
    params,
    querystring: Type.Object({ saved: Type.Optional(Type.String({ maxLength: 10 })) }),
    hide: true,
  };

  app.get('/p/:token', { schema }, async (req, reply) => {
    const f = await lookup(req.params.token);
    if (!f) return send(reply, 404, invalid());
    const notice = req.query.saved === 'all' ? f.text.left : req.query.saved ? f.text.saved : null;
    return send(reply, 200, await render(f, req.params.token, notice));
  });

  app.post('/p/:token', { schema: { params, hide: true }, bodyLimit: 16 * 1024 }, async (req, reply) => {
    const token = req.params.token;
    const f = await lookup(token);
    if (!f) return send(reply, 404, invalid());
    const form = (req.body ?? {}) as Record<string, string>;
    if (!sameOrigin(req, opts.publicUrl) || !formTokenValid(opts.secret, token, form.form_token, opts.clock.now()))
      return send(reply, 403, layout(f.lang, f.color, f.text.title, `<p>${esc(f.text.expired)}</p>`));
    const now = opts.clock.now();
    const meta = { ip: req.ip, user_agent: String(req.headers['user-agent'] ?? '').slice(0, 500) || null };
    await opts.db.db.transaction().execute(async (trx) => {
      // Read inside the transaction: the choices are compared with what is stored now.
      const contact = (await findContact(trx, f.contact.id))!;
      if (form.action === 'leave_all') return leaveAll(trx, contact, 'preference_page', now, meta);
      const state = await contactTopicState(trx, contact.id);
      const changes = f.topics
        .filter((t) => t.key !== TRANSACTIONAL)
        .map((t) => ({
          topic: t.key,
          granted: form[`topic_${t.key}`] === 'on',
          was: contact.status !== 'unsubscribed' && (state.subscribed.get(t.key) ?? true),
        }))
        .filter((c) => c.granted !== c.was)
        .map(({ topic, granted }) => ({ topic, granted, ...meta }));
      await recordChoices(trx, contact, changes, 'preference_page', now);
    });
    req.log.info({ contact_id: f.contact.id, project_id: f.project.id }, 'preferences saved');
    // Post/redirect/get: a reload does not send the form again. Relative to this page, so it holds behind
    // a proxy that serves the gateway under a path.
    return reply
      .code(303)
      .header('location', `${token}?saved=${form.action === 'leave_all' ? 'all' : '1'}`)
      .send();
  });
};
