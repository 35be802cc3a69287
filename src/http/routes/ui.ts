// Serves the admin web UI: one HTML shell for every /ui/ path (the browser-side router picks the page)
// and the static assets under /ui/assets/. Everything is read from src/ui once at start and kept in
// memory with an ETag: a handful of small files, no path ever reaches the file system from a request,
// so there is no traversal to defend against, and nothing is fetched from anywhere else (no CDN).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pickLanguage as pickMessageLanguage, uiErrorModule } from '../../domain/errorCatalog.js';
import { uiNamesModule } from '../../domain/names.js';
import { AppError } from '../../errors.js';
import { sendError } from '../plugins/errors.js';

// src/ui when run from the sources (tsx); from the compiled dist/http/routes/ the UI is still read from
// src/ui (the build compiles TypeScript only; the UI is plain files served as they are).
export const UI_ROOT = [new URL('../../ui/', import.meta.url), new URL('../../../src/ui/', import.meta.url)]
  .map((u) => fileURLToPath(u))
  .find((dir) => existsSync(join(dir, 'index.html')))!;

// The e-mail previews are srcdoc iframes with sandbox="" (no scripts, unique origin); a srcdoc document
// inherits this policy, which is why inline styles (e-mail HTML lives on them) and https images are
// allowed while scripts stay 'self' only and nothing else may be framed, posted to or connected to.
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "manifest-src 'self'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(body: Buffer, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

function load(file: string): Asset {
  return asset(readFileSync(file), TYPES[extname(file)] ?? 'application/octet-stream');
}

/** The UI's languages; the first is the one for browsers that ask for neither. */
export const UI_LANGUAGES = ['en', 'ru'] as const;

type Catalogue = Record<string, string | Record<string, string>>;
const escapeHtml = (v: string) =>
  v.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * The HTML shell in each language of the UI's message catalogue: its {{key}} texts filled in, {{lang}}
 * the language. The page's scripts speak the same language from the first paint on.
 */
async function shells(root: string): Promise<Map<string, Asset>> {
  const source = readFileSync(join(root, 'index.html'), 'utf8');
  const out = new Map<string, Asset>();
  for (const lang of UI_LANGUAGES) {
    const url = pathToFileURL(join(root, 'assets', 'js', 'i18n', `${lang}.js`)).href;
    const catalogue = ((await import(url)) as { default: Catalogue }).default;
    const html = source.replace(/\{\{([\w.]+)\}\}/g, (all, key: string) => {
      const v = key === 'lang' ? lang : catalogue[key];
      if (typeof v !== 'string') throw new Error(`index.html: no "${key}" in the ${lang} catalogue`);
      return escapeHtml(v);
    });
    out.set(lang, asset(Buffer.from(html), TYPES['.html']));
  }
  return out;
}

/** The UI language an Accept-Language header asks for: the same negotiation as the API's `message`. */
export const pickLanguage: (header: string | undefined) => (typeof UI_LANGUAGES)[number] = pickMessageLanguage;

/** Every file under dir, keyed by its path relative to dir with forward slashes. */
function loadTree(dir: string): Map<string, Asset> {
  const out = new Map<string, Asset>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (TYPES[extname(name)]) out.set(relative(dir, full).split(sep).join('/'), load(full));
    }
  };
  walk(dir);
  return out;
}

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cross-origin-resource-policy', 'same-origin');
}

function send(req: FastifyRequest, reply: FastifyReply, asset: Asset) {
  // no-cache = revalidate every time: an upgraded server never runs against stale scripts.
  securityHeaders(reply).header('cache-control', 'no-cache').header('etag', asset.etag);
  if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return reply.type(asset.type).send(asset.body);
}

export const uiRoutes: FastifyPluginAsyncTypebox<{ root?: string }> = async (app, opts) => {
  const root = opts.root ?? UI_ROOT;
  const shell = await shells(root);
  const assets = loadTree(join(root, 'assets'));
  // The error sentences come from the server's one catalogue, not from a copy among the UI's files.
  assets.set('js/i18n/errors.js', asset(Buffer.from(uiErrorModule()), TYPES['.js']));
  // So do the names of codes (issue 37: one dictionary for the API and the UI).
  assets.set('js/i18n/names.js', asset(Buffer.from(uiNamesModule()), TYPES['.js']));
  const hide = { schema: { hide: true } };

  const page = async (req: FastifyRequest, reply: FastifyReply) => {
    const lang = pickLanguage(req.headers['accept-language']);
    reply.header('content-security-policy', UI_CSP).header('vary', 'Accept-Language').header('content-language', lang);
    return send(req, reply, shell.get(lang)!);
  };
  app.get('/', hide, async (_req, reply) => reply.redirect('/ui/', 302));
  app.get('/ui', hide, async (_req, reply) => reply.redirect('/ui/', 301));
  app.get('/ui/', hide, page);
  app.get('/ui/*', hide, page);
  // The first-run link carries its one-time code in the query: its request is not logged (info level).
  app.get('/ui/setup', { ...hide, logLevel: 'warn' }, page);
  app.get<{ Params: { '*': string } }>('/ui/assets/*', hide, async (req, reply) => {
    const asset = assets.get(req.params['*']);
    if (!asset) return sendError(reply, new AppError(404, 'not_found', 'No such asset'));
    return send(req, reply, asset);
  });
};
