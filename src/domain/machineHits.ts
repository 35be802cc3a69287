// People, not machines (SPEC §17): which hits on /c/ and /o/ count in no human figure, and what of the
// client is kept (a User-Agent category and a truncated address, never the User-Agent or the address).
// The rules are listed in docs/decisions.md; keep the two in step.
import { isIP } from 'node:net';

export const UA_CATEGORIES = [
  'browser',
  'mail_client',
  'apple_proxy',
  'google_proxy',
  'yandex_proxy',
  'yahoo_proxy',
  'security_scanner',
  'link_preview',
  'script',
  'empty',
  'other',
] as const;
export type UaCategory = (typeof UA_CATEGORIES)[number];

/** Categories of people's clients; every other category is a machine whatever else is true of a hit. */
const HUMAN_CATEGORIES: readonly UaCategory[] = ['browser', 'mail_client', 'other'];
const MACHINE_CATEGORIES = new Set<UaCategory>(UA_CATEGORIES.filter((c) => !HUMAN_CATEGORIES.includes(c)));

export const MACHINE_REASONS = ['head_request', 'user_agent', 'too_soon'] as const;
export type MachineReason = (typeof MACHINE_REASONS)[number];

// Order matters: the first rule that matches names the category. Sources: the User-Agents the vendors
// document or that ESPs (Postmark, Mailgun, SendGrid) and listmonk/Keila threads report.
const RULES: [RegExp, UaCategory][] = [
  [/GoogleImageProxy|ggpht\.com/i, 'google_proxy'],
  [/YandexImageResizer|YaDirectFetcher|Yandex(?:Bot|Mail)?.*(?:proxy|resizer)/i, 'yandex_proxy'],
  [/YahooMailProxy/i, 'yahoo_proxy'],
  [
    /Barracuda|Mimecast|Proofpoint|ppops|SafeLinks|Safe ?Links|Microsoft[- ]?ATP|BingPreview|Trend ?Micro|Forcepoint|Sophos|Symantec|MessageLabs|IronPort|Cisco|FireEye|Fortinet|FortiGuard|Zscaler|Kaspersky|Avanan|Cloudmark|SpamTitan|Hornet ?Security|Check ?Point|Palo ?Alto|Websense|Bitdefender|urlscan|VirusTotal/i,
    'security_scanner',
  ],
  [
    /facebookexternalhit|Slackbot|Twitterbot|TelegramBot|WhatsApp|Discordbot|SkypeUriPreview|LinkedInBot|vkShare|redditbot|Applebot|Embedly/i,
    'link_preview',
  ],
  [
    /^(?:curl|Wget|python|aiohttp|Go-http-client|Java\/|Apache-HttpClient|okhttp|axios|node-fetch|undici|libwww|lwp|PHP|Guzzle|Ruby|HTTPie|Scrapy|PostmanRuntime|Insomnia)|HeadlessChrome|PhantomJS|Puppeteer|Playwright|Selenium|bot\b|crawler|spider|scanner|preview/i,
    'script',
  ],
  [
    /Thunderbird|Microsoft Outlook|ms-office|MSOffice|Outlook-iOS|Outlook-Android|Airmail|Spark\/|YandexMail|Mail\.Ru/i,
    'mail_client',
  ],
  [/Mozilla\/5\.0 \(|Opera\/|Chrome\/|Safari\/|Firefox\//, 'browser'],
];

/**
 * The User-Agent's category. Apple Mail Privacy Protection fetches every image of every message on
 * delivery through Apple's proxies with the bare `Mozilla/5.0` (no platform in parentheses): that exact
 * string is its mark.
 */
export function uaCategory(userAgent: string | undefined): UaCategory {
  const ua = (userAgent ?? '').trim();
  if (!ua) return 'empty';
  if (ua === 'Mozilla/5.0') return 'apple_proxy';
  for (const [re, cat] of RULES) if (re.test(ua)) return cat;
  return 'other';
}

/** Why a hit is a machine's, or null for a person's. */
export function machineReason(h: {
  method: string;
  category: UaCategory;
  at: number;
  sentAt: number;
  minDelayMs: number;
}): MachineReason | null {
  if (h.method === 'HEAD') return 'head_request';
  if (MACHINE_CATEGORIES.has(h.category)) return 'user_agent';
  // Scanners at the receiving server follow every link within seconds of delivery, people do not.
  if (h.at - h.sentAt < h.minDelayMs) return 'too_soon';
  return null;
}

/** The client's network, not the client: 203.0.113.0/24, 2001:db8:85a3::/48; null when not an address. */
export function truncateIp(address: string | undefined): string | null {
  if (!address) return null;
  let a = address.trim();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped) a = mapped[1];
  const family = isIP(a);
  if (family === 4) return `${a.split('.').slice(0, 3).join('.')}.0/24`;
  if (family !== 6) return null;
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  const [head, tail = ''] = a.split('::');
  const h = head ? head.split(':') : [];
  const t = a.includes('::') && tail ? tail.split(':') : [];
  // An embedded IPv4 tail takes two groups; it never reaches the first three.
  const groups: string[] = [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  const first = groups.slice(0, 3).map((g) => (parseInt(g, 16) || 0).toString(16));
  return `${first.join(':')}::/48`;
}
