// The default layout of a new project (SPEC §22) and the unsubscribe footer added at send time to a
// non-transactional e-mail that shows no way out. Written for phones and Outlook alike: one centred
// table 600 px wide at most, styles inline on each element (Outlook ignores <style>, Gmail drops it),
// system fonts only, no images but the project's own logo. Plain functions over strings, no I/O.
import type { ProjectLocale } from '../db/schema.js';

/** The name a new project's default layout is saved under. */
export const DEFAULT_LAYOUT_NAME = 'default';

interface Words {
  sentBy: string;
  address: string;
  reply: string;
  unsubscribe: string;
  preferences: string;
  why: string;
  regards: string;
  /** The signature, `{{ site_name }}` where the project's name goes. */
  team: string;
}

const WORDS: Record<ProjectLocale, Words> = {
  ru: {
    sentBy: 'Это письмо отправил(а)',
    address: 'Адрес',
    reply: 'Ответить на письмо',
    unsubscribe: 'Отписаться',
    preferences: 'Настроить, какие письма получать',
    why: 'Вы получили это письмо, потому что указали свой адрес на нашем сайте.',
    regards: 'С уважением,',
    team: 'команда «{{ site_name }}»',
  },
  en: {
    sentBy: 'This e-mail was sent by',
    address: 'Address',
    reply: 'Reply to this e-mail',
    unsubscribe: 'Unsubscribe',
    preferences: 'Choose which e-mails you get',
    why: 'You received this e-mail because you gave your address on our website.',
    regards: 'Kind regards,',
    team: 'the {{ site_name }} team',
  },
};

const FONT = 'font-family:Arial,Helvetica,sans-serif';
const LINK = 'color:#1a4d8f;text-decoration:underline';
const SMALL = `${FONT};font-size:12px;line-height:18px;color:#666666`;

/**
 * The layout's HTML and text in the project's language. `preferences_url` is set for every e-mail but a
 * transactional one (delivery/deliver.ts), so it decides whether the unsubscribe lines show.
 */
export function defaultLayout(locale: ProjectLocale): { name: string; html: string; text: string } {
  const w = WORDS[locale];
  const html = `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background-color:#f4f5f7">
<tr><td align="center" style="padding:16px 8px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:600px;background-color:#ffffff;border:1px solid #e3e5e8">
<tr><td style="padding:16px 24px;border-bottom:3px solid #1a4d8f;${FONT};font-size:20px;line-height:26px;font-weight:bold;color:#1a4d8f">{% if project.logo_url %}<img src="{{ project.logo_url }}" alt="{{ site_name }}" height="40" style="display:block;height:40px;width:auto;border:0;margin:0 0 8px 0">{% endif %}{{ site_name }}</td></tr>
<tr><td style="padding:24px;${FONT};font-size:16px;line-height:24px;color:#222222">
{{ content }}
<p style="margin:24px 0 0 0">${w.regards}<br>${w.team}</p>
</td></tr>
<tr><td style="padding:16px 24px;border-top:1px solid #e3e5e8;${SMALL}">
<p style="margin:0 0 6px 0">${w.sentBy} «{{ site_name }}».{% if project.postal_address %} ${w.address}: {{ project.postal_address }}.{% endif %}</p>
{% if project.reply_address %}<p style="margin:0 0 6px 0">${w.reply}: <a href="mailto:{{ project.reply_address }}" style="${LINK}">{{ project.reply_address }}</a></p>{% endif %}
{% if preferences_url %}<p style="margin:0 0 6px 0">${w.why}</p>
<p style="margin:0"><a href="{{ unsubscribe_url }}" style="${LINK}">${w.unsubscribe}</a> · <a href="{{ preferences_url }}" style="${LINK}">${w.preferences}</a></p>{% endif %}
</td></tr>
</table>
</td></tr>
</table>
`;
  const text = `{{ site_name }}

{{ content }}
${w.regards}
${w.team}

--
${w.sentBy} «{{ site_name }}».{% if project.postal_address %}
${w.address}: {{ project.postal_address }}{% endif %}{% if project.reply_address %}
${w.reply}: {{ project.reply_address }}{% endif %}
{% if preferences_url %}
${w.why}
${w.unsubscribe}: {{ unsubscribe_url }}
${w.preferences}: {{ preferences_url }}
{% endif %}`;
  return { name: DEFAULT_LAYOUT_NAME, html, text };
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c]);

export interface FooterInput {
  locale: ProjectLocale;
  siteName: string;
  unsubscribeUrl: string;
  preferencesUrl: string | null;
}

/**
 * A non-transactional e-mail whose template and layout show no unsubscribe link gets this footer
 * (SPEC §22: no advertising e-mail without a visible way out). Checked on the rendered parts, so a link
 * printed by any member counts; the HTML footer goes before `</body>` (the parts are whole documents).
 */
export function withUnsubscribeFooter(
  parts: { subject: string; html: string; text: string },
  f: FooterInput,
): { subject: string; html: string; text: string } {
  const w = WORDS[f.locale];
  const shown = (s: string) => s.includes(f.unsubscribeUrl) || s.includes(esc(f.unsubscribeUrl));
  let { html, text } = parts;
  if (html && !shown(html)) {
    const prefs = f.preferencesUrl ? ` · <a href="${esc(f.preferencesUrl)}" style="${LINK}">${w.preferences}</a>` : '';
    const footer = `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0"><tr><td align="center" style="padding:16px 8px;${SMALL}">${w.sentBy} «${esc(f.siteName)}». <a href="${esc(f.unsubscribeUrl)}" style="${LINK}">${w.unsubscribe}</a>${prefs}</td></tr></table>\n`;
    const at = html.search(/<\/body\s*>/i);
    html = at >= 0 ? html.slice(0, at) + footer + html.slice(at) : html + footer;
  }
  if (text && !shown(text)) {
    text = `${text.replace(/\s*$/, '')}\n\n--\n${w.unsubscribe}: ${f.unsubscribeUrl}\n${f.preferencesUrl ? `${w.preferences}: ${f.preferencesUrl}\n` : ''}`;
  }
  return { ...parts, html, text };
}
